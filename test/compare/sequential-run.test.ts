// A run under the sequential design: trials planned round by round, the run stops once the
// boundary is crossed, and the verdict says which design decided; regrade decides it the same way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { regradeRun, type VerdictDocument } from "../../src/compare/index.js";
import {
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

let exp: TempExperiment;
let verdict: VerdictDocument;

beforeAll(async () => {
  exp = await makeExperiment({
    manifest: syntheticManifest({
      trials: { count: 8, seed: 3, order: "randomized" },
      concurrency: 1,
      verdict: { policy: "paired-v1", alpha: 0.5, maxCostRatio: 1.25, design: "sequential" },
    }),
  });
  ({ verdict } = await runManifest(exp.manifestPath, {
    outDir: exp.outDir,
    tempParent: exp.trialsDir,
  }));
});

afterAll(() => exp.cleanup());

describe("compare run under the sequential design", () => {
  it("stops as soon as the boundary is crossed, without --stop-early", () => {
    // The fixer wins every pair: at one-sided 0.25 the boundary is reached at the fourth pair.
    const comparison = verdict.statistics!.comparisons[0]!;
    expect(verdict.status).toBe("accept");
    expect(verdict.stoppedEarly).toBe(true);
    expect(comparison.test?.design).toBe("sequential");
    expect(comparison.test?.sequential).toMatchObject({ decidedAtPair: 4, plannedPairs: 8 });
    expect(verdict.trials).toHaveLength(8);
    expect(verdict.reason).toMatch(
      /^stopped early after 8 of 16 trials, the status being settled: the sequential design crossed its boundary: fixer is better than baseline/,
    );
  });

  it("ran the trials round by round in the planned order", async () => {
    const manifest = (await readJson(exp.outDir, "manifest.json")) as {
      evidence: { executionOrder: Array<{ trial: number }> };
    };
    const rounds = manifest.evidence.executionOrder.map((j) => j.trial);
    expect(rounds).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8]);
    expect(verdict.trials.map((t) => t.seq).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
  });

  it("says in the report which design decided", async () => {
    const { readFile } = await import("node:fs/promises");
    const md = await readFile(`${exp.outDir}/verdict.md`, "utf8");
    expect(md).toContain(
      "Decided by the sequential design (pairs of trials looked at in planned order, O'Brien–Fleming error spending): fixer crossed its boundary at pair 4 of 8, after 8 planned trials.",
    );
  });

  it("is decided the same way again by regrade", async () => {
    const regraded = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(regraded.verdict.status).toBe("accept");
    expect(regraded.verdict.statistics?.comparisons[0]?.test?.sequential?.decidedAtPair).toBe(4);
  });
});
