// --max-cost-usd and --max-tokens: a trial starts only if it could not take the run's spending
// past the limit, and the verdict says when the budget decided.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { budgetReached, type TrialMetrics, type VerdictDocument } from "../../src/compare/index.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";
import {
  makeExperiment,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";
import { passedTrialMetrics } from "../support/metrics.js";

function finished(costUsd: number | null, retried: number[] = [], output?: number): TrialMetrics {
  return passedTrialMetrics({
    tokens:
      output === undefined
        ? null
        : { uncachedInput: 100, cacheRead: null, cacheWrite: null, output, reasoning: null },
    costUsd,
    retriedAttempts: retried.map((cost, i) => ({
      attempt: i + 1,
      infraReason: "rate_limited",
      explanation: "",
      dir: `attempts/${i + 1}`,
      durationMs: 1,
      costUsd: cost,
    })),
  });
}

describe("budgetReached", () => {
  it("stops when the spending plus one more trial as large as the largest could pass the limit", () => {
    const spent = [finished(0.3), finished(0.5)];
    expect(budgetReached({ maxCostUsd: 1.3 }, spent, 0, 10)).toBeNull();
    expect(budgetReached({ maxCostUsd: 1.29 }, spent, 0, 10)).toMatchObject({
      limit: "max-cost-usd",
      value: 1.29,
      spent: 0.8,
      largestTrial: 0.5,
      running: 0,
      trialsRun: 2,
      trialsPlanned: 10,
    });
  });

  it("counts nothing spent for trials taken from the trial cache, but sizes the next trial by them", () => {
    const cached = {
      ...finished(0.9),
      cachedFrom: { entry: "k/e", contentKey: `sha256:${"0".repeat(64)}` },
    };
    // Paid by an earlier run: 0.3 spent here; the next trial could take as much as 0.9.
    expect(budgetReached({ maxCostUsd: 1.2 }, [finished(0.3), cached], 0, 10)).toBeNull();
    expect(budgetReached({ maxCostUsd: 1.19 }, [finished(0.3), cached], 0, 10)).toMatchObject({
      spent: 0.3,
      largestTrial: 0.9,
    });
  });

  it("counts the trials still running as each using as much as the largest", () => {
    expect(budgetReached({ maxCostUsd: 1.8 }, [finished(0.3), finished(0.5)], 1, 10)).toBeNull();
    expect(
      budgetReached({ maxCostUsd: 1.7 }, [finished(0.3), finished(0.5)], 2, 10),
    ).not.toBeNull();
  });

  it("counts the cost of retried attempts as part of their trial", () => {
    const stop = budgetReached({ maxCostUsd: 0.9 }, [finished(0.2, [0.3])], 0, 4);
    expect(stop).toMatchObject({ spent: 0.5, largestTrial: 0.5 });
  });

  it("knows nothing before a trial reported an amount, and stops nothing then", () => {
    expect(budgetReached({ maxCostUsd: 0.01 }, [], 3, 4)).toBeNull();
    expect(budgetReached({ maxCostUsd: 0.01 }, [finished(null)], 0, 4)).toBeNull();
  });

  it("adds every kind of token a trial reported", () => {
    const stop = budgetReached({ maxTokens: 499 }, [finished(null, [], 150)], 0, 4);
    expect(stop).toMatchObject({ limit: "max-tokens", spent: 250, largestTrial: 250 });
  });
});

/** The scripted host, each trial reporting $0.10. */
function costingExecutor(): Executor {
  const inner = new ScriptedExecutor();
  return {
    host: inner.host,
    async run(input) {
      return { ...(await inner.run(input)), costUsd: 0.1 };
    },
  };
}

describe("compare run with --max-cost-usd", () => {
  let exp: TempExperiment;
  let verdict: VerdictDocument;

  beforeAll(async () => {
    exp = await makeExperiment({
      manifest: syntheticManifest({
        trials: { count: 4, seed: 7, order: "randomized" },
        concurrency: 1,
      }),
    });
    ({ verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      budget: { maxCostUsd: 0.45 },
      executorFor: () => costingExecutor(),
    }));
  });

  afterAll(() => exp.cleanup());

  it("stops starting trials once the next could pass the limit, and says the budget decided", () => {
    // $0.10 a trial: after 4 trials ($0.40) a fifth could reach $0.50 > $0.45.
    expect(verdict.trials).toHaveLength(4);
    expect(verdict.budgetStop).toEqual({
      limit: "max-cost-usd",
      value: 0.45,
      spent: expect.closeTo(0.4, 10),
      largestTrial: 0.1,
      running: 0,
      trialsRun: 4,
      trialsPlanned: 8,
    });
    expect(verdict.reason).toMatch(
      /^the budget stopped the run: --max-cost-usd 0\.45 was reached after 4 of 8 trials \(\$0\.40 used; the largest trial used \$0\.10, so the next could have gone over\); the trials that ran: /,
    );
  });
});
