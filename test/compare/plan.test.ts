import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type Experiment,
  mulberry32,
  planTrials,
  shuffleInPlace,
  type TrialJob,
} from "../../src/compare/index.js";
import { DEFAULT_PAIRED_POLICY } from "../../src/stats/index.js";

/** The parts of an experiment planning reads. */
function experiment(options: {
  tasks?: string[];
  variants?: string[];
  count: number;
  seed: number;
  order?: "randomized" | "sequential";
  layout?: "v1" | "v2";
}): Experiment {
  const variants = options.variants ?? ["H0", "H1"];
  return {
    schemaVersion: options.layout === "v2" ? "harness-compare.v2" : "harness-compare.v1",
    layout: options.layout ?? "v1",
    manifestPath: "/m/experiment.json",
    manifestDir: "/m",
    harnessFiles: ["/m/a.harness"],
    tasks: (options.tasks ?? ["task"]).map((id, index) => ({
      id,
      fixtureDir: "/m/fixture",
      promptFile: "/m/prompt.md",
      prompt: "",
      expectedFiles: [],
      graders: [],
      manifestField: `tasks[${index}]`,
    })),
    variants: variants.map((id, index) => ({
      id,
      label: id,
      composition: `c${index}`,
      isBaseline: index === 0,
      compositionField: `variants[${index}].composition`,
      manifestField: `variants[${index}]`,
    })),
    baseline: variants[0]!,
    runtime: { host: "scripted", timeoutMs: 1000, network: "deny", validationCommands: [] },
    trials: {
      count: options.count,
      manifestCount: options.count,
      seed: options.seed,
      order: options.order ?? "randomized",
    },
    verdict: { kind: "heuristic-v1" },
    concurrency: 1,
    diskBudgetBytes: 1024 * 1024 * 1024,
  };
}

const short = (jobs: TrialJob[]) => jobs.map((j) => `${j.variant}/${j.trialIndex}`).join(" ");

describe("mulberry32", () => {
  it("produces the reference stream for a seed", () => {
    const random = mulberry32(20260815);
    expect([random(), random(), random()]).toEqual([
      0.9873921487014741, 0.0033658386673778296, 0.6687116059474647,
    ]);
  });

  it("reduces the seed to uint32", () => {
    const a = mulberry32(2 ** 32 + 5);
    const b = mulberry32(5);
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
  });

  it("returns floats in [0, 1)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (seed) => {
        const random = mulberry32(seed);
        for (let i = 0; i < 50; i += 1) {
          const value = random();
          expect(value).toBeGreaterThanOrEqual(0);
          expect(value).toBeLessThan(1);
        }
      }),
    );
  });
});

describe("shuffleInPlace", () => {
  it("reaches every ordering of three items across seeds", () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 200; seed += 1)
      seen.add(shuffleInPlace(["a", "b", "c"], mulberry32(seed)).join(""));
    expect([...seen].sort()).toEqual(["abc", "acb", "bac", "bca", "cab", "cba"]);
  });
});

describe("planTrials", () => {
  it("reproduces the seed system's order for the conformance experiment (seed 20260815, 5 trials)", () => {
    const jobs = planTrials(experiment({ count: 5, seed: 20260815 }));
    expect(short(jobs)).toBe("H0/3 H1/2 H0/2 H1/1 H1/4 H0/4 H0/5 H1/3 H0/1 H1/5");
    expect(jobs[0]).toEqual({ seq: 1, task: "task", variant: "H0", trialIndex: 3 });
  });

  it("gives a fixed order for a fixed seed", () => {
    expect(short(planTrials(experiment({ count: 3, seed: 1 })))).toBe(
      "H0/3 H1/1 H1/3 H0/2 H0/1 H1/2",
    );
  });

  it("is deterministic for a seed", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.integer({ min: 1, max: 20 }),
        (seed, count) => {
          expect(planTrials(experiment({ count, seed }))).toEqual(
            planTrials(experiment({ count, seed })),
          );
        },
      ),
    );
  });

  it("plans every task × variant × trial exactly once, numbered 1..n", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 2, max: 5 }),
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom("randomized" as const, "sequential" as const),
        (seed, count, variantCount, taskCount, order) => {
          const tasks = Array.from({ length: taskCount }, (_, i) => `t${i}`);
          const variants = Array.from({ length: variantCount }, (_, i) => `v${i}`);
          const jobs = planTrials(
            experiment({ tasks, variants, count, seed, order, layout: "v2" }),
          );
          expect(jobs.map((j) => j.seq)).toEqual(jobs.map((_, i) => i + 1));
          const keys = jobs.map((j) => `${j.task}|${j.variant}|${j.trialIndex}`);
          const expected = tasks.flatMap((t) =>
            variants.flatMap((v) => Array.from({ length: count }, (_, i) => `${t}|${v}|${i + 1}`)),
          );
          expect([...keys].sort()).toEqual([...expected].sort());
          // Tasks run in manifest order, each one's trials together.
          const taskOrder = jobs.map((j) => j.task).filter((t, i, all) => all[i - 1] !== t);
          expect(taskOrder).toEqual(tasks);
        },
      ),
    );
  });

  it("keeps the natural trial-major order when sequential", () => {
    const jobs = planTrials(
      experiment({ count: 2, seed: 99, order: "sequential", variants: ["a", "b", "c"] }),
    );
    expect(short(jobs)).toBe("a/1 b/1 c/1 a/2 b/2 c/2");
  });

  it("shuffles each task with one seeded stream, in task order", () => {
    const jobs = planTrials(experiment({ tasks: ["one", "two"], count: 2, seed: 7, layout: "v2" }));
    expect(jobs.map((j) => `${j.task}:${j.variant}/${j.trialIndex}`)).toEqual([
      "one:H0/2",
      "one:H1/1",
      "one:H1/2",
      "one:H0/1",
      "two:H1/2",
      "two:H0/1",
      "two:H1/1",
      "two:H0/2",
    ]);
  });

  it("plans a sequential design round by round: trial 1 of every task and variant, then trial 2", () => {
    const base = experiment({ tasks: ["one", "two"], count: 3, seed: 7, layout: "v2" });
    const sequential = {
      ...base,
      verdict: { ...DEFAULT_PAIRED_POLICY, design: "sequential" as const },
    };
    const jobs = planTrials(sequential);
    expect(jobs.map((j) => j.trialIndex)).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    expect(jobs.map((j) => j.seq)).toEqual(jobs.map((_, i) => i + 1));
    // Each round holds every task × variant once, shuffled by the seed.
    for (let round = 0; round < 3; round++)
      expect(
        jobs
          .slice(round * 4, round * 4 + 4)
          .map((j) => `${j.task}:${j.variant}`)
          .sort(),
      ).toEqual(["one:H0", "one:H1", "two:H0", "two:H1"]);
    expect(planTrials(sequential)).toEqual(jobs);
    const inOrder = planTrials({
      ...sequential,
      trials: { ...sequential.trials, order: "sequential" },
    });
    expect(inOrder.slice(0, 4).map((j) => `${j.task}:${j.variant}/${j.trialIndex}`)).toEqual([
      "one:H0/1",
      "one:H1/1",
      "two:H0/1",
      "two:H1/1",
    ]);
  });

  it("plans only the lowered count after --trials", () => {
    const base = experiment({ count: 5, seed: 20260815 });
    const lowered = { ...base, trials: { ...base.trials, count: 2 } };
    expect(planTrials(lowered)).toHaveLength(4);
    expect(Math.max(...planTrials(lowered).map((j) => j.trialIndex))).toBe(2);
  });
});
