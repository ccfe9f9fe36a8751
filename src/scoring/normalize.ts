import type {
  Comment,
  Issue,
  Label,
  NormalizedComment,
  NormalizedIssue,
  NormalizedLabel,
  NormalizedPullRequest,
  NormalizedRepoState,
  NormalizedReview,
  PullRequest,
  RepoState,
  Review,
} from "./contract.js";

/**
 * Code-unit order. Deliberately not `localeCompare`: the canonical order must not
 * depend on the machine's locale or ICU version.
 */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function compareComments(a: NormalizedComment, b: NormalizedComment): number {
  return compareStrings(a.author, b.author) || compareStrings(a.body, b.body);
}

/** Reviews are ordered by their whole content; inline comments must already be sorted. */
export function compareReviews(a: NormalizedReview, b: NormalizedReview): number {
  const head =
    compareStrings(a.author, b.author) ||
    compareStrings(a.kind, b.kind) ||
    compareStrings(a.body, b.body);
  if (head !== 0) return head;
  const shared = Math.min(a.comments.length, b.comments.length);
  for (let i = 0; i < shared; i++) {
    const order = compareComments(a.comments[i]!, b.comments[i]!);
    if (order !== 0) return order;
  }
  return a.comments.length - b.comments.length;
}

/** Line endings: forges and editors disagree about `\r\n`; the checker never does. */
export function normalizeText(text: string | undefined): string {
  if (text === undefined) return "";
  return text.indexOf("\r") === -1 ? text : text.replace(/\r\n/g, "\n");
}

/** `D73A4A`, `#D73A4A` and `#d73a4a` are one colour: `#d73a4a`. */
function normalizeColour(colour: string): string {
  const lower = colour.toLowerCase();
  return lower.startsWith("#") ? lower : `#${lower}`;
}

function normalizeLabel(label: Label): NormalizedLabel {
  return {
    name: label.name,
    color: normalizeColour(label.color),
    description: normalizeText(label.description),
  };
}

export function normalizeComments(comments: readonly Comment[] | undefined): NormalizedComment[] {
  if (comments === undefined || comments.length === 0) return [];
  const out: NormalizedComment[] = new Array(comments.length);
  for (let i = 0; i < comments.length; i++) {
    const comment = comments[i]!;
    out[i] = { author: comment.author, body: normalizeText(comment.body) };
  }
  return out.length > 1 ? out.sort(compareComments) : out;
}

function normalizeReview(review: Review): NormalizedReview {
  return {
    author: review.author,
    kind: review.kind,
    body: normalizeText(review.body),
    comments: normalizeComments(review.comments),
  };
}

export function normalizeReviews(reviews: readonly Review[] | undefined): NormalizedReview[] {
  if (reviews === undefined || reviews.length === 0) return [];
  const normalized = reviews.map(normalizeReview);
  return normalized.length > 1 ? normalized.sort(compareReviews) : normalized;
}

/** A sorted set: order and repetition of label names or assignees carry no meaning. */
export function normalizeNameSet(names: readonly string[] | undefined): string[] {
  if (names === undefined || names.length === 0) return [];
  if (names.length === 1) return [names[0]!];
  const sorted = [...names].sort(compareStrings);
  let kept = 1;
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i] !== sorted[kept - 1]) sorted[kept++] = sorted[i]!;
  }
  sorted.length = kept;
  return sorted;
}

export function normalizeIssue(issue: Issue): NormalizedIssue {
  return {
    number: issue.number,
    title: normalizeText(issue.title),
    body: normalizeText(issue.body),
    state: issue.state,
    labels: normalizeNameSet(issue.labels),
    assignees: normalizeNameSet(issue.assignees),
    comments: normalizeComments(issue.comments),
  };
}

export function normalizePullRequest(pullRequest: PullRequest): NormalizedPullRequest {
  return {
    number: pullRequest.number,
    title: normalizeText(pullRequest.title),
    body: normalizeText(pullRequest.body),
    state: pullRequest.state,
    labels: normalizeNameSet(pullRequest.labels),
    assignees: normalizeNameSet(pullRequest.assignees),
    comments: normalizeComments(pullRequest.comments),
    reviews: normalizeReviews(pullRequest.reviews),
  };
}

export const byNumber = (a: { number: number }, b: { number: number }): number =>
  a.number - b.number;
const byName = (a: { name: string }, b: { name: string }) => compareStrings(a.name, b.name);

/**
 * The one normalization everything fed to the checker goes through: label colours
 * lower-case with a leading `#`, absent arrays empty, absent descriptions and bodies
 * `""`, `\r\n` → `\n`, volatile fields (`id`, `createdAt`, `updatedAt`) dropped, and
 * every collection put in a canonical order (labels by name, issues and pull requests
 * by number, label names and assignees sorted and de-duplicated, comments by
 * (author, body), reviews by their whole content). Two states the checker accepts as
 * equal are therefore deep-equal after normalization.
 *
 * Throws when a label name or an issue/pull-request number is used twice: such a state
 * cannot come from a forge, and `validateRepoState` reports it with a JSON path.
 */
export function normalizeRepoState(state: RepoState): NormalizedRepoState {
  const labels = normalizeLabels(state.labels);
  const issues = (state.issues ?? []).map(normalizeIssue).sort(byNumber);
  const pullRequests = (state.pullRequests ?? []).map(normalizePullRequest).sort(byNumber);
  assertUniqueNumbers(issues, pullRequests);
  return { labels, issues, pullRequests };
}

/** Label definitions normalized and sorted by name; a name defined twice throws. */
export function normalizeLabels(labels: readonly Label[] | undefined): NormalizedLabel[] {
  const normalized = (labels ?? []).map(normalizeLabel).sort(byName);
  for (let i = 1; i < normalized.length; i++) {
    if (normalized[i]!.name === normalized[i - 1]!.name)
      throw new Error(
        `label ${JSON.stringify(normalized[i]!.name)} is defined twice (validate the state with validateRepoState first)`,
      );
  }
  return normalized;
}

/**
 * Throws when a number is used twice. Both lists must be sorted by number. Issues and
 * pull requests share one number space on every forge we capture from.
 */
export function assertUniqueNumbers(
  issues: ReadonlyArray<{ number: number }>,
  pullRequests: ReadonlyArray<{ number: number }>,
): void {
  let i = 0;
  let p = 0;
  let previous = Number.NaN;
  while (i < issues.length || p < pullRequests.length) {
    const issue = issues[i];
    const pullRequest = pullRequests[p];
    let current: number;
    if (pullRequest === undefined || (issue !== undefined && issue.number <= pullRequest.number)) {
      current = issue!.number;
      i++;
    } else {
      current = pullRequest.number;
      p++;
    }
    if (current === previous)
      throw new Error(
        `number ${current} is used twice among issues and pull requests (validate the state with validateRepoState first)`,
      );
    previous = current;
  }
}
