// `npm run bench -- scoring`: the cost of checkMutation against the cost of reading its
// input. For each size, the two states' JSON texts are parsed and then checked, both
// measured in the same run on the same texts. The checker's time includes all of its
// normalization work (part of what checkMutation does; it normalizes lazily, only
// what differs, see docs/scoring.md).
import { performance } from "node:perf_hooks";
import { mulberry32 } from "../src/compare/index.js";
import { checkMutation, type RepoState } from "../src/scoring/index.js";

/** Issue counts, with the repetitions each gets (small sizes are noisier, and cheap). */
const SIZES: [issues: number, repetitions: number][] = [
  [1_000, 21],
  [10_000, 11],
  [50_000, 7],
];
const WARMUP = 2;
const SCENARIOS: Scenario[] = ["same order", "every collection reordered", "every entity differs"];

const WORDS =
  "parser stream buffer config crash empty field quoted record delimiter header node release chunk line test fix docs option flag error value default support input output file".split(
    " ",
  );
const USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"];
const LABELS = Array.from({ length: 20 }, (_, i) => ({
  name: `label-${i}`,
  color: `#${(0x100000 + i * 0x0a0b0c).toString(16).slice(-6)}`,
  description: i % 3 === 0 ? "" : `Label number ${i}`,
}));

interface GeneratedComment {
  author: string;
  body: string;
}
interface GeneratedIssue {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  assignees: string[];
  comments: GeneratedComment[];
}
interface GeneratedReview {
  author: string;
  kind: "comment" | "approved" | "request-changes";
  body: string;
  comments: GeneratedComment[];
}
interface GeneratedPullRequest extends Omit<GeneratedIssue, "state"> {
  state: "open" | "closed" | "merged";
  reviews: GeneratedReview[];
}
interface GeneratedState {
  labels: typeof LABELS;
  issues: GeneratedIssue[];
  pullRequests: GeneratedPullRequest[];
}

/**
 * `issues` issues and issues/5 pull requests (one number space), 10 comments each, two
 * reviews per pull request with two inline comments each.
 */
function generate(issues: number, seed: number): GeneratedState {
  const random = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const sentence = (words: number) => Array.from({ length: words }, () => pick(WORDS)).join(" ");
  const comments = (count: number) =>
    Array.from({ length: count }, () => ({ author: pick(USERS), body: sentence(12) }));
  const namesFrom = (list: readonly string[], most: number) => [
    ...new Set(Array.from({ length: Math.floor(random() * (most + 1)) }, () => pick(list))),
  ];
  const labelNames = LABELS.map((label) => label.name);
  const state: GeneratedState = { labels: LABELS, issues: [], pullRequests: [] };
  const total = issues + issues / 5;
  for (let number = 1; number <= total; number++) {
    const base = {
      number,
      title: sentence(6),
      body: `${sentence(20)}\n\n${sentence(15)}`,
      labels: namesFrom(labelNames, 3),
      assignees: namesFrom(USERS, 2),
      comments: comments(10),
    };
    if (number % 6 === 0)
      state.pullRequests.push({
        ...base,
        state: pick(["open", "closed", "merged"] as const),
        reviews: Array.from({ length: 2 }, () => ({
          author: pick(USERS),
          kind: pick(["comment", "approved", "request-changes"] as const),
          body: sentence(8),
          comments: comments(2),
        })),
      });
    else state.issues.push({ ...base, state: pick(["open", "closed"] as const) });
  }
  return state;
}

/**
 * The expected state as a capture adapter would return it after a run that did the
 * task and a little more: every entity carries an id and timestamps, colours are
 * upper-case without '#', bodies use CRLF, issues come newest first, and a few entities
 * really differ. With `reorder`, every collection inside every entity (label names,
 * assignees, comments, reviews, inline comments) is also in a different order, which
 * takes the checker off its fast path for every entity. With "every entity differs",
 * the first comment of every issue and pull request is edited, so every entity is
 * normalized in full and reports two differences: the checker's worst case.
 */
type Scenario = "same order" | "every collection reordered" | "every entity differs";

