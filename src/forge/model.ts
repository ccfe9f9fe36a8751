// The local forge's records: what one in-memory Gitea-compatible instance holds. Shapes
// only; the operations live in store.ts and the Gitea JSON renderings in gitea-json.ts.

type AccountKind = "user" | "organization";

export interface Account {
  id: number;
  login: string;
  kind: AccountKind;
  createdAt: string;
}

export interface LabelRecord {
  id: number;
  name: string;
  /** Six lower-case hex digits without '#', as Gitea stores and returns them. */
  color: string;
  description: string;
}

export interface CommentRecord {
  id: number;
  author: string;
  body: string;
  createdAt: string;
  updatedAt: string;
}

/** Gitea's review states; only APPROVED, REQUEST_CHANGES and COMMENT are repository state. */
export type ReviewState = "APPROVED" | "REQUEST_CHANGES" | "COMMENT" | "PENDING";

export interface ReviewCommentRecord {
  id: number;
  author: string;
  body: string;
  path: string;
  oldPosition: number;
  newPosition: number;
  createdAt: string;
  updatedAt: string;
}

export interface ReviewRecord {
  id: number;
  author: string;
  state: ReviewState;
  body: string;
  commitId: string;
  comments: ReviewCommentRecord[];
  submittedAt: string;
  updatedAt: string;
}

export interface PullRecord {
  head: string;
  base: string;
  merged: boolean;
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  reviews: ReviewRecord[];
}

/** An issue, or a pull request (`pull` set): both live in one number space per repository. */
/** A reaction (`+1`, `heart`, …) a user gave an issue or pull request. */
export interface ReactionRecord {
  user: string;
  content: string;
  createdAt: string;
}

export interface IssueRecord {
  id: number;
  number: number;
  poster: string;
  title: string;
  body: string;
  state: "open" | "closed";
  labelIds: number[];
  assignees: string[];
  comments: CommentRecord[];
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  pull?: PullRecord;
  /** Reactions, oldest first (data only: no grader reads them). */
  reactions?: ReactionRecord[];
}

export interface RepoRecord {
  id: number;
  owner: string;
  name: string;
  description: string;
  private: boolean;
  defaultBranch: string;
  createdAt: string;
  updatedAt: string;
  labels: LabelRecord[];
  issues: IssueRecord[];
  /** Branch names a pull request may use when the repository has no git backing. */
  branches: Set<string>;
  /** Absolute path of the bare git repository behind the pull requests, when there is one. */
  gitDir?: string;
  /** Commit statuses, oldest first (CI's reports on a commit: `harness ci` sets one). */
  statuses: CommitStatusRecord[];
}

/** One status a client set on a commit (`POST …/statuses/{sha}`). */
export interface CommitStatusRecord {
  id: number;
  sha: string;
  state: "pending" | "success" | "error" | "failure" | "warning" | "skipped";
  context: string;
  description: string;
  targetUrl: string;
  creator: string;
  createdAt: string;
}

export type { WriteLogEntry } from "./contract.js";
