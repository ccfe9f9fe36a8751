/**
 * A small JavaScript tokenizer, just precise enough to screen README examples: it tells
 * identifiers from the contents of strings, comments, template text and regular
 * expressions, so `console.log("process finished")` is not mistaken for a use of
 * `process`. It is not a parser; anything it cannot tokenize is reported, and the
 * screen treats that as a rejection.
 */

type TokenKind = "name" | "punct" | "string" | "template" | "number" | "regex";

export interface Token {
  kind: TokenKind;
  /** Identifier name, punctuator, or the (approximately cooked) contents of a string/template chunk. */
  value: string;
  line: number;
  /** An identifier written with `\u` escapes (e.g. `\u0070rocess`). */
  escaped?: boolean;
}

export type TokenizeResult =
  | { ok: true; tokens: Token[] }
  | { ok: false; line: number; message: string };

const ID_START = /[\p{ID_Start}$_\\]/u;
const ID_CONTINUE = /[\p{ID_Continue}$\\]|\u200c|\u200d/u;
const NUMBER =
  /^(?:0[xX][\da-fA-F_]+n?|0[oO][0-7_]+n?|0[bB][01_]+n?|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?n?)/;
const PUNCTUATORS = ["?.", "...", "=>"];

/** Keywords after which a `/` starts a regular expression rather than a division. */
const REGEX_AFTER_KEYWORDS = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

function regexAllowed(tokens: readonly Token[]): boolean {
  const previous = tokens.at(-1);
  if (previous === undefined) return true;
  if (previous.kind === "name") {
    // `obj.return / x` divides: a keyword used as a property name is just a name.
    const before = tokens.at(-2);
    if (before?.kind === "punct" && (before.value === "." || before.value === "?.")) return false;
    return REGEX_AFTER_KEYWORDS.has(previous.value);
  }
  if (previous.kind === "punct") return ![")", "]", "}"].includes(previous.value);
  return false;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
  v: "\v",
  0: "\0",
};

function unescapeIdentifier(raw: string): string {
  return raw.replace(/\\u(?:\{([\da-fA-F]+)\}|([\da-fA-F]{4}))/g, (_, braced, plain) =>
    String.fromCodePoint(Number.parseInt(braced ?? plain, 16)),
  );
}

