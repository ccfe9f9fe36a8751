/**
 * Bash command checks. An allowed command string is later run by the host, often through a real
 * shell, so the policy only approves strings whose meaning is the same with or without a shell:
 * words made of plain characters separated by spaces or tabs. Anything a shell could interpret
 * (operators, expansions, quoting, globbing, comments, redirection) is refused outright rather
 * than parsed, because a parser that disagrees with the shell by one character is an escape.
 */

/** Characters that can appear inside an allowed word; a shell gives none of them a meaning here. */
const WORD_CHARACTER = /^[A-Za-z0-9_./:=@%+,-]$/;
const SEPARATOR = /^[ \t]$/;

const CHARACTER_NAMES: Readonly<Record<string, string>> = {
  "\n": "newline",
  "\r": "carriage return",
  ";": "`;` (command separator)",
  "&": "`&` (background / and-list)",
  "|": "`|` (pipe / or-list)",
  "`": "backtick (command substitution)",
  $: "`$` (expansion)",
  "<": "`<` (redirection)",
  ">": "`>` (redirection)",
  "(": "`(` (subshell)",
  ")": "`)` (subshell)",
  "\\": "backslash (escape)",
  "'": "single quote (quoting)",
  '"': "double quote (quoting)",
  "*": "`*` (glob)",
  "?": "`?` (glob)",
  "[": "`[` (glob)",
  "]": "`]` (glob)",
  "{": "`{` (brace expansion)",
  "}": "`}` (brace expansion)",
  "~": "`~` (home expansion)",
  "#": "`#` (comment)",
  "!": "`!` (history expansion / negation)",
};

export type TokenizeResult =
  | { ok: true; argv: string[] }
  | { ok: false; character: string; index: number; description: string };

function describeCharacter(character: string): string {
  const named = CHARACTER_NAMES[character];
  if (named) return named;
  const code = character.codePointAt(0) ?? 0;
  return `character U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * Splits a command string into words without a shell. Fails on the first character that is not
 * a plain word character or a space/tab.
 */
export function tokenizeCommand(command: string): TokenizeResult {
  const argv: string[] = [];
  let word = "";
  let index = 0;
  for (const character of command) {
    if (SEPARATOR.test(character)) {
      if (word !== "") argv.push(word);
      word = "";
    } else if (WORD_CHARACTER.test(character)) {
      word += character;
    } else {
      return { ok: false, character, index, description: describeCharacter(character) };
    }
    index += character.length;
  }
  if (word !== "") argv.push(word);
  return { ok: true, argv };
}

/** True when every word of an argv is made of plain word characters (usable as vocabulary). */
export function isPlainArgv(argv: readonly string[]): boolean {
  return (
    argv.length > 0 &&
    argv.every((w) => w.length > 0 && [...w].every((c) => WORD_CHARACTER.test(c)))
  );
}

/**
 * Splits a command into words the way every POSIX shell does for the small grammar allowed for
 * named programs (`curl`, `tea`): plain words, single-quoted strings (taken literally) and
 * double-quoted strings without `$`, backtick, backslash or `!` (so nothing inside is expanded).
 * Quotes may join into one word (`-H'a'"b"`). Anything else a shell would interpret outside
 * quotes, and every control character anywhere, fails as in `tokenizeCommand`.
 */
export function tokenizeQuotedCommand(command: string): TokenizeResult {
  const argv: string[] = [];
  let word: string | null = null;
  let quote: "'" | '"' | null = null;
  let quoteStart = 0;
  let index = 0;
  for (const character of command) {
    const control = /^[\u0000-\u001f\u007f]$/.test(character);
    if (control && !(quote === null && character === "\t"))
      return { ok: false, character, index, description: describeCharacter(character) };
    if (quote === "'") {
      if (character === "'") quote = null;
      else word += character;
    } else if (quote === '"') {
      if (character === '"') quote = null;
      else if (character === "$" || character === "`" || character === "\\" || character === "!")
        return {
          ok: false,
          character,
          index,
          description: `${describeCharacter(character)} inside double quotes`,
        };
      else word += character;
    } else if (SEPARATOR.test(character)) {
      if (word !== null) argv.push(word);
      word = null;
    } else if (character === "'" || character === '"') {
      quote = character;
      quoteStart = index;
      word ??= "";
    } else if (WORD_CHARACTER.test(character)) {
      word = (word ?? "") + character;
    } else {
      return { ok: false, character, index, description: describeCharacter(character) };
    }
    index += character.length;
  }
  if (quote !== null)
    return {
      ok: false,
      character: quote,
      index: quoteStart,
      description: `an unterminated ${quote === "'" ? "single" : "double"} quote`,
    };
  if (word !== null) argv.push(word);
  return { ok: true, argv };
}

export type CommandCheck =
  | { ok: true; argv: string[] }
  | {
      ok: false;
      rule: "shell-metacharacter" | "command-not-allowed" | "invalid-input";
      reason: string;
    };

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, i) => word === b[i]);
}

function renderVocabulary(vocabulary: readonly (readonly string[])[]): string {
  if (vocabulary.length === 0) return "no commands are allowed in this trial";
  return `allowed: ${vocabulary.map((argv) => argv.join(" ")).join(", ")}`;
}

/**
 * Checks a Bash command string against the vocabulary. The words must equal one allowed argv
 * exactly: extra arguments are refused too, since `npm test -- --inspect` or
 * `git status --short -- ../` can change what a command touches.
 */
export function checkCommand(
  command: string,
  vocabulary: readonly (readonly string[])[],
  programs: readonly string[] = [],
): CommandCheck {
  const first = command.trimStart().split(/[ \t]/, 1)[0] ?? "";
  if (programs.includes(first)) return checkProgramCommand(command, programs);
  const tokens = tokenizeCommand(command);
  if (!tokens.ok) {
    return {
      ok: false,
      rule: "shell-metacharacter",
      reason: `command contains ${tokens.description} at offset ${tokens.index}; shell syntax is not allowed`,
    };
  }
  if (tokens.argv.length === 0) {
    return { ok: false, rule: "invalid-input", reason: "command is empty" };
  }
  if (!vocabulary.some((allowed) => sameArgv(allowed, tokens.argv))) {
    return {
      ok: false,
      rule: "command-not-allowed",
      reason: `\`${tokens.argv.join(" ")}\` is not in the command vocabulary (${renderVocabulary(vocabulary)})`,
    };
  }
  return { ok: true, argv: tokens.argv };
}

/**
 * A command of a named program (`curl …`): any arguments, written as plain words or quoted
 * strings, since a forge request needs JSON bodies and headers. What the program can reach is
 * bounded by the sandbox it runs in (one granted endpoint), not by its arguments.
 */
function checkProgramCommand(command: string, programs: readonly string[]): CommandCheck {
  const tokens = tokenizeQuotedCommand(command);
  if (!tokens.ok)
    return {
      ok: false,
      rule: "shell-metacharacter",
      reason: `command contains ${tokens.description} at offset ${tokens.index}; a ${programs.join("/")} command may use plain words and '…' or "…" quoting, nothing else a shell interprets`,
    };
  return { ok: true, argv: tokens.argv };
}
