import type { FactOutcome, MissingFact, ReadCheck, RequiredFact } from "./contract.js";

const SINGLE_QUOTES = /[\u2018\u2019\u201a\u201b]/g;
const DOUBLE_QUOTES = /[\u201c\u201d\u201e\u201f]/g;
/** Invisible format characters (zero-width spaces and joiners, soft hyphens, BOM, bidi marks). */
const FORMAT_CHARACTERS = /\p{Cf}/gu;
/** Markdown emphasis and code markers: `**5** open` states the same fact as `5 open`. */
const MARKDOWN_MARKERS = /[*`]/g;
const WHITESPACE_RUN = /\s+/gu;

/** Curly quotes become straight ones; used on texts and on patterns alike. */
function straightenQuotes(text: string): string {
  return text.replace(SINGLE_QUOTES, "'").replace(DOUBLE_QUOTES, '"');
}

/**
 * The form reports and renderings are compared in: Unicode compatibility composition
 * (NFKC: full-width digits, ligatures, non-breaking spaces…), format characters
 * removed, straight quotes, Markdown `*` and `` ` `` removed, lower case, every run of
 * whitespace one space, no leading or trailing space.
 */
export function normalizeForMatching(text: string): string {
  return straightenQuotes(text.normalize("NFKC").replace(FORMAT_CHARACTERS, ""))
    .replace(MARKDOWN_MARKERS, "")
    .toLowerCase()
    .replace(WHITESPACE_RUN, " ")
    .trim();
}

const WORD_CHARACTER = /^[\p{L}\p{M}\p{N}_]$/u;
const DECIMAL_DIGIT = /^\p{Nd}$/u;
/** Scripts written without spaces between words: a phrase may touch their letters. */
const UNSPACED_SCRIPT =
  /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]$/u;
/** Characters that continue a number when a digit follows them: `5,000`, `1.5`. */
const NUMBER_SEPARATOR = /^[.,]$/;

function codePointAfter(text: string, index: number): string | undefined {
  const code = text.codePointAt(index);
  return code === undefined ? undefined : String.fromCodePoint(code);
}

function codePointBefore(text: string, index: number): string | undefined {
  if (index <= 0) return undefined;
  const low = text.charCodeAt(index - 1);
  if (low >= 0xdc00 && low <= 0xdfff && index >= 2) {
    const high = text.charCodeAt(index - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(index - 2, index);
  }
  return text[index - 1];
}

/** Two adjacent characters belong to one word (so a phrase may not start or end between them). */
function sameWord(a: string, b: string): boolean {
  return (
    WORD_CHARACTER.test(a) &&
    WORD_CHARACTER.test(b) &&
    !UNSPACED_SCRIPT.test(a) &&
    !UNSPACED_SCRIPT.test(b)
  );
}

function isDigit(character: string | undefined): boolean {
  return character !== undefined && DECIMAL_DIGIT.test(character);
}

/**
 * Whether `phrase` may stand on its own at `start` in `text`: it is not glued to a
 * letter, digit or underscore on either side (`#42` is not in `#420`, `5 open` is not
 * in `15 open`, `bug` is not in `debug`), and a number at its edge is not part of a
 * longer number (`5` is not in `5,000` or `1.5`). A phrase that begins or ends with
 * punctuation carries its own boundary on that side (`#42` is found in `PR#42`).
 */
function standsAlone(text: string, phrase: string, start: number): boolean {
  const end = start + phrase.length;
  const first = codePointAfter(phrase, 0)!;
  const last = codePointBefore(phrase, phrase.length)!;
  const before = codePointBefore(text, start);
  const after = codePointAfter(text, end);
  if (before !== undefined && sameWord(before, first)) return false;
  if (after !== undefined && sameWord(last, after)) return false;
  if (
    isDigit(first) &&
    before !== undefined &&
    NUMBER_SEPARATOR.test(before) &&
    isDigit(codePointBefore(text, start - before.length))
  )
    return false;
  if (
    isDigit(last) &&
    after !== undefined &&
    NUMBER_SEPARATOR.test(after) &&
    isDigit(codePointAfter(text, end + after.length))
  )
    return false;
  return true;
}

/**
 * Index of the first whole-phrase occurrence of `phrase` in `text`, or -1. Both must
 * already be in `normalizeForMatching` form.
 */
export function findWholePhrase(text: string, phrase: string): number {
  if (phrase === "") return -1;
  for (let at = text.indexOf(phrase); at !== -1; at = text.indexOf(phrase, at + 1)) {
    if (standsAlone(text, phrase, at)) return at;
  }
  return -1;
}

export type CompiledPattern = { ok: true; regex: RegExp } | { ok: false; message: string };

/**
 * Compiles a fact's `pattern` the way it is matched: Unicode mode, case-insensitive,
 * curly quotes in the pattern straightened like the report's.
 */
export function compileFactPattern(pattern: string): CompiledPattern {
  try {
    return { ok: true, regex: new RegExp(straightenQuotes(pattern), "iu") };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

/**
 * Checks that the agent's final report states every required fact (docs/scoring.md). A fact
 * is present when one of its `anyOf` renderings occurs as a whole phrase in the
 * normalized report, or its `pattern` matches the normalized report. No LLM judges.
 *
 * Throws when a pattern is not a valid regular expression; `validateScoringSpec`
 * reports that with the fact's JSON path.
 */
export function checkReadAnswer(facts: readonly RequiredFact[], report: string): ReadCheck {
  const text = normalizeForMatching(report);
  const outcomes: FactOutcome[] = [];
  const missing: MissingFact[] = [];
  facts.forEach((fact, index) => {
    const outcome = matchFact(fact, index, text);
    outcomes.push(outcome);
    if (!outcome.present)
      missing.push({ index, description: fact.description, message: describeMissing(fact, index) });
  });
  return missing.length === 0
    ? { pass: true, facts: outcomes, report }
    : { pass: false, facts: outcomes, report, missing };
}

function matchFact(fact: RequiredFact, index: number, text: string): FactOutcome {
  for (const rendering of fact.anyOf) {
    if (findWholePhrase(text, normalizeForMatching(rendering)) !== -1)
      return { description: fact.description, present: true, match: { kind: "anyOf", rendering } };
  }
  if (fact.pattern !== undefined) {
    const compiled = compileFactPattern(fact.pattern);
    if (!compiled.ok)
      throw new Error(
        `checkReadAnswer: facts[${index}].pattern is not a valid regular expression (${compiled.message}); validate the spec with validateScoringSpec first`,
      );
    const found = compiled.regex.exec(text);
    if (found !== null)
      return {
        description: fact.description,
        present: true,
        match: { kind: "pattern", text: found[0] },
      };
  }
  return { description: fact.description, present: false };
}

function describeMissing(fact: RequiredFact, index: number): string {
  const sought: string[] = [];
  if (fact.anyOf.length > 0)
    sought.push(
      `none of ${fact.anyOf.map((r) => JSON.stringify(r)).join(", ")} occurs as a whole phrase`,
    );
  if (fact.pattern !== undefined) sought.push(`pattern /${fact.pattern}/ does not match`);
  return `facts[${index}] missing: ${JSON.stringify(fact.description)} (${sought.join("; ")})`;
}
