// The local forge's state and the operations on it, with Gitea's rules (which user may
// do what, what a change does to timestamps, which numbers and ids are taken). Pure in
// memory and synchronous: the HTTP layer (routes-*.ts) validates requests and renders
// results, git work (git.ts) happens around it.
import type {
  Account,
  CommentRecord,
  IssueRecord,
  LabelRecord,
  PullRecord,
  RepoRecord,
  ReviewCommentRecord,
  ReviewRecord,
  ReviewState,
} from "./model.js";

/** An expected refusal: the HTTP status and message Gitea answers with. */
interface Refusal {
  ok: false;
  status: number;
  message: string;
}
export type Outcome<T> = { ok: true; value: T } | Refusal;

function refuse(status: number, message: string): Refusal {
  return { ok: false, status, message };
}

function ok<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

export const NOT_FOUND = "The target couldn't be found.";

/** Gitea's rule for user, organisation and repository names (`AlphaDashDot`, at most 100). */
const NAME_PATTERN = /^[A-Za-z0-9_.-]{1,100}$/;

export function isValidName(name: string): boolean {
  return NAME_PATTERN.test(name) && name !== "." && name !== ".." && !name.endsWith(".git");
}

/** Normalizes a label colour as Gitea does: `#`, case and 3-digit shorthand are accepted. */
export function normalizeColor(input: string): string | undefined {
  const trimmed = input.trim().toLowerCase().replace(/^#/, "");
  if (/^[0-9a-f]{6}$/.test(trimmed)) return trimmed;
  if (/^[0-9a-f]{3}$/.test(trimmed))
    return [...trimmed].map((digit) => `${digit}${digit}`).join("");
  return undefined;
}

export interface IssueFilter {
  state: "open" | "closed" | "all";
  type?: "issues" | "pulls";
  labels?: string[];
  keyword?: string;
  createdBy?: string;
  assignedTo?: string;
  /** Only issues whose body or a comment mentions this login (`@login`). */
  mentioned?: string;
  /** Only issues updated at or after / at or before these instants (milliseconds). */
  since?: number;
  before?: number;
}

/** Whether `text` mentions `login` as Gitea finds mentions: `@login` not inside a longer name. */
function mentions(text: string, login: string): boolean {
  const escaped = login.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\w@.-])@${escaped}(?![\\w.-]*[\\w-])`, "i").test(text);
}

export interface NewIssue {
  title: string;
  body?: string;
  assignees?: string[];
  labelIds?: number[];
  closed?: boolean;
}

export interface IssueChanges {
  title?: string;
  body?: string;
  state?: "open" | "closed";
  assignees?: string[];
  labelIds?: number[];
}

export interface NewReview {
  state: ReviewState;
  body: string;
  commitId: string;
  comments: { body: string; path: string; oldPosition: number; newPosition: number }[];
}

export type IdKind = "account" | "repo" | "label" | "issue" | "comment" | "review" | "status";

/**
 * One forge instance: accounts, repositories and everything in them. Ids are unique per
 * kind across the instance (as Gitea's table ids are); issue numbers are per repository.
 */
export class ForgeStore {
  private readonly accounts = new Map<string, Account>();
  private readonly members = new Map<string, Set<string>>();
  private readonly repos = new Map<string, RepoRecord>();
  private readonly nextIds: Record<IdKind, number> = {
    account: 1,
    repo: 1,
    label: 1,
    issue: 1,
    comment: 1,
    review: 1,
    status: 1,
  };

  constructor(private readonly clock: () => number) {}

  nextId(kind: IdKind): number {
    return this.nextIds[kind]++;
  }

  /** The current time as Gitea writes it (whole seconds, UTC). */
  now(): string {
    return secondsToStamp(Math.floor(this.clock() / 1000));
  }

  /** A timestamp later than `previous`: `updated_at` moves on every change, even within a second. */
  later(previous: string): string {
    const now = Math.floor(this.clock() / 1000);
    const before = Math.floor(Date.parse(previous) / 1000);
    return secondsToStamp(Number.isFinite(before) && before >= now ? before + 1 : now);
  }

  // -- accounts ---------------------------------------------------------------------------

  addAccount(login: string, kind: Account["kind"]): Account {
    const existing = this.account(login);
    if (existing) return existing;
    const account: Account = { id: this.nextId("account"), login, kind, createdAt: this.now() };
    this.accounts.set(login.toLowerCase(), account);
    return account;
  }

  addMember(org: string, user: string): void {
    const key = org.toLowerCase();
    const set = this.members.get(key) ?? new Set<string>();
    set.add(user.toLowerCase());
    this.members.set(key, set);
  }

  account(login: string): Account | undefined {
    return this.accounts.get(login.toLowerCase());
  }

  user(login: string): Account | undefined {
    const account = this.account(login);
    return account?.kind === "user" ? account : undefined;
  }

  /** The users who may write to repositories owned by `owner`, by login. */
  writers(owner: string): Account[] {
    return [...this.accounts.values()]
      .filter((account) => account.kind === "user" && this.canWriteAs(account.login, owner))
      .sort((a, b) => a.login.localeCompare(b.login));
  }

  /** Whether `actor` may write to repositories owned by `owner` (the owner, or a member of it). */
  canWriteAs(actor: string, owner: string): boolean {
    if (actor.toLowerCase() === owner.toLowerCase()) return true;
    return this.members.get(owner.toLowerCase())?.has(actor.toLowerCase()) ?? false;
  }

  // -- repositories -----------------------------------------------------------------------

  repo(owner: string, name: string): RepoRecord | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  allRepos(): RepoRecord[] {
    return [...this.repos.values()].sort((a, b) => a.id - b.id);
  }

  createRepo(
    owner: string,
    name: string,
    options: { description?: string; private?: boolean; defaultBranch?: string } = {},
  ): Outcome<RepoRecord> {
    const account = this.account(owner);
    if (!account) return refuse(404, NOT_FOUND);
    if (!isValidName(name))
      return refuse(422, "[Name]: must be valid alpha or numeric or dash(-_) or dot characters");
    if (this.repo(owner, name))
      return refuse(409, "The repository with the same name already exists.");
    const at = this.now();
    const defaultBranch = options.defaultBranch || "main";
    const repo: RepoRecord = {
      id: this.nextId("repo"),
      owner: account.login,
      name,
      description: options.description ?? "",
      private: options.private ?? false,
      defaultBranch,
      createdAt: at,
      updatedAt: at,
      labels: [],
      issues: [],
      branches: new Set([defaultBranch]),
      statuses: [],
    };
    this.repos.set(`${account.login}/${name}`.toLowerCase(), repo);
    return ok(repo);
  }

  deleteRepo(repo: RepoRecord): void {
    this.repos.delete(`${repo.owner}/${repo.name}`.toLowerCase());
  }

  // -- labels -----------------------------------------------------------------------------

  labels(repo: RepoRecord): LabelRecord[] {
    return [...repo.labels].sort((a, b) => compare(a.name, b.name) || a.id - b.id);
  }

  label(repo: RepoRecord, id: number): LabelRecord | undefined {
    return repo.labels.find((label) => label.id === id);
  }

  createLabel(
    repo: RepoRecord,
    input: { name: string; color: string; description?: string },
  ): Outcome<LabelRecord> {
    const color = normalizeColor(input.color);
    if (color === undefined) return refuse(422, `bad color code: ${input.color}`);
    if (repo.labels.some((label) => label.name === input.name))
      return refuse(422, `label ${JSON.stringify(input.name)} already exists`);
    const label: LabelRecord = {
      id: this.nextId("label"),
      name: input.name,
      color,
      description: input.description ?? "",
    };
    repo.labels.push(label);
    return ok(label);
  }

  editLabel(
    repo: RepoRecord,
    label: LabelRecord,
    changes: { name?: string; color?: string; description?: string },
  ): Outcome<LabelRecord> {
    let color = label.color;
    if (changes.color !== undefined) {
      const normalized = normalizeColor(changes.color);
      if (normalized === undefined) return refuse(422, `bad color code: ${changes.color}`);
      color = normalized;
    }
    if (
      changes.name !== undefined &&
      changes.name !== label.name &&
      repo.labels.some((other) => other.name === changes.name)
    )
      return refuse(422, `label ${JSON.stringify(changes.name)} already exists`);
    if (changes.name) label.name = changes.name;
    if (changes.description !== undefined) label.description = changes.description;
    label.color = color;
    return ok(label);
  }

  deleteLabel(repo: RepoRecord, label: LabelRecord): void {
    repo.labels = repo.labels.filter((other) => other.id !== label.id);
    for (const issue of repo.issues) {
      if (issue.labelIds.includes(label.id)) {
        issue.labelIds = issue.labelIds.filter((id) => id !== label.id);
        issue.updatedAt = this.later(issue.updatedAt);
      }
    }
  }

  /** Label ids for names; names the repository does not define are dropped, as Gitea does. */
  labelIdsByName(repo: RepoRecord, names: readonly string[]): number[] {
    const wanted = new Set(names);
    return repo.labels.filter((label) => wanted.has(label.name)).map((label) => label.id);
  }

  // -- issues and pull requests -------------------------------------------------------------

  issue(repo: RepoRecord, number: number): IssueRecord | undefined {
    return repo.issues.find((issue) => issue.number === number);
  }

  /** Newest first (Gitea's default order), after the filter. */
  listIssues(repo: RepoRecord, filter: IssueFilter): IssueRecord[] {
    const labelIds = filter.labels?.map((name) => repo.labels.find((l) => l.name === name)?.id);
    // Gitea drops label names the repository does not have; each remaining label must be on the issue.
    const required = labelIds?.filter((id): id is number => id !== undefined) ?? [];
    const keyword = filter.keyword?.trim().toLowerCase();
    return repo.issues
      .filter((issue) => filter.state === "all" || issue.state === filter.state)
      .filter((issue) => filter.type === undefined || (filter.type === "pulls") === !!issue.pull)
      .filter((issue) => required.every((id) => issue.labelIds.includes(id)))
      .filter(
        (issue) =>
          !keyword ||
          issue.title.toLowerCase().includes(keyword) ||
          issue.body.toLowerCase().includes(keyword) ||
          issue.comments.some((comment) => comment.body.toLowerCase().includes(keyword)),
      )
      .filter(
        (issue) =>
          filter.createdBy === undefined ||
          issue.poster.toLowerCase() === filter.createdBy.toLowerCase(),
      )
      .filter(
        (issue) =>
          filter.assignedTo === undefined ||
          issue.assignees.some((a) => a.toLowerCase() === filter.assignedTo!.toLowerCase()),
      )
      .filter(
        (issue) =>
          filter.mentioned === undefined ||
          mentions(issue.body, filter.mentioned) ||
          issue.comments.some((comment) => mentions(comment.body, filter.mentioned!)),
      )
      .filter((issue) => filter.since === undefined || Date.parse(issue.updatedAt) >= filter.since)
      .filter(
        (issue) => filter.before === undefined || Date.parse(issue.updatedAt) <= filter.before,
      )
      .sort((a, b) => compare(b.createdAt, a.createdAt) || b.id - a.id);
  }

  /** The next number: issues and pull requests share one number space per repository. */
  private nextNumber(repo: RepoRecord): number {
    return repo.issues.reduce((highest, issue) => Math.max(highest, issue.number), 0) + 1;
  }

  private unknownAssignee(assignees: readonly string[] | undefined): string | undefined {
    return assignees?.find((login) => !this.user(login));
  }

  /** Assignee logins spelled as the accounts are, without repeats. */
  private canonicalUsers(logins: readonly string[]): string[] {
    return [...new Set(logins.map((login) => this.user(login)!.login))];
  }

  createIssue(
    repo: RepoRecord,
    poster: string,
    input: NewIssue,
    pull?: Omit<PullRecord, "reviews" | "merged" | "mergedAt" | "mergedBy" | "mergeCommitSha">,
  ): Outcome<IssueRecord> {
    const missing = this.unknownAssignee(input.assignees);
    if (missing !== undefined) return refuse(422, `Assignee does not exist: [name: ${missing}]`);
    const at = this.now();
    const known = new Set(repo.labels.map((label) => label.id));
    const issue: IssueRecord = {
      id: this.nextId("issue"),
      number: this.nextNumber(repo),
      poster,
      title: input.title,
      body: input.body ?? "",
      state: input.closed ? "closed" : "open",
      labelIds: [...new Set((input.labelIds ?? []).filter((id) => known.has(id)))],
      assignees: this.canonicalUsers(input.assignees ?? []),
      comments: [],
      createdAt: at,
      updatedAt: at,
      closedAt: input.closed ? at : null,
      ...(pull
        ? {
            pull: {
              ...pull,
              merged: false,
              mergedAt: null,
              mergedBy: null,
              mergeCommitSha: null,
              reviews: [],
            },
          }
        : {}),
    };
    repo.issues.push(issue);
    return ok(issue);
  }

  editIssue(issue: IssueRecord, changes: IssueChanges, repo: RepoRecord): Outcome<IssueRecord> {
    const missing = this.unknownAssignee(changes.assignees);
    if (missing !== undefined) return refuse(422, `Assignee does not exist: [name: ${missing}]`);
    if (changes.state !== undefined && issue.pull?.merged && changes.state !== issue.state)
      return refuse(412, "cannot change state of this pull request, it was already merged");
    // Gitea ignores an empty title instead of clearing it.
    if (changes.title) issue.title = changes.title;
    if (changes.body !== undefined) issue.body = changes.body;
    if (changes.assignees !== undefined) issue.assignees = this.canonicalUsers(changes.assignees);
    if (changes.labelIds !== undefined) this.setLabels(repo, issue, changes.labelIds);
    if (changes.state !== undefined && changes.state !== issue.state) {
      issue.state = changes.state;
      issue.closedAt = changes.state === "closed" ? this.later(issue.updatedAt) : null;
    }
    this.touch(issue);
    return ok(issue);
  }

  touch(issue: IssueRecord): void {
    issue.updatedAt = this.later(issue.updatedAt);
  }

  setLabels(repo: RepoRecord, issue: IssueRecord, ids: readonly number[]): void {
    const known = new Set(repo.labels.map((label) => label.id));
    issue.labelIds = [...new Set(ids.filter((id) => known.has(id)))];
    this.touch(issue);
  }

  addLabels(repo: RepoRecord, issue: IssueRecord, ids: readonly number[]): void {
    this.setLabels(repo, issue, [...issue.labelIds, ...ids]);
  }

  // -- comments -------------------------------------------------------------------------------

  /** Every comment of a repository with its issue, oldest first. */
  repoComments(repo: RepoRecord): { issue: IssueRecord; comment: CommentRecord }[] {
    return repo.issues
      .flatMap((issue) => issue.comments.map((comment) => ({ issue, comment })))
      .sort((a, b) => a.comment.id - b.comment.id);
  }

  findComment(
    repo: RepoRecord,
    id: number,
  ): { issue: IssueRecord; comment: CommentRecord } | undefined {
    for (const issue of repo.issues) {
      const comment = issue.comments.find((c) => c.id === id);
      if (comment) return { issue, comment };
    }
    return undefined;
  }

  addComment(issue: IssueRecord, author: string, body: string): CommentRecord {
    const at = this.now();
    const comment: CommentRecord = {
      id: this.nextId("comment"),
      author,
      body,
      createdAt: at,
      updatedAt: at,
    };
    issue.comments.push(comment);
    this.touch(issue);
    return comment;
  }

  editComment(issue: IssueRecord, comment: CommentRecord, body: string): CommentRecord {
    comment.body = body;
    comment.updatedAt = this.later(comment.updatedAt);
    this.touch(issue);
    return comment;
  }

  deleteComment(issue: IssueRecord, comment: CommentRecord): void {
    issue.comments = issue.comments.filter((c) => c.id !== comment.id);
    this.touch(issue);
  }

  // -- pull requests ----------------------------------------------------------------------------

  markMerged(issue: IssueRecord, by: string, sha: string | null): void {
    const pull = issue.pull!;
    const at = this.later(issue.updatedAt);
    pull.merged = true;
    pull.mergedAt = at;
    pull.mergedBy = by;
    pull.mergeCommitSha = sha;
    issue.state = "closed";
    issue.closedAt = at;
    issue.updatedAt = at;
  }

  /** A pending review made final: its state (and body, when given) now. */
  submitReview(issue: IssueRecord, review: ReviewRecord, state: ReviewState, body: string): void {
    const at = this.now();
    review.state = state;
    if (body !== "") review.body = body;
    review.submittedAt = at;
    review.updatedAt = at;
    this.touch(issue);
  }

  deleteReview(issue: IssueRecord, review: ReviewRecord): void {
    issue.pull!.reviews = issue.pull!.reviews.filter((other) => other !== review);
    this.touch(issue);
  }

  addReview(issue: IssueRecord, author: string, input: NewReview): ReviewRecord {
    const at = this.now();
    const review: ReviewRecord = {
      id: this.nextId("review"),
      author,
      state: input.state,
      body: input.body,
      commitId: input.commitId,
      comments: input.comments.map(
        (comment): ReviewCommentRecord => ({
          id: this.nextId("comment"),
          author,
          body: comment.body,
          path: comment.path,
          oldPosition: comment.oldPosition,
          newPosition: comment.newPosition,
          createdAt: at,
          updatedAt: at,
        }),
      ),
      submittedAt: at,
      updatedAt: at,
    };
    issue.pull!.reviews.push(review);
    this.touch(issue);
    return review;
  }
}

function secondsToStamp(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
