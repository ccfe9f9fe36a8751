// Forge records rendered as Gitea API v1 JSON (modules/structs in Gitea 1.27): field
// names, `null` where Gitea sends null (no assignees, no milestone, not merged), bare-hex
// label colours, HTML URLs in comments' `issue_url`/`pull_request_url`.

import type { ChangedFile, CommitInfo } from "./git.js";
import type {
  Account,
  CommentRecord,
  CommitStatusRecord,
  IssueRecord,
  LabelRecord,
  ReactionRecord,
  RepoRecord,
  ReviewCommentRecord,
  ReviewRecord,
} from "./model.js";
import type { ForgeStore } from "./store.js";

export const GITEA_VERSION = "1.27.1";

/** What every rendering needs: the instance root (with a trailing slash) and the store. */
export interface RenderContext {
  root: string;
  store: ForgeStore;
}

const EPOCH = "1970-01-01T00:00:00Z";

export function userJson(ctx: RenderContext, login: string): Record<string, unknown> {
  const account: Account | undefined = ctx.store.account(login);
  const name = account?.login ?? login;
  return {
    id: account?.id ?? -1,
    login: name,
    login_name: "",
    source_id: 0,
    full_name: "",
    email: `${name.toLowerCase()}@noreply.localhost`,
    avatar_url: `${ctx.root}avatars/${encodeURIComponent(name.toLowerCase())}`,
    html_url: `${ctx.root}${encodeURIComponent(name)}`,
    language: "",
    is_admin: false,
    last_login: EPOCH,
    created: account?.createdAt ?? EPOCH,
    restricted: false,
    active: true,
    prohibit_login: false,
    location: "",
    website: "",
    description: "",
    visibility: "public",
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
    username: name,
  };
}

function repoBase(ctx: RenderContext, repo: RepoRecord): string {
  return `${ctx.root}${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`;
}

function repoApi(ctx: RenderContext, repo: RepoRecord): string {
  return `${ctx.root}api/v1/repos/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}`;
}

export function repositoryJson(ctx: RenderContext, repo: RepoRecord): Record<string, unknown> {
  const html = repoBase(ctx, repo);
  const open = (pull: boolean) =>
    repo.issues.filter((issue) => !!issue.pull === pull && issue.state === "open").length;
  return {
    id: repo.id,
    owner: userJson(ctx, repo.owner),
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    description: repo.description,
    empty: repo.gitDir === undefined,
    private: repo.private,
    fork: false,
    template: false,
    parent: null,
    mirror: false,
    size: 0,
    language: "",
    languages_url: `${repoApi(ctx, repo)}/languages`,
    html_url: html,
    url: repoApi(ctx, repo),
    link: "",
    ssh_url: "",
    clone_url: `${html}.git`,
    original_url: "",
    website: "",
    stars_count: 0,
    forks_count: 0,
    watchers_count: 0,
    open_issues_count: open(false),
    open_pr_counter: open(true),
    release_counter: 0,
    default_branch: repo.defaultBranch,
    archived: false,
    created_at: repo.createdAt,
    updated_at: repo.updatedAt,
    archived_at: EPOCH,
    permissions: { admin: true, push: true, pull: true },
    has_issues: true,
    internal_tracker: {
      enable_time_tracker: false,
      allow_only_contributors_to_track_time: true,
      enable_issue_dependencies: false,
    },
    has_wiki: false,
    has_pull_requests: true,
    has_projects: false,
    has_releases: false,
    has_packages: false,
    has_actions: false,
    ignore_whitespace_conflicts: false,
    allow_merge_commits: true,
    allow_rebase: true,
    allow_rebase_explicit: true,
    allow_squash_merge: true,
    allow_fast_forward_only_merge: true,
    allow_rebase_update: true,
    default_delete_branch_after_merge: false,
    default_merge_style: "merge",
    default_allow_maintainer_edit: false,
    avatar_url: "",
    internal: false,
    mirror_interval: "",
    object_format_name: "sha1",
    mirror_updated: EPOCH,
    repo_transfer: null,
    topics: null,
    licenses: null,
  };
}

