// Tokens live in parallel typed arrays instead of one object per token: a 100k-line program has
// about half a million tokens, and flat arrays keep lexing and parsing linear and allocation-light.
import type { RawDiagnostic } from "./types.js";

export const T = {
  EOF: 0,
  Word: 1,
  String: 2,
  Int: 3,
  Duration: 4,
  /** `@` immediately followed by a range such as `^1.2`; the text after `@` may be empty. */
  Range: 5,
  LBrace: 6,
  RBrace: 7,
  LBracket: 8,
  RBracket: 9,
  Comma: 10,
  Dot: 11,
  Equals: 12,
  /** A malformed literal the lexer already reported; the parser skips it silently. */
  Bad: 13,
} as const;
type TokenKind = (typeof T)[keyof typeof T];

export interface TokenStream {
  text: string;
  /** Number of tokens, the final EOF included. */
  count: number;
  kinds: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  lines: Int32Array;
  columns: Int32Array;
}

const CH_TAB = 9;
const CH_LF = 10;
const CH_CR = 13;
const CH_SPACE = 32;
const CH_QUOTE = 34;
const CH_STAR = 42;
const CH_COMMA = 44;
const CH_MINUS = 45;
const CH_DOT = 46;
const CH_SLASH = 47;
const CH_0 = 48;
const CH_9 = 57;
const CH_EQUALS = 61;
const CH_AT = 64;
const CH_LBRACKET = 91;
const CH_BACKSLASH = 92;
const CH_RBRACKET = 93;
const CH_CARET = 94;
const CH_LBRACE = 123;
const CH_RBRACE = 125;
const CH_TILDE = 126;
const CH_BOM = 0xfeff;

// Character classes for ASCII, as bit flags.
const WORD_START = 1;
const WORD_PART = 2;
const RANGE_PART = 4;
const CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  const digit = c >= CH_0 && c <= CH_9;
  let flags = 0;
  if (letter || c === 95) flags |= WORD_START | WORD_PART;
  if (digit || c === CH_MINUS) flags |= WORD_PART;
  if (letter || digit || c === CH_DOT || c === CH_MINUS || c === 43 /* + */) flags |= RANGE_PART;
  CLASS[c] = flags;
}

function hasClass(code: number, flag: number): boolean {
  return code < 128 && (CLASS[code]! & flag) !== 0;
}

function isDigit(code: number): boolean {
  return code >= CH_0 && code <= CH_9;
}

const PUNCTUATION: Record<number, TokenKind> = {
  [CH_LBRACE]: T.LBrace,
  [CH_RBRACE]: T.RBrace,
  [CH_LBRACKET]: T.LBracket,
  [CH_RBRACKET]: T.RBracket,
  [CH_COMMA]: T.Comma,
  [CH_DOT]: T.Dot,
  [CH_EQUALS]: T.Equals,
};

/** Splits one file into tokens, skipping whitespace and comments; lexical errors go to `diagnostics`. */
export function lex(text: string, file: number, diagnostics: RawDiagnostic[]): TokenStream {
  const n = text.length;
  let capacity = Math.max(64, (n >> 2) + 16);
  let kinds = new Uint8Array(capacity);
  let starts = new Int32Array(capacity);
  let ends = new Int32Array(capacity);
  let lines = new Int32Array(capacity);
  let columns = new Int32Array(capacity);
  let count = 0;
  let line = 1;
  let lineStart = 0;

  const push = (kind: TokenKind, start: number, end: number): void => {
    if (count === capacity) {
      capacity *= 2;
      kinds = grow(kinds, new Uint8Array(capacity));
      starts = grow(starts, new Int32Array(capacity));
      ends = grow(ends, new Int32Array(capacity));
      lines = grow(lines, new Int32Array(capacity));
      columns = grow(columns, new Int32Array(capacity));
    }
    kinds[count] = kind;
    starts[count] = start;
    ends[count] = end;
    lines[count] = line;
    columns[count] = start - lineStart + 1;
    count++;
  };
  const report = (code: string, start: number, end: number, message: string): void => {
    diagnostics.push({
      span: { file, line, column: start - lineStart + 1, endColumn: end - lineStart + 1 },
      code,
      severity: "error",
      message,
    });
  };

  let i = 0;
  if (n > 0 && text.charCodeAt(0) === CH_BOM) {
    // Editors hide a byte-order mark; columns should not count it.
    i = 1;
    lineStart = 1;
  }
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === CH_SPACE || c === CH_TAB || c === CH_CR) {
      i++;
      continue;
    }
    if (c === CH_LF) {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === CH_SLASH) {
      const next = text.charCodeAt(i + 1);
      if (next === CH_SLASH) {
        const newline = text.indexOf("\n", i + 2);
        i = newline === -1 ? n : newline;
        continue;
      }
      if (next === CH_STAR) {
        const close = text.indexOf("*/", i + 2);
        if (close === -1) {
          report("HL1003", i, i + 2, 'unterminated block comment: "/*" is never closed by "*/"');
        }
        const end = close === -1 ? n : close + 2;
        let newline = text.indexOf("\n", i);
        while (newline !== -1 && newline < end) {
          line++;
          lineStart = newline + 1;
          newline = text.indexOf("\n", newline + 1);
        }
        i = end;
        continue;
      }
    }
    const punctuation = PUNCTUATION[c];
    if (punctuation !== undefined) {
      push(punctuation, i, i + 1);
      i++;
      continue;
    }
    if (hasClass(c, WORD_START)) {
      let j = i + 1;
      while (j < n && hasClass(text.charCodeAt(j), WORD_PART)) j++;
      push(T.Word, i, j);
      i = j;
      continue;
    }
    if (c === CH_QUOTE) {
      i = lexString(text, i, push, report);
      continue;
    }
    if (isDigit(c)) {
      i = lexNumber(text, i, push, report);
      continue;
    }
    if (c === CH_AT) {
      let j = i + 1;
      const first = text.charCodeAt(j);
      if (first === CH_CARET || first === CH_TILDE) j++;
      while (j < n && hasClass(text.charCodeAt(j), RANGE_PART)) j++;
      push(T.Range, i, j);
      i = j;
      continue;
    }
    // A run of characters that cannot start any token is reported once.
    let j = i + 1;
    while (j < n && !canStartToken(text.charCodeAt(j))) j++;
    const run = text.slice(i, j);
    report(
      "HL1001",
      i,
      j,
      `unexpected ${j - i === 1 ? "character" : "characters"} ${JSON.stringify(run)}: not part of the .harness syntax`,
    );
    i = j;
  }
  push(T.EOF, n, n);
  return { text, count, kinds, starts, ends, lines, columns };
}

