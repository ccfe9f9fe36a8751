import type {
  Difference,
  DifferenceValue,
  Issue,
  MutationCheck,
  NormalizedComment,
  NormalizedIssue,
  NormalizedLabel,
  NormalizedPullRequest,
  NormalizedReview,
  PullRequest,
  RepoState,
} from "./contract.js";
import { sameComments, sameNameSet, sameReviews, sameText } from "./equivalence.js";
import {
  assertUniqueNumbers,
  byNumber,
  compareComments,
  compareReviews,
  compareStrings,
  normalizeComments,
  normalizeIssue,
  normalizeLabels,
  normalizeNameSet,
  normalizePullRequest,
  normalizeReviews,
  normalizeText,
} from "./normalize.js";

/**
 * Compares the whole repository state after a run with the state the task should end
 * in (docs/scoring.md), under the normalization of `normalizeRepoState`: ids, timestamps,
 * ordering, colour spelling, absent-versus-empty and line endings never matter.
 * The result equals diffing the two normalized states, but fields that are equal are
 * recognised without building normalized copies (equivalence.ts), which keeps the
 * checker cheaper than parsing its input.
 *
 * Throws when a label name or an issue/pull-request number is used twice in one state
 * (`validateRepoState` reports that with a JSON path).
 *
 * A difference is *collateral* when the actual state has something the expected state
 * does not: an extra label definition, issue or pull request, or an extra label,
 * assignee, comment or review on an entity. Everything the expected state asserts and
 * the actual state lacks or contradicts is not collateral (docs/scoring.md explains why
 * the checker cannot tell more without the state before the run).
 *
 * Differences come in a stable order: label definitions by name, then issues, then
 * pull requests by number; within an entity title, body, state, labels, assignees,
 * comments, reviews; within a collection the missing elements, then the unexpected
 * ones, each in canonical order.
 */
export function checkMutation(expected: RepoState, actual: RepoState): MutationCheck {
  const differences: Difference[] = [];
  diffLabelDefinitions(
    normalizeLabels(expected.labels),
    normalizeLabels(actual.labels),
    differences,
  );
  const expectedIssues = sortedByNumber(expected.issues);
  const expectedPullRequests = sortedByNumber(expected.pullRequests);
  const actualIssues = sortedByNumber(actual.issues);
  const actualPullRequests = sortedByNumber(actual.pullRequests);
  assertUniqueNumbers(expectedIssues, expectedPullRequests);
  assertUniqueNumbers(actualIssues, actualPullRequests);
  diffEntities(expectedIssues, actualIssues, "issue", normalizeIssue, differences);
  diffEntities(
    expectedPullRequests,
    actualPullRequests,
    "pull request",
    normalizePullRequest,
    differences,
  );
  return differences.length === 0 ? { pass: true } : { pass: false, differences };
}

/** The list itself when it is already in order (no copy), else a sorted copy. */
function sortedByNumber<T extends { number: number }>(
  list: readonly T[] | undefined,
): readonly T[] {
  if (list === undefined) return [];
  for (let i = 1; i < list.length; i++)
    if (list[i - 1]!.number > list[i]!.number) return [...list].sort(byNumber);
  return list;
}

type EntityKind = "issue" | "pull request";

/**
 * Walks two sorted arrays in step, the linear half of an O(n log n) comparison: elements
 * only in `expected` are missing, elements only in `actual` are unexpected, and equal
 * keys are paired (each expected element pairs with at most one actual element, so
 * repeated comments behave as a multiset).
 */
function walkSorted<T>(
  expected: readonly T[],
  actual: readonly T[],
  compare: (a: T, b: T) => number,
  onMissing: (element: T) => void,
  onUnexpected: (element: T) => void,
  onPair?: (expectedElement: T, actualElement: T) => void,
): void {
  let e = 0;
  let a = 0;
  while (e < expected.length && a < actual.length) {
    const expectedElement = expected[e]!;
    const actualElement = actual[a]!;
    const order = compare(expectedElement, actualElement);
    if (order === 0) {
      onPair?.(expectedElement, actualElement);
      e++;
      a++;
    } else if (order < 0) {
      onMissing(expectedElement);
      e++;
    } else {
      onUnexpected(actualElement);
      a++;
    }
  }
  while (e < expected.length) onMissing(expected[e++]!);
  while (a < actual.length) onUnexpected(actual[a++]!);
}