export function labelJson(ctx: RenderContext, repo: RepoRecord, label: LabelRecord) {
  return {
    id: label.id,
    name: label.name,
    exclusive: false,
    is_archived: false,
    color: label.color,
    description: label.description,
    url: `${repoApi(ctx, repo)}/labels/${label.id}`,
  };
}

function labelsOf(ctx: RenderContext, repo: RepoRecord, issue: IssueRecord) {
  return issue.labelIds
    .map((id) => repo.labels.find((label) => label.id === id))
    .filter((label): label is LabelRecord => label !== undefined)
    .map((label) => labelJson(ctx, repo, label));
}

/** Gitea renders an empty assignee list as null, and `assignee` as the first one or null. */
function assigneeFields(ctx: RenderContext, issue: IssueRecord) {
  const users = issue.assignees.map((login) => userJson(ctx, login));
  return { assignee: users[0] ?? null, assignees: users.length > 0 ? users : null };
}

function issueHtmlUrl(ctx: RenderContext, repo: RepoRecord, issue: IssueRecord): string {
  return `${repoBase(ctx, repo)}/${issue.pull ? "pulls" : "issues"}/${issue.number}`;
}

export function issueJson(ctx: RenderContext, repo: RepoRecord, issue: IssueRecord) {
  const pull = issue.pull;
  return {
    id: issue.id,
    url: `${repoApi(ctx, repo)}/issues/${issue.number}`,
    html_url: issueHtmlUrl(ctx, repo, issue),
    number: issue.number,
    user: userJson(ctx, issue.poster),
    original_author: "",
    original_author_id: 0,
    title: issue.title,
    body: issue.body,
    ref: "",
    assets: [],
    labels: labelsOf(ctx, repo, issue),
    milestone: null,
    ...assigneeFields(ctx, issue),
    state: issue.state,
    is_locked: false,
    comments: issue.comments.length,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_at: issue.closedAt,
    due_date: null,
    pull_request: pull
      ? {
          merged: pull.merged,
          merged_at: pull.mergedAt,
          draft: false,
          html_url: issueHtmlUrl(ctx, repo, issue),
        }
      : null,
    repository: {
      id: repo.id,
      name: repo.name,
      owner: repo.owner,
      full_name: `${repo.owner}/${repo.name}`,
    },
    pin_order: 0,
  };
}

function branchJson(ctx: RenderContext, repo: RepoRecord, ref: string, sha: string) {
  return {
    label: ref,
    ref,
    sha,
    repo_id: repo.id,
    repo: repositoryJson(ctx, repo),
  };
}

export interface PullShas {
  head: string;
  base: string;
}

export function pullJson(
  ctx: RenderContext,
  repo: RepoRecord,
  issue: IssueRecord,
  shas: PullShas = { head: "", base: "" },
) {
  const pull = issue.pull!;
  const html = issueHtmlUrl(ctx, repo, issue);
  return {
    id: issue.id,
    url: html,
    number: issue.number,
    user: userJson(ctx, issue.poster),
    title: issue.title,
    body: issue.body,
    labels: labelsOf(ctx, repo, issue),
    milestone: null,
    ...assigneeFields(ctx, issue),
    requested_reviewers: [],
    requested_reviewers_teams: [],
    state: issue.state,
    draft: false,
    is_locked: false,
    comments: issue.comments.length,
    review_comments: pull.reviews.reduce((n, review) => n + review.comments.length, 0),
    additions: 0,
    deletions: 0,
    changed_files: 0,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    mergeable: !pull.merged && issue.state === "open",
    merged: pull.merged,
    merged_at: pull.mergedAt,
    merge_commit_sha: pull.mergeCommitSha,
    merged_by: pull.mergedBy === null ? null : userJson(ctx, pull.mergedBy),
    allow_maintainer_edit: false,
    base: branchJson(ctx, repo, pull.base, shas.base),
    head: branchJson(ctx, repo, pull.head, shas.head),
    merge_base: shas.base,
    due_date: null,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_at: issue.closedAt,
    pin_order: 0,
  };
}

