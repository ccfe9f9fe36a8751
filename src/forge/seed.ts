// A RepoState (the scoring contract) into a forge repository and back. Seeding keeps
// numbers, texts, states, label names and colours, assignees, comment and review authors
// exactly, so a capture taken right after seeding equals the seed under checkMutation.

import type { Issue, PullRequest, RepoState, Review, ReviewKind } from "../scoring/index.js";
import type { InputProblem } from "../shared/index.js";
import type { IssueRecord, RepoRecord, ReviewRecord, ReviewState } from "./model.js";
import { type ForgeStore, normalizeColor } from "./store.js";

const REVIEW_STATES: Record<ReviewKind, ReviewState> = {
  approved: "APPROVED",
  "request-changes": "REQUEST_CHANGES",
  comment: "COMMENT",
};

const REVIEW_KINDS: Partial<Record<ReviewState, ReviewKind>> = {
  APPROVED: "approved",
  REQUEST_CHANGES: "request-changes",
  COMMENT: "comment",
};

/** The branch a seeded pull request comes from (a seed names no branches). */
export function seededHeadBranch(number: number): string {
  return `pull-${number}`;
}

/** Problems that make a state impossible to seed (beyond what validateRepoState checks). */
export function seedProblems(state: RepoState): InputProblem[] {
  const defined = new Set((state.labels ?? []).map((label) => label.name));
  const problems: InputProblem[] = [];
  const check = (list: "issues" | "pullRequests", entities: readonly (Issue | PullRequest)[]) =>
    entities.forEach((entity, index) => {
      (entity.labels ?? []).forEach((name, at) => {
        if (!defined.has(name))
          problems.push({
            path: `${list}[${index}].labels[${at}]`,
            message: `label ${JSON.stringify(name)} is not defined in labels (a forge attaches only labels the repository defines)`,
          });
      });
    });
  check("issues", state.issues ?? []);
  check("pullRequests", state.pullRequests ?? []);
  return problems;
}

/** Every login a seed mentions (authors, assignees), so each can exist as a user. */
export function seedLogins(state: RepoState): string[] {
  const logins = new Set<string>();
  for (const entity of [...(state.issues ?? []), ...(state.pullRequests ?? [])]) {
    for (const login of entity.assignees ?? []) logins.add(login);
    for (const comment of entity.comments ?? []) logins.add(comment.author);
    for (const review of "reviews" in entity ? (entity.reviews ?? []) : []) {
      logins.add(review.author);
      for (const comment of review.comments ?? []) logins.add(comment.author);
    }
  }
  return [...logins].sort();
}

/**
 * Fills an empty repository from a validated state (see seedProblems). `poster` authors
 * the seeded issues and pull requests: a RepoState does not record who opened them.
 */
export function seedRepository(
  store: ForgeStore,
  repo: RepoRecord,
  state: RepoState,
  poster: string,
): void {
  for (const login of seedLogins(state)) store.addAccount(login, "user");
  for (const label of state.labels ?? [])
    repo.labels.push({
      id: store.nextId("label"),
      name: label.name,
      color: normalizeColor(label.color) ?? "000000",
      description: label.description ?? "",
    });
  const byName = new Map(repo.labels.map((label) => [label.name, label.id]));
  const entities: { entity: Issue | PullRequest; pull: boolean }[] = [
    ...(state.issues ?? []).map((entity) => ({ entity, pull: false })),
    ...(state.pullRequests ?? []).map((entity) => ({ entity, pull: true })),
  ].sort((a, b) => a.entity.number - b.entity.number);
  for (const { entity, pull } of entities) {
    const record = seedEntity(store, entity, poster, byName);
    if (pull) {
      const pr = entity as PullRequest;
      const head = seededHeadBranch(pr.number);
      repo.branches.add(head);
      const merged = pr.state === "merged";
      record.state = pr.state === "open" ? "open" : "closed";
      record.closedAt = record.state === "closed" ? record.updatedAt : null;
      record.pull = {
        head,
        base: repo.defaultBranch,
        merged,
        mergedAt: merged ? record.updatedAt : null,
        mergedBy: merged ? poster : null,
        mergeCommitSha: null,
        reviews: (pr.reviews ?? []).map((review) => seedReview(store, review, record.updatedAt)),
      };
    }
    repo.issues.push(record);
  }
}