const COLLATERAL = " (collateral change)";

function missing(path: string, expected: DifferenceValue, message: string): Difference {
  return { path, kind: "missing", collateral: false, expected, message };
}

function unexpected(path: string, actual: DifferenceValue, message: string): Difference {
  return { path, kind: "unexpected", collateral: true, actual, message };
}

function changed(
  path: string,
  expected: DifferenceValue,
  actual: DifferenceValue,
  message: string,
): Difference {
  return { path, kind: "changed", collateral: false, expected, actual, message };
}

function diffLabelDefinitions(
  expected: readonly NormalizedLabel[],
  actual: readonly NormalizedLabel[],
  out: Difference[],
): void {
  walkSorted(
    expected,
    actual,
    (a, b) => compareStrings(a.name, b.name),
    (label) =>
      out.push(
        missing(labelPath(label.name), label, `repository label ${quote(label.name)} missing`),
      ),
    (label) =>
      out.push(
        unexpected(
          labelPath(label.name),
          label,
          `unexpected repository label ${quote(label.name)}${COLLATERAL}`,
        ),
      ),
    (want, got) => {
      const path = labelPath(want.name);
      const who = `repository label ${quote(want.name)}`;
      if (want.color !== got.color)
        out.push(
          changed(
            `${path}.color`,
            want.color,
            got.color,
            `${who}: colour is ${got.color}, expected ${want.color}`,
          ),
        );
      if (want.description !== got.description)
        out.push(
          changed(
            `${path}.description`,
            want.description,
            got.description,
            `${who}: description ${describeTextChange(want.description, got.description)}`,
          ),
        );
    },
  );
}

/**
 * Issues (or pull requests) matched by number. Only entities on one side alone are
 * normalized whole (they are the difference's value).
 */
function diffEntities<R extends Issue | PullRequest>(
  expected: readonly R[],
  actual: readonly R[],
  kind: EntityKind,
  normalize: (entity: R) => NormalizedIssue | NormalizedPullRequest,
  out: Difference[],
): void {
  walkSorted(
    expected,
    actual,
    byNumber,
    (raw) => {
      const entity = normalize(raw);
      out.push(
        missing(
          entityPath(kind, entity.number),
          entity,
          `${kind} #${entity.number} missing (expected ${quote(excerpt(entity.title))})`,
        ),
      );
    },
    (raw) => {
      const entity = normalize(raw);
      out.push(
        unexpected(
          entityPath(kind, entity.number),
          entity,
          `unexpected ${kind} #${entity.number} ${quote(excerpt(entity.title))}${COLLATERAL}`,
        ),
      );
    },
    (want, got) => diffEntity(want, got, kind, out),
  );
}

/**
 * One issue or pull request present on both sides. Each field is compared under the
 * normalization first; only a field that differs is normalized to name its differences.
 */
function diffEntity(
  want: Issue | PullRequest,
  got: Issue | PullRequest,
  kind: EntityKind,
  out: Difference[],
): void {
  const path = entityPath(kind, want.number);
  const who = `${kind} #${want.number}`;
  if (!sameText(want.title, got.title)) {
    const [expected, actual] = [normalizeText(want.title), normalizeText(got.title)];
    out.push(
      changed(
        `${path}.title`,
        expected,
        actual,
        `${who}: title ${describeTextChange(expected, actual)}`,
      ),
    );
  }
  if (!sameText(want.body, got.body)) {
    const [expected, actual] = [normalizeText(want.body), normalizeText(got.body)];
    out.push(
      changed(
        `${path}.body`,
        expected,
        actual,
        `${who}: body ${describeTextChange(expected, actual)}`,
      ),
    );
  }
  if (want.state !== got.state)
    out.push(
      changed(
        `${path}.state`,
        want.state,
        got.state,
        `${who}: state is ${quote(got.state)}, expected ${quote(want.state)}`,
      ),
    );
  if (!sameNameSet(want.labels, got.labels))
    diffCollection(
      normalizeNameSet(want.labels),
      normalizeNameSet(got.labels),
      compareStrings,
      `${path}.labels`,
      (name) => `${who}: label ${quote(name)} missing`,
      (name) => `${who}: unexpected label ${quote(name)}${COLLATERAL}`,
      out,
    );
  if (!sameNameSet(want.assignees, got.assignees))
    diffCollection(
      normalizeNameSet(want.assignees),
      normalizeNameSet(got.assignees),
      compareStrings,
      `${path}.assignees`,
      (user) => `${who}: assignee ${user} missing`,
      (user) => `${who}: unexpected assignee ${user}${COLLATERAL}`,
      out,
    );
  if (!sameComments(want.comments, got.comments))
    diffCollection(
      normalizeComments(want.comments),
      normalizeComments(got.comments),
      compareComments,
      `${path}.comments`,
      (comment) => `${who}: comment by ${comment.author} missing${bodyExcerpt(comment.body)}`,
      (comment) =>
        `${who}: unexpected comment by ${comment.author}${COLLATERAL}${bodyExcerpt(comment.body)}`,
      out,
    );
  const wantReviews = "reviews" in want ? want.reviews : undefined;
  const gotReviews = "reviews" in got ? got.reviews : undefined;
  if (!sameReviews(wantReviews, gotReviews))
    diffCollection(
      normalizeReviews(wantReviews),
      normalizeReviews(gotReviews),
      compareReviews,
      `${path}.reviews`,
      (review) => `${who}: review ${describeReview(review)} missing${bodyExcerpt(review.body)}`,
      (review) =>
        `${who}: unexpected review ${describeReview(review)}${COLLATERAL}${bodyExcerpt(review.body)}`,
      out,
    );
}