function grow<A extends Uint8Array | Int32Array>(from: A, to: A): A {
  to.set(from);
  return to;
}

function canStartToken(c: number): boolean {
  return (
    c === CH_SPACE ||
    c === CH_TAB ||
    c === CH_CR ||
    c === CH_LF ||
    c === CH_SLASH ||
    c === CH_QUOTE ||
    c === CH_AT ||
    isDigit(c) ||
    hasClass(c, WORD_START) ||
    PUNCTUATION[c] !== undefined
  );
}

type Push = (kind: TokenKind, start: number, end: number) => void;
type Report = (code: string, start: number, end: number, message: string) => void;

// Strings end at the closing quote; a raw line break ends an unterminated string so that one
// missing quote does not swallow the rest of the file.
function lexString(text: string, start: number, push: Push, report: Report): number {
  const n = text.length;
  let j = start + 1;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c === CH_QUOTE) {
      push(T.String, start, j + 1);
      return j + 1;
    }
    if (c === CH_LF || c === CH_CR) break;
    if (c === CH_BACKSLASH) {
      const next = text.charCodeAt(j + 1);
      if (j + 1 >= n || next === CH_LF || next === CH_CR) {
        j++;
        break;
      }
      j += 2;
      continue;
    }
    j++;
  }
  report(
    "HL1002",
    start,
    j,
    'unterminated string: add the closing " before the end of the line (strings cannot span lines; write \\n for a line break)',
  );
  push(T.String, start, j);
  return j;
}

function lexNumber(text: string, start: number, push: Push, report: Report): number {
  const n = text.length;
  let j = start + 1;
  while (j < n && isDigit(text.charCodeAt(j))) j++;
  const next = text.charCodeAt(j);
  if (next === CH_DOT && isDigit(text.charCodeAt(j + 1))) {
    let k = j + 1;
    while (k < n && (isDigit(text.charCodeAt(k)) || text.charCodeAt(k) === CH_DOT)) k++;
    const written = text.slice(start, k);
    const hint =
      written.split(".").length > 2
        ? `a version is a string in double quotes, e.g. version "${written}"`
        : "only whole numbers are allowed (e.g. 24, or a duration such as 1500ms)";
    report("HL1004", start, k, `malformed number ${JSON.stringify(written)}: ${hint}`);
    push(T.Bad, start, k);
    return k;
  }
  if (j < n && hasClass(next, WORD_PART)) {
    let k = j + 1;
    while (k < n && hasClass(text.charCodeAt(k), WORD_PART)) k++;
    const unit = text.slice(j, k);
    if (unit === "ms" || unit === "s" || unit === "m" || unit === "h") {
      push(T.Duration, start, k);
      return k;
    }
    report(
      "HL1004",
      start,
      k,
      `malformed number or duration ${JSON.stringify(text.slice(start, k))}: a duration is digits followed by ms, s, m or h (e.g. 1500ms, 90s, 10m, 24h)`,
    );
    push(T.Bad, start, k);
    return k;
  }
  push(T.Int, start, j);
  return j;
}

/** The value of a string token: quotes removed, escapes `\n \t \r \b \f \v \0` decoded, any other `\x` is `x`. */
export function decodeString(text: string, start: number, end: number): string {
  let out = "";
  let chunkStart = start + 1;
  let j = start + 1;
  while (j < end) {
    const c = text.charCodeAt(j);
    if (c === CH_QUOTE) break;
    if (c === CH_BACKSLASH && j + 1 < end) {
      out += text.slice(chunkStart, j) + decodeEscape(text.charAt(j + 1));
      j += 2;
      chunkStart = j;
      continue;
    }
    j++;
  }
  return out + text.slice(chunkStart, j);
}

function decodeEscape(char: string): string {
  switch (char) {
    case "n":
      return "\n";
    case "t":
      return "\t";
    case "r":
      return "\r";
    case "b":
      return "\b";
    case "f":
      return "\f";
    case "v":
      return "\v";
    case "0":
      return "\0";
    default:
      return char;
  }
}
