// The verdict's error rates, checked by simulating experiments through the public verdict
// function. Every run is seeded, so the counts are the same on every machine; the assertions
// allow for Monte-Carlo error: a count fails only when it would be unlikely (p < 1e-4) if the
// true rate met the promise. `npm run bench -- stats` prints the full tables with more runs.
import { describe, expect, it } from "vitest";
import {
  binomialLowerTail,
  binomialUpperTail,
  DEFAULT_PAIRED_POLICY,
  decideVerdict,
  type VerdictPolicy,
} from "../../src/stats/index.js";
import {
  type Relabelling,
  roundMajorOrder,
  type SimulatedDesign,
  seededRandom,
  simulatedTrials,
  simulatedTrialsRelabelled,
} from "./support.js";

const ALPHA = DEFAULT_PAIRED_POLICY.alpha;
/** How unlikely a count must be under the promised rate before the test fails. */
const SURPRISE = 1e-4;

const RATES: Record<string, number | ((task: number) => number)> = {
  "0.5": 0.5,
  "0.2": 0.2,
  mixed: (task) => [0.1, 0.5, 0.9, 0.3, 0.7][task % 5] as number,
};

interface Counts {
  runs: number;
  accept: number;
  reject: number;
  /** Sum over runs of the share of planned trials the decision needed. */
  trialsUsed: number;
}

function simulate(
  design: SimulatedDesign,
  rates: Record<string, number | ((task: number) => number)>,
  policy: VerdictPolicy,
  runs: number,
  seed: number,
  relabel?: Relabelling,
): Counts {
  const random = seededRandom(seed);
  const order = roundMajorOrder(design);
  const counts: Counts = { runs, accept: 0, reject: 0, trialsUsed: 0 };
  for (let run = 0; run < runs; run++) {
    const trials =
      relabel === undefined
        ? simulatedTrials(design, rates, random)
        : simulatedTrialsRelabelled(design, rates, relabel, random);
    const verdict = decideVerdict(trials, {
      baseline: design.variants[0] as string,
      policy,
      order,
      plannedTrials: design.trialsPerCell,
    });
    if (verdict.status === "accept") counts.accept += 1;
    if (verdict.status === "reject") counts.reject += 1;
    const after = verdict.comparisons
      .map((c) => c.test?.sequential?.decidedAfterTrials ?? order.length)
      .reduce((a, b) => Math.max(a, b), 0);
    counts.trialsUsed += after / order.length;
  }
  return counts;
}

/** A count of events that, at the promised `rate`, would be this large with probability ≥ SURPRISE. */
function plausiblyAtMost(count: number, runs: number, rate: number): boolean {
  return binomialUpperTail(runs, count, rate) >= SURPRISE;
}

function plausiblyAtLeast(count: number, runs: number, rate: number): boolean {
  return binomialLowerTail(runs, count, rate) >= SURPRISE;
}

const GRID = [1, 3, 10, 20].flatMap((tasks) =>
  [5, 10].flatMap((trialsPerCell) =>
    Object.keys(RATES).map((rate) => ({ tasks, trialsPerCell, rate })),
  ),
);

/** Fewer runs where an experiment has many trials; the pooled check below makes up for it. */
const runsFor = (tasks: number, candidates: number) =>
  Math.round((tasks >= 10 ? 120 : 300) / candidates);

interface GridRow {
  name: string;
  counts: Counts;
}

let gridRows: GridRow[] | undefined;

/** Every design of the grid with 1 and 3 candidates, simulated once (whichever test asks first). */
function nullGrid(): GridRow[] {
  gridRows ??= [1, 3].flatMap((candidates) =>
    GRID.map(({ tasks, trialsPerCell, rate }) => {
      const variants = ["base", ...Array.from({ length: candidates }, (_, i) => `cand${i + 1}`)];
      const rates = Object.fromEntries(variants.map((v) => [v, RATES[rate] as number]));
      const seed = 1000 * tasks + 10 * trialsPerCell + candidates + rate.length;
      return {
        name: `${tasks} task(s) × ${trialsPerCell} trials, pass rate ${rate}, ${candidates} candidate(s)`,
        counts: simulate(
          { tasks, trialsPerCell, variants },
          rates,
          DEFAULT_PAIRED_POLICY,
          runsFor(tasks, candidates),
          seed,
        ),
      };
    }),
  );
  return gridRows;
}

