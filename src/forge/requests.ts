// The request bodies the local forge accepts, as zod schemas (Gitea's *Option structs).
// Unknown fields are dropped, as Gitea's JSON decoding drops them; known fields must have
// the right type, or the request gets Gitea's 422 `{message, url}`.
import { z } from "zod";

const text = z.string().max(65_536, "at most 65536 characters");
// Go clients send "" for an assignee they do not set, and [""] for an empty list split on ",";
// the routes read both as Gitea does (see assigneeList).
const login = z.string().max(100);
const labelRef = z.union([z.number().int(), z.string().min(1).max(200)]);

export const createRepoOption = z.object({
  name: z.string().min(1, "Required").max(100),
  description: text.optional(),
  private: z.boolean().optional(),
  default_branch: z.string().max(255).optional(),
  auto_init: z.boolean().optional(),
});

export const createBranchRepoOption = z.object({
  new_branch_name: z.string().min(1, "Required").max(255),
  old_branch_name: z.string().max(255).optional(),
  old_ref_name: z.string().max(255).optional(),
});

export const createStatusOption = z.object({
  state: z.enum(["pending", "success", "error", "failure", "warning", "skipped"], {
    error: "must be pending, success, error, failure, warning or skipped",
  }),
  context: z.string().max(255).optional(),
  description: z.string().max(1024).optional(),
  target_url: z.string().max(2048).optional(),
});

export const createLabelOption = z.object({
  name: z.string().min(1, "Required").max(200),
  color: z.string().min(1, "Required").max(16),
  description: z.string().max(200).optional(),
  exclusive: z.boolean().optional(),
  is_archived: z.boolean().optional(),
});

export const editLabelOption = z.object({
  name: z.string().min(1).max(200).optional(),
  color: z.string().max(16).optional(),
  description: z.string().max(200).optional(),
  exclusive: z.boolean().optional(),
  is_archived: z.boolean().optional(),
});

const stateOption = z.enum(["open", "closed"], { error: 'expected "open" or "closed"' });

export const createIssueOption = z.object({
  title: z.string().min(1, "Required").max(255),
  body: text.optional(),
  assignee: login.optional(),
  assignees: z.array(login).max(100).optional(),
  labels: z.array(z.number().int()).max(100).optional(),
  closed: z.boolean().optional(),
  milestone: z.number().int().optional(),
  ref: z.string().max(255).optional(),
});

export const editIssueOption = z.object({
  title: z.string().max(255).optional(),
  body: text.nullable().optional(),
  state: stateOption.nullable().optional(),
  assignee: login.nullable().optional(),
  assignees: z.array(login).max(100).nullable().optional(),
  milestone: z.number().int().nullable().optional(),
  ref: z.string().max(255).nullable().optional(),
});

export const issueLabelsOption = z.object({
  labels: z.array(labelRef).max(100).optional(),
});

/** Gitea's default `[ui] REACTIONS`. */
export const ALLOWED_REACTIONS: readonly string[] = [
  "+1",
  "-1",
  "laugh",
  "hooray",
  "confused",
  "heart",
  "rocket",
  "eyes",
];

export const editReactionOption = z.object({
  content: z.string({ error: "Required" }).max(100),
});

export const commentOption = z.object({
  body: text.min(1, "Required"),
});

export const createPullRequestOption = z.object({
  head: z.string().min(1, "Required").max(255),
  base: z.string().min(1, "Required").max(255),
  title: z.string().min(1, "Required").max(255),
  body: text.optional(),
  assignee: login.optional(),
  assignees: z.array(login).max(100).optional(),
  labels: z.array(z.number().int()).max(100).optional(),
  milestone: z.number().int().optional(),
});

export const editPullRequestOption = z.object({
  title: z.string().max(255).optional(),
  body: text.nullable().optional(),
  state: stateOption.nullable().optional(),
  assignee: login.nullable().optional(),
  assignees: z.array(login).max(100).nullable().optional(),
  labels: z.array(z.number().int()).max(100).nullable().optional(),
  base: z.string().max(255).optional(),
  milestone: z.number().int().nullable().optional(),
  allow_maintainer_edit: z.boolean().optional(),
});

const mergeStyles = [
  "merge",
  "rebase",
  "rebase-merge",
  "squash",
  "fast-forward-only",
  "manually-merged",
] as const;

/**
 * Gitea 1.26+ reads `do`, `merge_title_field`, `merge_message_field` and `merge_commit_id`, and
 * still the older `Do`, `MergeTitleField`, `MergeMessageField` and `MergeCommitID` its Go SDK
 * sends (`do`/`Do` are one key to Go's decoder anyway). An empty or absent style is `merge`.
 */
export const mergePullRequestOption = z.object({
  Do: z
    .union([z.enum(mergeStyles), z.literal("")], {
      error: `expected one of ${mergeStyles.join(", ")}`,
    })
    .optional(),
  MergeTitleField: z.string().max(255).optional(),
  MergeMessageField: text.optional(),
  MergeCommitID: z.string().max(64).optional(),
  merge_title_field: z.string().max(255).optional(),
  merge_message_field: text.optional(),
  merge_commit_id: z.string().max(64).optional(),
  delete_branch_after_merge: z.boolean().optional(),
  force_merge: z.boolean().optional(),
  head_commit_id: z.string().max(64).optional(),
  merge_when_checks_succeed: z.boolean().optional(),
});

const reviewEvents = ["APPROVED", "REQUEST_CHANGES", "COMMENT", "PENDING", ""] as const;

export const submitPullReviewOptions = z.object({
  event: z
    .enum(reviewEvents, { error: `expected one of APPROVED, REQUEST_CHANGES, COMMENT, PENDING` })
    .optional(),
  body: text.optional(),
});

export const createPullReviewOptions = z.object({
  event: z
    .enum(reviewEvents, { error: `expected one of APPROVED, REQUEST_CHANGES, COMMENT, PENDING` })
    .optional(),
  body: text.optional(),
  commit_id: z.string().max(64).optional(),
  comments: z
    .array(
      z.object({
        body: text.optional(),
        path: z.string().max(4096).optional(),
        old_position: z.number().int().min(0).optional(),
        new_position: z.number().int().min(0).optional(),
      }),
    )
    .max(100)
    .optional(),
});