function stampOr(value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z") : fallback;
}

function seedEntity(
  store: ForgeStore,
  entity: Issue | PullRequest,
  poster: string,
  labelIds: Map<string, number>,
): IssueRecord {
  const createdAt = stampOr(entity.createdAt, store.now());
  const updatedAt = stampOr(entity.updatedAt, createdAt);
  const state = entity.state === "open" ? "open" : "closed";
  return {
    id: store.nextId("issue"),
    number: entity.number,
    poster,
    title: entity.title,
    body: entity.body ?? "",
    state,
    labelIds: [...new Set(entity.labels ?? [])].map((name) => labelIds.get(name)!),
    assignees: [...new Set(entity.assignees ?? [])],
    comments: (entity.comments ?? []).map((comment) => {
      const at = stampOr(comment.createdAt, createdAt);
      return {
        id: store.nextId("comment"),
        author: comment.author,
        body: comment.body ?? "",
        createdAt: at,
        updatedAt: at,
      };
    }),
    createdAt,
    updatedAt,
    closedAt: state === "closed" ? updatedAt : null,
  };
}

function seedReview(store: ForgeStore, review: Review, fallback: string): ReviewRecord {
  const at = stampOr(review.createdAt, fallback);
  return {
    id: store.nextId("review"),
    author: review.author,
    state: REVIEW_STATES[review.kind],
    body: review.body ?? "",
    commitId: "",
    comments: (review.comments ?? []).map((comment) => ({
      id: store.nextId("comment"),
      author: comment.author,
      body: comment.body ?? "",
      path: "",
      oldPosition: 0,
      newPosition: 0,
      createdAt: at,
      updatedAt: at,
    })),
    submittedAt: at,
    updatedAt: at,
  };
}

/** The repository as a RepoState, read directly (a capture over HTTP gives the same state). */
export function snapshotRepository(repo: RepoRecord): RepoState {
  const names = new Map(repo.labels.map((label) => [label.id, label.name]));
  const sorted = [...repo.issues].sort((a, b) => a.number - b.number);
  const common = (issue: IssueRecord) => ({
    number: issue.number,
    title: issue.title,
    body: issue.body,
    labels: issue.labelIds.map((id) => names.get(id)!).sort(),
    assignees: [...issue.assignees].sort(),
    comments: issue.comments.map((c) => ({
      id: c.id,
      author: c.author,
      body: c.body,
      createdAt: c.createdAt,
    })),
    id: issue.id,
    createdAt: issue.createdAt,
    updatedAt: issue.updatedAt,
  });
  return {
    labels: [...repo.labels]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((label) => ({
        name: label.name,
        color: `#${label.color}`,
        description: label.description,
        id: label.id,
      })),
    issues: sorted
      .filter((issue) => !issue.pull)
      .map((issue) => ({ ...common(issue), state: issue.state })),
    pullRequests: sorted
      .filter((issue) => issue.pull)
      .map((issue) => ({
        ...common(issue),
        state: issue.pull!.merged ? ("merged" as const) : issue.state,
        reviews: issue
          .pull!.reviews.filter((review) => REVIEW_KINDS[review.state] !== undefined)
          .map((review) => ({
            id: review.id,
            author: review.author,
            kind: REVIEW_KINDS[review.state]!,
            body: review.body,
            comments: review.comments.map((c) => ({ id: c.id, author: c.author, body: c.body })),
            createdAt: review.submittedAt,
          })),
      })),
  };
}
