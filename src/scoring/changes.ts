// Intended changes (pure): a forge task's expected end state written as the few changes the
// agent should make to the seed. The harness applies them to the seed and scores against the
// whole resulting state, so everything else the agent changes is still caught as collateral.
import { z } from "zod";
import { formatJsonPath, type InputProblem } from "../shared/index.js";
import {
  type Issue,
  type PullRequest,
  type RepoState,
  type Review,
  reviewKindSchema,
} from "./contract.js";

const entityNumber = z.int().positive("expected a positive whole number").describe("issue or PR");
const text = (what: string) => z.string().min(1, `${what} must not be empty`);

export const intendedChangeSchema = z
  .discriminatedUnion(
    "op",
    [
      z
        .strictObject({ op: z.literal("comment"), number: entityNumber, body: text("a comment") })
        .describe("the acting user comments on an issue or pull request"),
      z
        .strictObject({ op: z.literal("add-label"), number: entityNumber, label: text("a label") })
        .describe("a label the seed defines is put on an issue or pull request"),
      z
        .strictObject({
          op: z.literal("remove-label"),
          number: entityNumber,
          label: text("a label"),
        })
        .describe("a label is taken off"),
      z
        .strictObject({ op: z.literal("assign"), number: entityNumber, user: text("a login") })
        .describe("a user is assigned"),
      z
        .strictObject({ op: z.literal("unassign"), number: entityNumber, user: text("a login") })
        .describe("an assignee is removed"),
      z
        .strictObject({ op: z.literal("close"), number: entityNumber })
        .describe("an open issue or pull request is closed"),
      z
        .strictObject({ op: z.literal("reopen"), number: entityNumber })
        .describe("a closed issue or pull request is reopened"),
      z
        .strictObject({
          op: z.literal("edit"),
          number: entityNumber,
          title: text("a title").optional(),
          body: z.string().optional(),
        })
        .describe("the title and/or body change"),
      z
        .strictObject({
          op: z.literal("create-issue"),
          title: text("a title"),
          body: z.string().optional(),
          labels: z.array(text("a label")).optional(),
          assignees: z.array(text("a login")).optional(),
        })
        .describe("a new issue, numbered after every existing issue and pull request"),
      z
        .strictObject({
          op: z.literal("review"),
          number: entityNumber,
          kind: reviewKindSchema,
          body: z.string().optional(),
          comments: z
            .array(z.strictObject({ body: text("an inline comment") }))
            .optional()
            .describe("inline comments (by the acting user)"),
        })
        .describe("the acting user reviews a pull request"),
      z
        .strictObject({ op: z.literal("merge"), number: entityNumber })
        .describe("an open pull request is merged"),
    ],
    {
      error:
        'expected a change with op "comment", "add-label", "remove-label", "assign", "unassign", "close", "reopen", "edit", "create-issue", "review" or "merge"',
    },
  )
  .describe("one change the task asks for, applied to the seed in list order");

export const intendedChangesSchema = z
  .array(intendedChangeSchema)
  .min(1, "list at least one change (a task whose end state is the seed needs no agent)")
  .describe("the changes that turn the seed into the expected end state");

export type IntendedChange = z.infer<typeof intendedChangeSchema>;

type Entity = Issue | PullRequest;

/** Where each entity of a state is, by number (issues and pull requests share one number space). */
function findEntity(
  state: RepoState,
  number: number,
): { entity: Entity; pull: boolean } | undefined {
  const issue = state.issues?.find((i) => i.number === number);
  if (issue) return { entity: issue, pull: false };
  const pull = state.pullRequests?.find((p) => p.number === number);
  return pull ? { entity: pull, pull: true } : undefined;
}

function describe(entity: Entity, pull: boolean): string {
  return `${pull ? "pull request" : "issue"} #${entity.number}`;
}

/** The numbers a state uses, for a message: `1–12, 14`. */
function numbersText(state: RepoState): string {
  const numbers = [...(state.issues ?? []), ...(state.pullRequests ?? [])]
    .map((e) => e.number)
    .sort((a, b) => a - b);
  if (numbers.length === 0) return "none";
  const runs: string[] = [];
  let start = numbers[0]!;
  let previous = start;
  for (const n of [...numbers.slice(1), Number.NaN]) {
    if (n === previous + 1) {
      previous = n;
      continue;
    }
    runs.push(start === previous ? String(start) : `${start}–${previous}`);
    start = n;
    previous = n;
  }
  return runs.join(", ");
}

const NOTHING = "this change changes nothing (the task would pass without an agent)";

/**
 * Applies intended changes to a seed as `actor` (the forge user the agent acts as) and returns
 * the whole expected end state, or every change that cannot apply, each at `changes[k]` under
 * `at`. A change that would leave the state as it was is a problem too: a task the seed already
 * satisfies measures nothing. Pure: the seed is not modified.
 */
