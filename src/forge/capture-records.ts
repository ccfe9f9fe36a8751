// What both capture adapters read from their forge, in forge-neutral records, and the one
// function that turns them into a RepoState: texts without nulls or CRLF, colours as
// lower-case '#rrggbb', everything in a stable order, each comment and review on its entity.
import type {
  Comment,
  Issue,
  PullRequest,
  RepoState,
  Review,
  ReviewKind,
} from "../scoring/index.js";
import { CaptureError } from "./capture-http.js";
import { normalizeColor } from "./store.js";

interface RawLabel {
  id?: number;
  name: string;
  color: string;
  description?: string | null;
}

export interface RawIssue {
  id?: number;
  number: number;
  title: string;
  body?: string | null;
  state: "open" | "closed";
  labels: string[];
  assignees: string[];
  createdAt?: string;
  updatedAt?: string;
}

interface RawPull extends RawIssue {
  merged: boolean;
}

export interface RawComment {
  id: number;
  issueNumber: number;
  author: string;
  body?: string | null;
  createdAt?: string;
}

export interface RawReview {
  id: number;
  pullNumber: number;
  author: string;
  kind: ReviewKind;
  body?: string | null;
  createdAt?: string;
  comments: { id: number; author: string; body?: string | null }[];
}

export interface RawCapture {
  labels: RawLabel[];
  issues: RawIssue[];
  pulls: RawPull[];
  comments: RawComment[];
  reviews: RawReview[];
}

/** Text as the state records it: null is "", CRLF and lone CR line ends are LF. */
function cleanText(text: string | null | undefined): string {
  return (text ?? "").replace(/\r\n?/g, "\n");
}

/** Deleted accounts have no user object; both forges show them as a ghost. */
export const GHOST = "ghost";

/** The issue number at the end of an issue or pull request URL (API or web). */
export function numberFromUrl(url: string | null | undefined): number | undefined {
  const match = /\/(\d+)\/?$/.exec(url ?? "");
  return match ? Number(match[1]) : undefined;
}

function byKey<T>(key: (item: T) => string | number) {
  return (a: T, b: T) => {
    const [x, y] = [key(a), key(b)];
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

function chronological<T extends { createdAt?: string; id: number }>(a: T, b: T): number {
  const [x, y] = [a.createdAt ?? "", b.createdAt ?? ""];
  return x < y ? -1 : x > y ? 1 : a.id - b.id;
}

/** Builds the RepoState; throws CaptureError when the records contradict each other. */
export function buildRepoState(raw: RawCapture): RepoState {
  const labelNames = new Map<string, RawLabel>();
  for (const label of raw.labels) {
    const first = labelNames.get(label.name);
    if (first)
      throw new CaptureError(
        "bad-response",
        `label ${JSON.stringify(label.name)} is defined twice (ids ${first.id} and ${label.id}); a RepoState names each label once: rename or delete one`,
      );
    labelNames.set(label.name, label);
  }
  const numbers = new Set<number>();
  for (const entity of [...raw.issues, ...raw.pulls]) {
    if (numbers.has(entity.number))
      throw new CaptureError("bad-response", `number #${entity.number} was returned twice`);
    numbers.add(entity.number);
  }
  const comments = new Map<number, RawComment[]>();
  for (const comment of raw.comments) {
    if (!numbers.has(comment.issueNumber))
      throw new CaptureError(
        "bad-response",
        `comment ${comment.id} belongs to #${comment.issueNumber}, which is neither an issue nor a pull request of the repository`,
      );
    comments.set(comment.issueNumber, [...(comments.get(comment.issueNumber) ?? []), comment]);
  }
  const reviews = new Map<number, RawReview[]>();
  for (const review of raw.reviews)
    reviews.set(review.pullNumber, [...(reviews.get(review.pullNumber) ?? []), review]);

  const entity = (item: RawIssue) => ({
    number: item.number,
    title: cleanText(item.title),
    body: cleanText(item.body),
    labels: [...new Set(item.labels)].sort(),
    assignees: [...new Set(item.assignees)].sort(),
    comments: (comments.get(item.number) ?? []).sort(chronological).map(
      (comment): Comment => ({
        author: comment.author,
        body: cleanText(comment.body),
        id: comment.id,
        ...(comment.createdAt ? { createdAt: comment.createdAt } : {}),
      }),
    ),
    ...(item.id !== undefined ? { id: item.id } : {}),
    ...(item.createdAt ? { createdAt: item.createdAt } : {}),
    ...(item.updatedAt ? { updatedAt: item.updatedAt } : {}),
  });

  return {
    labels: [...raw.labels].sort(byKey((label) => label.name)).map((label) => {
      const color = normalizeColor(label.color);
      if (color === undefined)
        throw new CaptureError(
          "bad-response",
          `label ${JSON.stringify(label.name)} has colour ${JSON.stringify(label.color)}, not a hex colour`,
        );
      return {
        name: label.name,
        color: `#${color}`,
        description: cleanText(label.description),
        ...(label.id !== undefined ? { id: label.id } : {}),
      };
    }),
    issues: [...raw.issues]
      .sort(byKey((item) => item.number))
      .map((item): Issue => ({ ...entity(item), state: item.state })),
    pullRequests: [...raw.pulls].sort(byKey((item) => item.number)).map(
      (item): PullRequest => ({
        ...entity(item),
        state: item.merged ? "merged" : item.state,
        reviews: (reviews.get(item.number) ?? []).sort(chronological).map(
          (review): Review => ({
            author: review.author,
            kind: review.kind,
            body: cleanText(review.body),
            comments: [...review.comments]
              .sort((a, b) => a.id - b.id)
              .map((comment) => ({
                author: comment.author,
                body: cleanText(comment.body),
                id: comment.id,
              })),
            id: review.id,
            ...(review.createdAt ? { createdAt: review.createdAt } : {}),
          }),
        ),
      }),
    ),
  };
}
