// Whether two raw fields are equal once normalized, decided without building the
// normalized copies. Most of a real run's state is unchanged, and allocating a
// normalized copy of every comment of both states would cost more than parsing them.
// Every predicate here is conservative in one direction only: `true` means the
// normalized forms are equal; `false` sends the field to the normalized diff, which
// then decides (and finds nothing if the field was equal after all).
import type { Comment, Review } from "./contract.js";
import { compareStrings, normalizeNameSet, normalizeText } from "./normalize.js";

export function sameText(a: string | undefined, b: string | undefined): boolean {
  const x = a ?? "";
  const y = b ?? "";
  if (x === y) return true;
  if (x.indexOf("\r") === -1 && y.indexOf("\r") === -1) return false;
  return normalizeText(x) === normalizeText(y);
}

export function sameNameSet(
  a: readonly string[] | undefined,
  b: readonly string[] | undefined,
): boolean {
  const x = a ?? [];
  const y = b ?? [];
  return (
    pairwiseSame(x, y, sameString) ||
    // A repeated name makes the lengths differ without making the sets differ.
    pairwiseSame(normalizeNameSet(x), normalizeNameSet(y), sameString)
  );
}

function sameString(x: string, y: string): boolean {
  return x === y;
}

/**
 * Element i of one list equals element i of the other, for every i. A one-to-one
 * pairing of equal elements proves the multisets equal whatever order the lists are in.
 */
function pairwiseSame<T>(x: readonly T[], y: readonly T[], same: (a: T, b: T) => boolean): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (!same(x[i]!, y[i]!)) return false;
  return true;
}

/**
 * A sorted copy of the references, by raw content. Raw order is not always the
 * normalized order (CRLF bodies sort differently), which can only make a pairing fail
 * and send the pair to the full diff; it never makes unequal lists look equal.
 */
function byRawContent<T>(list: readonly T[], compare: (a: T, b: T) => number): T[] {
  return list.length < 2 ? [...list] : [...list].sort(compare);
}

function compareRawComments(a: Comment, b: Comment): number {
  return compareStrings(a.author, b.author) || compareStrings(a.body ?? "", b.body ?? "");
}

function compareRawReviews(a: Review, b: Review): number {
  return (
    compareStrings(a.author, b.author) ||
    compareStrings(a.kind, b.kind) ||
    compareStrings(a.body ?? "", b.body ?? "")
  );
}

/** The length of every author and body together, as normalized (`\r\n` counts one). */
function totalTextLength(comments: readonly Comment[]): number {
  let total = 0;
  for (const comment of comments)
    total += comment.author.length + normalizeText(comment.body).length;
  return total;
}

function sameComment(x: Comment, y: Comment): boolean {
  return x.author === y.author && sameText(x.body, y.body);
}

export function sameComments(
  a: readonly Comment[] | undefined,
  b: readonly Comment[] | undefined,
): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  if (pairwiseSame(x, y, sameComment)) return true;
  // Equal multisets have equal total text; checking that first spares the sort when a
  // comment was really edited, the usual reason the in-order check failed.
  if (totalTextLength(x) !== totalTextLength(y)) return false;
  return pairwiseSame(
    byRawContent(x, compareRawComments),
    byRawContent(y, compareRawComments),
    sameComment,
  );
}

function sameReview(x: Review, y: Review): boolean {
  return (
    x.author === y.author &&
    x.kind === y.kind &&
    sameText(x.body, y.body) &&
    sameComments(x.comments, y.comments)
  );
}

export function sameReviews(
  a: readonly Review[] | undefined,
  b: readonly Review[] | undefined,
): boolean {
  const x = a ?? [];
  const y = b ?? [];
  if (x.length !== y.length) return false;
  return (
    pairwiseSame(x, y, sameReview) ||
    pairwiseSame(byRawContent(x, compareRawReviews), byRawContent(y, compareRawReviews), sameReview)
  );
}