export function applyIntendedChanges(
  seed: RepoState,
  changes: readonly IntendedChange[],
  actor: string,
  at: ReadonlyArray<string | number> = [],
): { ok: true; state: RepoState } | { ok: false; problems: InputProblem[] } {
  const state = structuredClone(seed) as RepoState;
  state.issues ??= [];
  state.pullRequests ??= [];
  const defined = new Set((state.labels ?? []).map((label) => label.name));
  const problems: InputProblem[] = [];
  changes.forEach((change, index) => {
    const problem = applyOne(state, change, actor, defined);
    if (problem !== null)
      problems.push({
        path: formatJsonPath([
          ...at,
          index,
          ...(problem.field === undefined ? [] : [problem.field]),
        ]),
        message: problem.message,
      });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, state };
}

interface ChangeProblem {
  field?: string;
  message: string;
}

function fault(message: string, field?: string): ChangeProblem {
  return field === undefined ? { message } : { field, message };
}

/** Applies one change to `state` in place; a problem when it cannot apply or changes nothing. */
function applyOne(
  state: RepoState,
  change: IntendedChange,
  actor: string,
  defined: ReadonlySet<string>,
): ChangeProblem | null {
  const undefinedLabel = (label: string) =>
    `label ${JSON.stringify(label)} is not defined in the seed's labels (defined: ${[...defined].sort().join(", ") || "none"})`;
  if (change.op === "create-issue") {
    const missing = (change.labels ?? []).filter((label) => !defined.has(label));
    if (missing.length > 0) return fault(missing.map(undefinedLabel).join("; "), "labels");
    // Issues and pull requests share one number space, so a new issue gets the number after
    // every existing issue and pull request, as the forge will give it.
    const highest = Math.max(
      0,
      ...state.issues!.map((i) => i.number),
      ...state.pullRequests!.map((p) => p.number),
    );
    state.issues!.push({
      number: highest + 1,
      title: change.title,
      body: change.body ?? "",
      state: "open",
      labels: [...new Set(change.labels ?? [])],
      assignees: [...new Set(change.assignees ?? [])],
      comments: [],
    });
    return null;
  }
  const found = findEntity(state, change.number);
  if (found === undefined)
    return fault(
      `there is no issue or pull request #${change.number} in the seed (numbers used: ${numbersText(state)})`,
      "number",
    );
  const { entity, pull } = found;
  const name = describe(entity, pull);
  switch (change.op) {
    case "comment":
      entity.comments = [...(entity.comments ?? []), { author: actor, body: change.body }];
      return null;
    case "add-label": {
      if (!defined.has(change.label)) return fault(undefinedLabel(change.label), "label");
      const labels = entity.labels ?? [];
      if (labels.includes(change.label))
        return fault(`${name} already has label ${JSON.stringify(change.label)}: ${NOTHING}`);
      entity.labels = [...labels, change.label];
      return null;
    }
    case "remove-label": {
      const labels = entity.labels ?? [];
      if (!labels.includes(change.label))
        return fault(
          `${name} has no label ${JSON.stringify(change.label)} (it has ${labels.join(", ") || "none"}): ${NOTHING}`,
        );
      entity.labels = labels.filter((label) => label !== change.label);
      return null;
    }
    case "assign": {
      const assignees = entity.assignees ?? [];
      if (assignees.includes(change.user))
        return fault(`${change.user} is already assigned to ${name}: ${NOTHING}`);
      entity.assignees = [...assignees, change.user];
      return null;
    }
    case "unassign": {
      const assignees = entity.assignees ?? [];
      if (!assignees.includes(change.user))
        return fault(`${change.user} is not assigned to ${name}: ${NOTHING}`);
      entity.assignees = assignees.filter((user) => user !== change.user);
      return null;
    }
    case "close":
      if (entity.state === "merged")
        return fault(`${name} is merged; a merged pull request cannot be closed`);
      if (entity.state === "closed") return fault(`${name} is already closed: ${NOTHING}`);
      entity.state = "closed";
      return null;
    case "reopen":
      if (entity.state === "merged")
        return fault(`${name} is merged; a merged pull request cannot be reopened`);
      if (entity.state === "open") return fault(`${name} is already open: ${NOTHING}`);
      entity.state = "open";
      return null;
    case "edit": {
      if (change.title === undefined && change.body === undefined)
        return fault("give a new title, a new body, or both");
      const same =
        (change.title === undefined || change.title === entity.title) &&
        (change.body === undefined || change.body === (entity.body ?? ""));
      if (same) return fault(`${name} already has this title and body: ${NOTHING}`);
      if (change.title !== undefined) entity.title = change.title;
      if (change.body !== undefined) entity.body = change.body;
      return null;
    }
    case "review": {
      if (!pull) return fault(`${name} is an issue; only pull requests are reviewed`, "number");
      const review: Review = {
        author: actor,
        kind: change.kind,
        body: change.body ?? "",
        comments: (change.comments ?? []).map((c) => ({ author: actor, body: c.body })),
      };
      if (review.kind === "comment" && review.body === "" && review.comments!.length === 0)
        return fault("a comment review needs a body or an inline comment (forges refuse it)");
      if (review.kind === "request-changes" && review.body === "")
        return fault("a request-changes review needs a body (forges refuse it)", "body");
      const pr = entity as PullRequest;
      pr.reviews = [...(pr.reviews ?? []), review];
      return null;
    }
    case "merge":
      if (!pull) return fault(`${name} is an issue; only pull requests are merged`, "number");
      if (entity.state !== "open")
        return fault(`${name} is ${entity.state}; only an open pull request can be merged`);
      entity.state = "merged";
      return null;
  }
  return null;
}
