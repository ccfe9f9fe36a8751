// The fields a capture reads from each forge's responses, validated (zod) so a server that
// answers with something else is reported with the URL and the JSON path instead of
// producing a wrong state. Lenient where the forges are: null users, bodies and arrays.
import { z } from "zod";
import { GHOST, type RawComment, type RawIssue } from "./capture-records.js";

const user = z.object({ login: z.string().min(1) }).nullish();
const text = z.string().nullish();

export const labelResponse = z.object({
  id: z.number().optional(),
  name: z.string().min(1),
  color: z.string(),
  description: text,
});

/** Gitea's labels are objects; GitHub's OpenAPI allows a label to be a bare name. */
const issueLabel = z.union([z.string(), z.object({ name: z.string().nullish() })]);

export const issueResponse = z.object({
  id: z.number().optional(),
  number: z.number().int().positive(),
  title: z.string(),
  body: text,
  state: z.enum(["open", "closed"]),
  labels: z.array(issueLabel).nullish(),
  assignees: z.array(user).nullish(),
  pull_request: z.unknown().optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
});

export const giteaPullResponse = issueResponse.extend({
  merged: z.boolean().nullish(),
  merged_at: z.string().nullish(),
});

export const githubPullResponse = issueResponse.extend({ merged_at: z.string().nullish() });

export const commentResponse = z.object({
  id: z.number(),
  user,
  body: text,
  created_at: z.string().optional(),
  /** GitHub: the issue's API URL (pull requests too). Gitea: the issue's web URL, "" for a pull request. */
  issue_url: text,
  /** Gitea: the pull request's web URL, "" for an issue. */
  pull_request_url: text,
});

export const reviewResponse = z.object({
  id: z.number(),
  user,
  body: text,
  state: z.string(),
  dismissed: z.boolean().nullish(),
  comments_count: z.number().nullish(),
  submitted_at: z.string().nullish(),
});

export const reviewCommentResponse = z.object({
  id: z.number(),
  user,
  body: text,
  pull_request_review_id: z.number().nullish(),
  pull_request_url: text,
});

export type IssueResponse = z.infer<typeof issueResponse>;

function labelNames(labels: IssueResponse["labels"]): string[] {
  return (labels ?? [])
    .map((label) => (typeof label === "string" ? label : (label.name ?? "")))
    .filter((name) => name !== "");
}

function logins(users: IssueResponse["assignees"]): string[] {
  return (users ?? []).map((u) => u?.login).filter((login): login is string => !!login);
}

/** The fields of an issue or pull request both forges send alike, as a capture record. */
export function rawIssue(item: IssueResponse): RawIssue {
  return {
    id: item.id,
    number: item.number,
    title: item.title,
    body: item.body,
    state: item.state,
    labels: labelNames(item.labels),
    assignees: logins(item.assignees),
    createdAt: item.created_at,
    updatedAt: item.updated_at,
  };
}

/** A comment as a capture record, on the issue or pull request numbered `issueNumber`. */
export function rawComment(
  comment: z.infer<typeof commentResponse>,
  issueNumber: number,
): RawComment {
  return {
    id: comment.id,
    issueNumber,
    author: comment.user?.login ?? GHOST,
    body: comment.body,
    ...(comment.created_at ? { createdAt: comment.created_at } : {}),
  };
}