function capture(expected: GeneratedState, scenario: Scenario): RepoState {
  const reorder = scenario === "every collection reordered";
  let id = 1;
  const stamp = () => new Date(1_700_000_000_000 + id * 60_000).toISOString();
  const order = <T>(list: readonly T[]) => (reorder ? [...list].reverse() : [...list]);
  const comment = (c: GeneratedComment) => ({ id: id++, createdAt: stamp(), ...c });
  const edit = (comments: GeneratedComment[]) =>
    scenario === "every entity differs" && comments[0] !== undefined
      ? [{ ...comments[0], body: `${comments[0].body} (edited)` }, ...comments.slice(1)]
      : comments;
  const entity = (e: GeneratedIssue | GeneratedPullRequest) => ({
    id: id++,
    createdAt: stamp(),
    updatedAt: stamp(),
    number: e.number,
    title: e.title,
    body: e.body.replace(/\n/g, "\r\n"),
    labels: order(e.labels),
    assignees: order(e.assignees),
    comments: order(edit(e.comments)).map(comment),
  });
  const issues = expected.issues
    .map((issue) => ({ ...entity(issue), state: issue.state }))
    .reverse();
  const pullRequests = expected.pullRequests.map((pr) => ({
    ...entity(pr),
    state: pr.state,
    reviews: order(pr.reviews).map((review) => ({
      id: id++,
      createdAt: stamp(),
      ...review,
      comments: order(review.comments).map(comment),
    })),
  }));
  // A handful of real differences, so the checker reports something.
  issues[0]!.labels.push("agent-label");
  issues[1]!.state = issues[1]!.state === "open" ? "closed" : "open";
  pullRequests[0]!.comments.push(comment({ author: "agent", body: "done" }));
  return {
    labels: expected.labels.map((label) => ({
      id: id++,
      ...label,
      color: label.color.slice(1).toUpperCase(),
    })),
    issues,
    pullRequests,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function time<T>(action: () => T): [number, T] {
  const started = performance.now();
  const value = action();
  return [performance.now() - started, value];
}

interface Measurement {
  parse: number;
  check: number;
  differences: number;
}

function measure(expected: GeneratedState, actual: RepoState, repetitions: number): Measurement {
  const expectedText = JSON.stringify(expected);
  const actualText = JSON.stringify(actual);
  const parseTimes: number[] = [];
  const checkTimes: number[] = [];
  let differences = 0;
  for (let rep = 0; rep < WARMUP + repetitions; rep++) {
    // Parse and check alternate so both see the same heap and GC conditions; the
    // checker gets freshly parsed objects each time, as it would in a real run.
    const [parseMs, parsed] = time(() => [JSON.parse(expectedText), JSON.parse(actualText)]);
    const [checkMs, result] = time(() => checkMutation(parsed[0], parsed[1]));
    if (rep < WARMUP) continue;
    parseTimes.push(parseMs);
    checkTimes.push(checkMs);
    differences = result.pass ? 0 : result.differences.length;
  }
  return { parse: median(parseTimes), check: median(checkTimes), differences };
}

export async function run(): Promise<void> {
  console.log(
    `checkMutation (normalization included) ÷ JSON.parse of both states' JSON text, same run, medians after ${WARMUP} warm-up runs (${SIZES.map(([n, r]) => `${r} runs at ${n}`).join(", ")})`,
  );
  console.log(
    "| issues | PRs | comments per state | JSON text (both) | actual state | JSON.parse | checkMutation | ratio | µs per entity |",
  );
  console.log("|---:|---:|---:|---:|:--|---:|---:|---:|---:|");
  // Let the JIT optimize every path (fast, reordered, differing) before anything counts.
  const small = generate(500, 1);
  for (const scenario of SCENARIOS) measure(small, capture(small, scenario), 20);
  for (const [size, repetitions] of SIZES) {
    const expected = generate(size, size);
    const entities = expected.issues.length + expected.pullRequests.length;
    const comments = entities * 10 + expected.pullRequests.length * 4;
    for (const scenario of SCENARIOS) {
      const actual = capture(expected, scenario);
      const megabytes =
        (JSON.stringify(expected).length + JSON.stringify(actual).length) / 1_000_000;
      const { parse, check, differences } = measure(expected, actual, repetitions);
      console.log(
        `| ${size} | ${expected.pullRequests.length} | ${comments} | ${megabytes.toFixed(1)} MB | ${scenario} | ${parse.toFixed(1)} ms | ${check.toFixed(1)} ms (${differences} differences) | ${(check / parse).toFixed(2)} | ${((check * 1000) / entities).toFixed(2)} |`,
      );
    }
  }
}