describe("false accepts and false rejects of paired-v1 (fixed design) when the variants are equal", () => {
  it("stays within α/2 each way on every design of the grid", () => {
    for (const { name, counts } of nullGrid()) {
      expect(plausiblyAtMost(counts.accept, counts.runs, ALPHA / 2), `accepts: ${name}`).toBe(true);
      expect(plausiblyAtMost(counts.reject, counts.runs, ALPHA / 2), `rejects: ${name}`).toBe(true);
    }
  });

  it("stays within α/2 each way over every design together (a tighter check)", () => {
    const pooled = nullGrid().reduce(
      (sum, { counts }) => ({
        runs: sum.runs + counts.runs,
        accept: sum.accept + counts.accept,
        reject: sum.reject + counts.reject,
      }),
      { runs: 0, accept: 0, reject: 0 },
    );
    expect(pooled.runs).toBeGreaterThan(4000);
    expect(plausiblyAtMost(pooled.accept, pooled.runs, ALPHA / 2)).toBe(true);
    expect(plausiblyAtMost(pooled.reject, pooled.runs, ALPHA / 2)).toBe(true);
  });
});

describe("power of paired-v1 (fixed design)", () => {
  it.each([
    ["accepts", "better", 0.8, "accept", 42],
    ["rejects", "worse", 0.2, "reject", 43],
  ] as const)(
    "%s a candidate 0.3 %s on 20 tasks × 5 trials at least 95% of the time",
    (_, _how, rate, expected, seed) => {
      const counts = simulate(
        { tasks: 20, trialsPerCell: 5, variants: ["base", "cand"] },
        { base: 0.5, cand: rate },
        DEFAULT_PAIRED_POLICY,
        150,
        seed,
      );
      expect(plausiblyAtLeast(counts[expected], counts.runs, 0.95)).toBe(true);
    },
  );
});

describe("the sequential design under continuous monitoring", () => {
  const sequential: VerdictPolicy = { ...DEFAULT_PAIRED_POLICY, design: "sequential" };
  const design = { tasks: 20, trialsPerCell: 10, variants: ["base", "cand"] };

  it("stays within α/2 each way when the variants are equal, looking after every pair", () => {
    const counts = simulate(design, { base: 0.5, cand: 0.5 }, sequential, 200, 7);
    expect(plausiblyAtMost(counts.accept, counts.runs, ALPHA / 2)).toBe(true);
    expect(plausiblyAtMost(counts.reject, counts.runs, ALPHA / 2)).toBe(true);
  });

  it.each([
    ["better", 0.8, "accept"],
    ["worse", 0.2, "reject"],
  ] as const)(
    "decides a candidate 0.3 %s with at least 30% fewer trials on average, as reliably as the fixed design",
    (_, rate, expected) => {
      const counts = simulate(design, { base: 0.5, cand: rate }, sequential, 150, 11);
      expect(plausiblyAtLeast(counts[expected], counts.runs, 0.95)).toBe(true);
      expect(counts.trialsUsed / counts.runs).toBeLessThan(0.7);
    },
  );
});

describe("infrastructure errors that hide failures", () => {
  // A candidate no better than the baseline whose failures are (all, half, some) recorded as
  // infrastructure errors looks better with them left out. "Counted as failures" must hold its
  // error rate under both designs: the sequential design checks it inside its own sequential
  // test at every look, not once as a fixed test at a moment the data chose.
  const RELABELLINGS: Array<[string, Relabelling]> = [
    ["all of the candidate's failures", { cand: 1 }],
    ["half of the candidate's failures", { cand: 0.5 }],
    ["a random third of either arm's failures", { base: 1 / 3, cand: 1 / 3 }],
  ];
  for (const design of ["fixed", "sequential"] as const)
    it.each(RELABELLINGS)(
      `keeps false accepts within α/2 (${design} design) when %s are recorded as infrastructure errors`,
      (_, relabel) => {
        const policy: VerdictPolicy = { ...DEFAULT_PAIRED_POLICY, design };
        let runs = 0;
        let accepts = 0;
        for (const [index, tasks] of [3, 10, 20].entries()) {
          const counts = simulate(
            { tasks, trialsPerCell: 10, variants: ["base", "cand"] },
            { base: 0.5, cand: 0.5 },
            policy,
            tasks >= 10 ? 150 : 300,
            97 + index,
            relabel,
          );
          runs += counts.runs;
          accepts += counts.accept;
        }
        expect(plausiblyAtMost(accepts, runs, ALPHA / 2), `${accepts} of ${runs}`).toBe(true);
      },
    );
});