export function commentJson(
  ctx: RenderContext,
  repo: RepoRecord,
  issue: IssueRecord,
  comment: CommentRecord,
) {
  const html = issueHtmlUrl(ctx, repo, issue);
  return {
    id: comment.id,
    html_url: `${html}#issuecomment-${comment.id}`,
    pull_request_url: issue.pull ? html : "",
    issue_url: issue.pull ? "" : html,
    user: userJson(ctx, comment.author),
    original_author: "",
    original_author_id: 0,
    body: comment.body,
    assets: [],
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
  };
}

export function reviewJson(
  ctx: RenderContext,
  repo: RepoRecord,
  issue: IssueRecord,
  review: ReviewRecord,
) {
  const html = issueHtmlUrl(ctx, repo, issue);
  return {
    id: review.id,
    user: userJson(ctx, review.author),
    team: null,
    state: review.state,
    body: review.body,
    commit_id: review.commitId,
    stale: false,
    official: review.state === "APPROVED" || review.state === "REQUEST_CHANGES",
    dismissed: false,
    comments_count: review.comments.length,
    submitted_at: review.submittedAt,
    updated_at: review.updatedAt,
    html_url: `${html}#issuecomment-${review.id}`,
    pull_request_url: html,
  };
}

export function reviewCommentJson(
  ctx: RenderContext,
  repo: RepoRecord,
  issue: IssueRecord,
  review: ReviewRecord,
  comment: ReviewCommentRecord,
) {
  const html = issueHtmlUrl(ctx, repo, issue);
  return {
    id: comment.id,
    body: comment.body,
    user: userJson(ctx, comment.author),
    resolver: null,
    pull_request_review_id: review.id,
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    path: comment.path,
    commit_id: review.commitId,
    original_commit_id: review.commitId,
    diff_hunk: "",
    position: comment.newPosition,
    original_position: comment.oldPosition,
    html_url: `${html}/files#issuecomment-${comment.id}`,
    pull_request_url: html,
  };
}

/** Gitea's error body: `{message, url}` with the API documentation's address. */
export function errorJson(ctx: { root: string }, message: string) {
  return { message, url: `${ctx.root}api/swagger` };
}

/** A file a pull request changes (Gitea's ChangedFile). */
export function changedFileJson(
  ctx: RenderContext,
  repo: RepoRecord,
  headSha: string,
  file: ChangedFile,
) {
  const path = file.filename.split("/").map(encodeURIComponent).join("/");
  return {
    filename: file.filename,
    ...(file.previousFilename === undefined ? {} : { previous_filename: file.previousFilename }),
    status: file.status,
    additions: file.additions,
    deletions: file.deletions,
    changes: file.additions + file.deletions,
    html_url: `${repoBase(ctx, repo)}/src/commit/${headSha}/${path}`,
    contents_url: `${repoApi(ctx, repo)}/contents/${path}?ref=${headSha}`,
    raw_url: `${repoBase(ctx, repo)}/raw/commit/${headSha}/${path}`,
  };
}

/** A commit (Gitea's Commit); its author and committer are no account of the forge's. */
/** A commit status as Gitea answers it (`CommitStatus`). */
export function commitStatusJson(ctx: RenderContext, repo: RepoRecord, status: CommitStatusRecord) {
  return {
    id: status.id,
    status: status.state,
    target_url: status.targetUrl,
    description: status.description,
    url: `${repoApi(ctx, repo)}/statuses/${status.sha}`,
    context: status.context,
    creator: userJson(ctx, status.creator),
    created_at: status.createdAt,
    updated_at: status.createdAt,
  };
}