export function tokenize(source: string): TokenizeResult {
  const tokens: Token[] = [];
  /** One entry per open `{` or `${`; `${` entries resume a template when closed. */
  const braces: ("brace" | "template")[] = [];
  let i = 0;
  let line = 1;
  const fail = (message: string): TokenizeResult => ({ ok: false, line, message });

  // Reads template text from `i` (just after a backtick or a closing `}` of `${`).
  const readTemplateChunk = (): "end" | "expression" | "unterminated" => {
    const startLine = line;
    let value = "";
    while (i < source.length) {
      const ch = source[i]!;
      if (ch === "`") {
        i += 1;
        tokens.push({ kind: "template", value, line: startLine });
        return "end";
      }
      if (ch === "$" && source[i + 1] === "{") {
        i += 2;
        tokens.push({ kind: "template", value, line: startLine });
        braces.push("template");
        return "expression";
      }
      if (ch === "\\") {
        const next = source[i + 1] ?? "";
        value += SIMPLE_ESCAPES[next] ?? next;
        if (next === "\n") line += 1;
        i += 2;
        continue;
      }
      if (ch === "\n") line += 1;
      value += ch;
      i += 1;
    }
    return "unterminated";
  };

  if (source.startsWith("#!")) {
    while (i < source.length && source[i] !== "\n") i += 1;
  }

  while (i < source.length) {
    const ch = source[i]!;
    if (ch === "\n") {
      line += 1;
      i += 1;
      continue;
    }
    if (/\s/.test(ch)) {
      i += 1;
      continue;
    }
    if (ch === "/" && source[i + 1] === "/") {
      while (i < source.length && source[i] !== "\n") i += 1;
      continue;
    }
    if (ch === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      if (end === -1) return fail("unterminated comment");
      for (let k = i; k < end; k += 1) if (source[k] === "\n") line += 1;
      i = end + 2;
      continue;
    }
    if (ch === "'" || ch === '"') {
      const startLine = line;
      let value = "";
      i += 1;
      let closed = false;
      while (i < source.length) {
        const c = source[i]!;
        if (c === ch) {
          closed = true;
          i += 1;
          break;
        }
        if (c === "\n") return fail("unterminated string");
        if (c === "\\") {
          const next = source[i + 1] ?? "";
          if (next === "u" || next === "x") {
            const match = /^\\(?:u\{([\da-fA-F]+)\}|u([\da-fA-F]{4})|x([\da-fA-F]{2}))/.exec(
              source.slice(i),
            );
            if (match) {
              value += String.fromCodePoint(Number.parseInt(match[1] ?? match[2] ?? match[3]!, 16));
              i += match[0].length;
              continue;
            }
          }
          value += SIMPLE_ESCAPES[next] ?? next;
          if (next === "\n") line += 1;
          i += 2;
          continue;
        }
        value += c;
        i += 1;
      }
      if (!closed) return fail("unterminated string");
      tokens.push({ kind: "string", value, line: startLine });
      continue;
    }
    if (ch === "`") {
      i += 1;
      if (readTemplateChunk() === "unterminated") return fail("unterminated template literal");
      continue;
    }
    if (/\d/.test(ch) || (ch === "." && /\d/.test(source[i + 1] ?? ""))) {
      const match = NUMBER.exec(source.slice(i));
      const text = match?.[0] ?? ch;
      tokens.push({ kind: "number", value: text, line });
      i += text.length;
      continue;
    }
    if (ID_START.test(ch)) {
      let raw = "";
      while (i < source.length && ID_CONTINUE.test(source[i]!)) {
        if (source[i] === "\\") {
          const match = /^\\u(?:\{[\da-fA-F]+\}|[\da-fA-F]{4})/.exec(source.slice(i));
          if (!match) return fail("invalid escape in identifier");
          raw += match[0];
          i += match[0].length;
          continue;
        }
        raw += source[i];
        i += 1;
      }
      const escaped = raw.includes("\\");
      tokens.push({
        kind: "name",
        value: escaped ? unescapeIdentifier(raw) : raw,
        line,
        ...(escaped ? { escaped: true } : {}),
      });
      continue;
    }
    if (ch === "/" && regexAllowed(tokens)) {
      const startLine = line;
      let inClass = false;
      let j = i + 1;
      let closed = false;
      while (j < source.length) {
        const c = source[j]!;
        if (c === "\n") break;
        if (c === "\\") {
          j += 2;
          continue;
        }
        if (c === "[") inClass = true;
        else if (c === "]") inClass = false;
        else if (c === "/" && !inClass) {
          closed = true;
          break;
        }
        j += 1;
      }
      if (!closed) return fail("unterminated regular expression");
      const body = source.slice(i + 1, j);
      j += 1;
      while (j < source.length && /[a-z]/i.test(source[j]!)) j += 1;
      tokens.push({ kind: "regex", value: body, line: startLine });
      i = j;
      continue;
    }
    if (ch === "{") {
      braces.push("brace");
      tokens.push({ kind: "punct", value: ch, line });
      i += 1;
      continue;
    }
    if (ch === "}") {
      const open = braces.pop();
      if (open === "template") {
        i += 1;
        if (readTemplateChunk() === "unterminated") return fail("unterminated template literal");
        continue;
      }
      tokens.push({ kind: "punct", value: ch, line });
      i += 1;
      continue;
    }
    const multi = PUNCTUATORS.find((p) => source.startsWith(p, i));
    if (multi !== undefined && !(multi === "?." && /\d/.test(source[i + 2] ?? ""))) {
      tokens.push({ kind: "punct", value: multi, line });
      i += multi.length;
      continue;
    }
    tokens.push({ kind: "punct", value: ch, line });
    i += 1;
  }
  if (braces.includes("template")) return fail("unterminated template literal");
  return { ok: true, tokens };
}
