import type {
  Comment,
  Issue,
  Label,
  PullRequest,
  RepoState,
  Review,
} from "../../src/scoring/index.js";

/** Small builders so each test states only what matters to it. */
export function label(name: string, color = "#d73a4a", description?: string): Label {
  return description === undefined ? { name, color } : { name, color, description };
}

export function comment(author: string, body: string): Comment {
  return { author, body };
}

export function issue(number: number, fields: Partial<Issue> = {}): Issue {
  return {
    number,
    title: `Issue ${number}`,
    body: "",
    state: "open",
    labels: [],
    assignees: [],
    comments: [],
    ...fields,
  };
}

export function pullRequest(number: number, fields: Partial<PullRequest> = {}): PullRequest {
  return {
    number,
    title: `Pull request ${number}`,
    body: "",
    state: "open",
    labels: [],
    assignees: [],
    comments: [],
    reviews: [],
    ...fields,
  };
}

export function review(
  author: string,
  kind: Review["kind"],
  body = "",
  comments: Comment[] = [],
): Review {
  return { author, kind, body, comments };
}

export function repo(fields: RepoState = {}): RepoState {
  return { labels: [], issues: [], pullRequests: [], ...fields };
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}