/** Set or multiset difference of a sorted collection: all missing elements, then all unexpected ones. */
function diffCollection<T extends DifferenceValue>(
  expected: readonly T[],
  actual: readonly T[],
  compare: (a: T, b: T) => number,
  path: string,
  missingMessage: (element: T) => string,
  unexpectedMessage: (element: T) => string,
  out: Difference[],
): void {
  if (expected.length === 0 && actual.length === 0) return;
  const extra: Difference[] = [];
  walkSorted(
    expected,
    actual,
    compare,
    (element) => out.push(missing(path, element, missingMessage(element))),
    (element) => extra.push(unexpected(path, element, unexpectedMessage(element))),
  );
  for (const difference of extra) out.push(difference);
}

function labelPath(name: string): string {
  return `labels[name=${JSON.stringify(name)}]`;
}

function entityPath(kind: EntityKind, number: number): string {
  return `${kind === "issue" ? "issues" : "pullRequests"}[number=${number}]`;
}

function describeReview(review: NormalizedReview): string {
  const inline = review.comments.length;
  const details =
    inline === 0
      ? review.kind
      : `${review.kind}, ${inline} inline comment${inline === 1 ? "" : "s"}: ${review.comments
          .slice(0, INLINE_SHOWN)
          .map(describeInline)
          .join("; ")}${inline > INLINE_SHOWN ? "; …" : ""}`;
  return `by ${review.author} (${details})`;
}

const INLINE_SHOWN = 3;

function describeInline(comment: NormalizedComment): string {
  return `${comment.author} ${quote(excerpt(comment.body, 30))}`;
}

function bodyExcerpt(body: string): string {
  return body === "" ? "" : `: ${quote(excerpt(body))}`;
}

const EXCERPT_LENGTH = 60;

function quote(text: string): string {
  return JSON.stringify(text);
}

/** At most `limit` UTF-16 units, never cutting a surrogate pair in half. */
function excerpt(text: string, limit = EXCERPT_LENGTH): string {
  if (text.length <= limit) return text;
  let end = limit - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * Short texts are shown whole; long ones from the first character that differs, so a
 * person sees the change instead of two identical beginnings.
 */
function describeTextChange(want: string, got: string): string {
  if (want.length <= EXCERPT_LENGTH && got.length <= EXCERPT_LENGTH)
    return `is ${quote(got)}, expected ${quote(want)}`;
  let at = 0;
  while (at < want.length && at < got.length && want[at] === got[at]) at++;
  // Start on a whole code point.
  if (at > 0 && (isLowSurrogate(want.charCodeAt(at)) || isLowSurrogate(got.charCodeAt(at)))) at--;
  const before = want.slice(0, at);
  const line = before.split("\n").length;
  const column = at - before.lastIndexOf("\n");
  const from = (text: string) =>
    at >= text.length
      ? "(end of text)"
      : quote(`${at > 0 ? "…" : ""}${excerpt(text.slice(at), 40)}`);
  return `differs from line ${line}, column ${column}: ${from(got)}, expected ${from(want)}`;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
