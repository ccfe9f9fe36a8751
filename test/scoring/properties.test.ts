import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Comment,
  checkMutation,
  type DifferenceKind,
  type Issue,
  type Label,
  normalizeRepoState,
  type PullRequest,
  type RepoState,
  type Review,
} from "../../src/scoring/index.js";
import { clone } from "./builders.js";

const RUNS = { numRuns: 150 };

// Small alphabets on purpose: repeated authors, bodies and label names make duplicate
// comments and colliding keys common, which is where multiset bugs hide.
const authorArb = fc.constantFrom("alice", "bob", "carol");
const textArb = fc.oneof(
  fc.constantFrom("", "ok", "LGTM", "two\nlines", "two\r\nlines", "Needs work"),
  fc.string({ maxLength: 6 }),
);
const labelNameArb = fc.constantFrom("bug", "Bug", "docs", "wontfix", "priority: high");
const colourArb = fc.constantFrom("#d73a4a", "D73A4A", "#0075ca", "FFFFFF", "#a2EEef");

const commentArb: fc.Arbitrary<Comment> = fc.record({ author: authorArb, body: textArb });
const reviewArb: fc.Arbitrary<Review> = fc.record({
  author: authorArb,
  kind: fc.constantFrom("comment", "approved", "request-changes"),
  body: textArb,
  comments: fc.array(commentArb, { maxLength: 3 }),
});
const labelArb: fc.Arbitrary<Label> = fc.record(
  { name: labelNameArb, color: colourArb, description: textArb },
  { requiredKeys: ["name", "color"] },
);
const entityFields = {
  title: textArb,
  body: textArb,
  labels: fc.array(labelNameArb, { maxLength: 3 }),
  assignees: fc.array(authorArb, { maxLength: 2 }),
  comments: fc.array(commentArb, { maxLength: 4 }),
};
const entityArb = fc.record({
  number: fc.integer({ min: 1, max: 60 }),
  pullRequest: fc.boolean(),
  ...entityFields,
  issueState: fc.constantFrom("open", "closed") as fc.Arbitrary<Issue["state"]>,
  prState: fc.constantFrom("open", "closed", "merged") as fc.Arbitrary<PullRequest["state"]>,
  reviews: fc.array(reviewArb, { maxLength: 3 }),
});

function stateArb(minimum = 0): fc.Arbitrary<RepoState> {
  return fc
    .record({
      labels: fc.uniqueArray(labelArb, {
        selector: (l) => l.name,
        maxLength: 4,
        minLength: minimum,
      }),
      entities: fc.uniqueArray(entityArb, { selector: (e) => e.number, maxLength: 7 }),
      issue: entityArb,
      pullRequest: entityArb,
    })
    .map(({ labels, entities, issue, pullRequest }) => {
      const all = [...entities];
      // A rich state always has at least one issue and one pull request.
      if (minimum > 0) {
        all.push({ ...issue, number: 101, pullRequest: false });
        all.push({ ...pullRequest, number: 102, pullRequest: true });
      }
      const state: RepoState = { labels, issues: [], pullRequests: [] };
      for (const { number, pullRequest: isPr, issueState, prState, reviews, ...fields } of all) {
        if (isPr) state.pullRequests!.push({ number, ...fields, state: prState, reviews });
        else state.issues!.push({ number, ...fields, state: issueState });
      }
      return state;
    });
}

/** mulberry32, so a shuffle is reproducible from the seed fast-check reports. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function shuffled<T>(list: readonly T[] | undefined, random: () => number): T[] | undefined {
  if (list === undefined) return undefined;
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The same state with every collection, at every depth, in another order. */
function reorder(state: RepoState, seed: number): RepoState {
  const random = prng(seed);
  const entity = <T extends Issue | PullRequest>(e: T): T => ({
    ...e,
    labels: shuffled(e.labels, random),
    assignees: shuffled(e.assignees, random),
    comments: shuffled(e.comments, random),
  });
  return {
    labels: shuffled(state.labels, random),
    issues: shuffled(state.issues?.map(entity), random),
    pullRequests: shuffled(
      state.pullRequests?.map((pr) => ({
        ...entity(pr),
        reviews: shuffled(
          pr.reviews?.map((r) => ({ ...r, comments: shuffled(r.comments, random) })),
          random,
        ),
      })),
      random,
    ),
  };
}