export function commitJson(ctx: RenderContext, repo: RepoRecord, commit: CommitInfo) {
  const api = repoApi(ctx, repo);
  return {
    url: `${api}/git/commits/${commit.sha}`,
    sha: commit.sha,
    created: commit.committer.date,
    html_url: `${repoBase(ctx, repo)}/commit/${commit.sha}`,
    commit: {
      url: `${api}/git/commits/${commit.sha}`,
      author: commit.author,
      committer: commit.committer,
      message: commit.message,
      tree: {
        url: `${api}/git/trees/${commit.tree}`,
        sha: commit.tree,
        created: commit.committer.date,
      },
      verification: {
        verified: false,
        reason: "gpg.error.not_signed_commit",
        signature: "",
        signer: null,
        payload: "",
      },
    },
    author: null,
    committer: null,
    parents: commit.parents.map((sha) => ({
      url: `${api}/git/commits/${sha}`,
      sha,
      created: commit.committer.date,
    })),
  };
}

/** A reaction to an issue or pull request (Gitea's Reaction). */
export function reactionJson(ctx: RenderContext, reaction: ReactionRecord) {
  return {
    user: userJson(ctx, reaction.user),
    content: reaction.content,
    created_at: reaction.createdAt,
  };
}

/** A file or folder entry at a commit (Gitea's ContentsResponse); `content` only for a file asked for. */
export function contentsJson(
  ctx: RenderContext,
  repo: RepoRecord,
  ref: string,
  entry: {
    name: string;
    path: string;
    type: "file" | "dir" | "symlink" | "submodule";
    sha: string;
    size: number;
    lastCommit: string;
    content?: Buffer;
  },
) {
  const path = entry.path.split("/").map(encodeURIComponent).join("/");
  const self = `${repoApi(ctx, repo)}/contents/${path}?ref=${encodeURIComponent(ref)}`;
  const html = `${repoBase(ctx, repo)}/src/branch/${encodeURIComponent(ref)}/${path}`;
  const gitUrl = `${repoApi(ctx, repo)}/git/${entry.type === "dir" ? "trees" : "blobs"}/${entry.sha}`;
  return {
    name: entry.name,
    path: entry.path,
    sha: entry.sha,
    last_commit_sha: entry.lastCommit,
    type: entry.type,
    size: entry.size,
    encoding: entry.content === undefined ? null : "base64",
    content: entry.content === undefined ? null : entry.content.toString("base64"),
    target: null,
    url: self,
    html_url: html,
    git_url: gitUrl,
    download_url:
      entry.type === "file"
        ? `${repoBase(ctx, repo)}/raw/branch/${encodeURIComponent(ref)}/${path}`
        : null,
    submodule_git_url: null,
    _links: { self, git: gitUrl, html },
  };
}

/** An organization (Gitea's Organization). */
export function organizationJson(ctx: RenderContext, login: string) {
  const account = ctx.store.account(login);
  const name = account?.login ?? login;
  return {
    id: account?.id ?? -1,
    name,
    username: name,
    full_name: "",
    email: "",
    avatar_url: `${ctx.root}avatars/${encodeURIComponent(name.toLowerCase())}`,
    description: "",
    website: "",
    location: "",
    visibility: "public",
    repo_admin_change_team_access: false,
  };
}

/**
 * One entry of an issue's timeline (Gitea's TimelineComment): the forge records comments, and
 * a pull request's submitted reviews, as events; state changes and label edits are not kept.
 */
export function timelineCommentJson(
  ctx: RenderContext,
  repo: RepoRecord,
  issue: IssueRecord,
  comment: CommentRecord,
) {
  const plain = commentJson(ctx, repo, issue, comment);
  return {
    id: plain.id,
    type: "comment",
    html_url: plain.html_url,
    pull_request_url: plain.pull_request_url,
    issue_url: plain.issue_url,
    user: plain.user,
    body: plain.body,
    created_at: plain.created_at,
    updated_at: plain.updated_at,
    old_project_id: 0,
    project_id: 0,
    old_title: "",
    new_title: "",
    old_ref: "",
    new_ref: "",
    ref_action: "",
    ref_commit_sha: "",
    review_id: 0,
    removed_assignee: false,
  };
}