/** The same state with ids and timestamps on every entity. */
function withVolatileFields(state: RepoState, seed: number): RepoState {
  let next = seed;
  const volatile = () => {
    next++;
    return {
      id: next % 2 === 0 ? next : `node-${next}`,
      createdAt: `2024-01-${next}`,
      updatedAt: `t${next}`,
    };
  };
  const comments = (list?: Comment[]) => list?.map((c) => ({ ...c, ...volatile() }));
  return {
    labels: state.labels?.map((l) => ({ ...l, ...volatile() })),
    issues: state.issues?.map((i) => ({ ...i, ...volatile(), comments: comments(i.comments) })),
    pullRequests: state.pullRequests?.map((p) => ({
      ...p,
      ...volatile(),
      comments: comments(p.comments),
      reviews: p.reviews?.map((r) => ({ ...r, ...volatile(), comments: comments(r.comments) })),
    })),
  };
}

describe("checkMutation properties", () => {
  it("a state always matches itself", () => {
    fc.assert(
      fc.property(stateArb(), (state) => {
        expect(checkMutation(state, state)).toEqual({ pass: true });
        expect(checkMutation(state, clone(state))).toEqual({ pass: true });
      }),
      RUNS,
    );
  });

  it("a state matches any reordering of its labels, issues, comments, reviews and inline comments", () => {
    fc.assert(
      fc.property(stateArb(), fc.integer(), (state, seed) => {
        const other = reorder(state, seed);
        expect(checkMutation(state, other)).toEqual({ pass: true });
        expect(checkMutation(other, state)).toEqual({ pass: true });
      }),
      RUNS,
    );
  });

  it("ids and timestamps never matter", () => {
    fc.assert(
      fc.property(
        stateArb(),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer(),
        (state, seed, order) => {
          expect(checkMutation(state, withVolatileFields(reorder(state, order), seed))).toEqual({
            pass: true,
          });
          expect(checkMutation(withVolatileFields(state, seed), state)).toEqual({ pass: true });
          expect(normalizeRepoState(withVolatileFields(state, seed))).toEqual(
            normalizeRepoState(state),
          );
        },
      ),
      RUNS,
    );
  });

  it("passes exactly when the normalized states are equal, and reports the same differences for normalized input", () => {
    const pairArb = stateArb(1).chain((state) =>
      fc.tuple(
        fc.constant(state),
        fc.oneof(
          stateArb(),
          fc.integer().map((seed) => reorder(state, seed)),
          fc.tuple(fc.nat(), fc.nat()).map(([op, pick]) => {
            const changed = clone(state);
            CHANGES[op % CHANGES.length]!(changed, pick);
            return changed;
          }),
        ),
      ),
    );
    fc.assert(
      fc.property(pairArb, ([expected, actual]) => {
        const result = checkMutation(expected, actual);
        const normalizedExpected = normalizeRepoState(expected);
        const normalizedActual = normalizeRepoState(actual);
        expect(result.pass).toBe(isDeepStrictEqual(normalizedExpected, normalizedActual));
        expect(checkMutation(normalizedExpected, normalizedActual)).toEqual(result);
        if (!result.pass)
          for (const d of result.differences) expect(d.collateral).toBe(d.kind === "unexpected");
      }),
      RUNS,
    );
  });

  it("detects any single change with the right path and kind", () => {
    fc.assert(
      fc.property(stateArb(1), fc.nat(), fc.nat(), fc.integer(), (state, op, pick, seed) => {
        const actual = clone(state);
        const change = CHANGES[op % CHANGES.length]!(actual, pick);
        const result = checkMutation(state, reorder(actual, seed));
        expect(result.pass).toBe(false);
        if (result.pass) return;
        expect(result.differences.map((d) => [d.path, d.kind])).toEqual(
          change.kinds.map((kind) => [change.path, kind]),
        );
      }),
      RUNS,
    );
  });
});

interface Change {
  path: string;
  kinds: DifferenceKind[];
}

type Target = { path: string; entity: Issue | PullRequest };

function entities(state: RepoState): Target[] {
  return [
    ...(state.issues ?? []).map((entity) => ({ path: `issues[number=${entity.number}]`, entity })),
    ...(state.pullRequests ?? []).map((entity) => ({
      path: `pullRequests[number=${entity.number}]`,
      entity,
    })),
  ];
}

function pickFrom<T>(list: readonly T[], pick: number): T {
  return list[pick % list.length]!;
}

/**
 * Single changes; each mutates a rich state (one issue, one pull request at least) in
 * place and says where the checker must report it. Targets that cannot take a change
 * (an entity without labels, say) fall back to a change that always applies.
 */
const CHANGES: ((state: RepoState, pick: number) => Change)[] = [
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    entity.title = `${entity.title}!`;
    return { path: `${path}.title`, kinds: ["changed"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    entity.body = `${entity.body ?? ""} edited`;
    return { path: `${path}.body`, kinds: ["changed"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    const next: Record<string, PullRequest["state"]> = {
      open: "closed",
      closed: "open",
      merged: "open",
    };
    entity.state = next[entity.state]! as Issue["state"];
    return { path: `${path}.state`, kinds: ["changed"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    entity.labels = [...(entity.labels ?? []), "added-label"];
    return { path: `${path}.labels`, kinds: ["unexpected"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    const name = entity.labels?.[pick % Math.max(1, entity.labels.length)];
    if (name === undefined) {
      entity.labels = ["added-label"];
      return { path: `${path}.labels`, kinds: ["unexpected"] };
    }
    entity.labels = entity.labels!.filter((l) => l !== name);
    return { path: `${path}.labels`, kinds: ["missing"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    entity.assignees = [...(entity.assignees ?? []), "zed"];
    return { path: `${path}.assignees`, kinds: ["unexpected"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    const user = entity.assignees?.[pick % Math.max(1, entity.assignees.length)];
    if (user === undefined) {
      entity.assignees = ["zed"];
      return { path: `${path}.assignees`, kinds: ["unexpected"] };
    }
    entity.assignees = entity.assignees!.filter((a) => a !== user);
    return { path: `${path}.assignees`, kinds: ["missing"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    entity.comments = [...(entity.comments ?? []), { author: "zed", body: "new comment" }];
    return { path: `${path}.comments`, kinds: ["unexpected"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    if ((entity.comments ?? []).length === 0) {
      entity.comments = [{ author: "zed", body: "new comment" }];
      return { path: `${path}.comments`, kinds: ["unexpected"] };
    }
    entity.comments!.splice(pick % entity.comments!.length, 1);
    return { path: `${path}.comments`, kinds: ["missing"] };
  },
  (state, pick) => {
    const { path, entity } = pickFrom(entities(state), pick);
    if ((entity.comments ?? []).length === 0) {
      entity.comments = [{ author: "zed", body: "new comment" }];
      return { path: `${path}.comments`, kinds: ["unexpected"] };
    }
    const edited = entity.comments![pick % entity.comments!.length]!;
    edited.body = `${edited.body ?? ""} (edited)`;
    return { path: `${path}.comments`, kinds: ["missing", "unexpected"] };
  },
  (state, pick) => {
    const pr = pickFrom(state.pullRequests!, pick);
    const path = `pullRequests[number=${pr.number}].reviews`;
    const reviews = pr.reviews ?? [];
    if (reviews.length > 0 && pick % 2 === 0) {
      reviews.splice(pick % reviews.length, 1);
      pr.reviews = reviews;
      return { path, kinds: ["missing"] };
    }
    pr.reviews = [...reviews, { author: "zed", kind: "approved", body: "ship it", comments: [] }];
    return { path, kinds: ["unexpected"] };
  },
  (state) => {
    const used = entities(state).map((t) => t.entity.number);
    const number = Math.max(0, ...used) + 1;
    state.issues!.push({ number, title: "extra", state: "open" });
    return { path: `issues[number=${number}]`, kinds: ["unexpected"] };
  },
  (state, pick) => {
    const removed = state.issues!.splice(pick % state.issues!.length, 1)[0]!;
    return { path: `issues[number=${removed.number}]`, kinds: ["missing"] };
  },
  (state) => {
    state.labels = [...(state.labels ?? []), { name: "added-definition", color: "#123456" }];
    return { path: 'labels[name="added-definition"]', kinds: ["unexpected"] };
  },
  (state, pick) => {
    const labels = state.labels ?? [];
    if (labels.length === 0) {
      state.labels = [{ name: "added-definition", color: "#123456" }];
      return { path: 'labels[name="added-definition"]', kinds: ["unexpected"] };
    }
    const label = pickFrom(labels, pick);
    label.color = label.color.toLowerCase().endsWith("123456") ? "#654321" : "#123456";
    return { path: `labels[name=${JSON.stringify(label.name)}].color`, kinds: ["changed"] };
  },
];
