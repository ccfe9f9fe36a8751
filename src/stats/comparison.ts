// Policy-free statistics of one candidate against the baseline on the tasks both completed.
import type {
  Aggregates,
  CellAggregate,
  CostCheck,
  DecisionTest,
  DifferenceInterval,
  ExactTestMethod,
  FlippedTask,
  RateSummary,
} from "./contract.js";
import { fixedTest } from "./fixed-test.js";
import { formatLimit, formatRate, formatRatio, plural } from "./format.js";
import type { TwoByTwo } from "./intervals.js";
import { atMost } from "./tolerance.js";

/** A variant's cell with no completed trial: the comparison cannot use that task. */
export interface MissingCell {
  variant: string;
  task: string;
  trials: number;
  infraErrors: number;
}

type Pair<T> = { variant: T; baseline: T };

export interface PairStatistics {
  variant: string;
  baseline: string;
  /** Every task of the experiment. */
  allTasks: string[];
  /** Tasks where both variants have completed trials. */
  tasks: string[];
  missing: MissingCell[];
  passRate: Pair<RateSummary>;
  difference: number | null;
  interval: DifferenceInterval | null;
  infraAsFailure: { difference: number | null; interval: DifferenceInterval | null };
  exactPValue: number | null;
  exactTestMethod: ExactTestMethod | null;
  /** The test behind `difference` and `interval`; null without compared tasks. */
  test: DecisionTest | null;
  /** Completed trials as 2×2 tables, one per compared task (what the tests read). */
  strata: TwoByTwo[];
  meanScore: Pair<number | null>;
  meanCostUsd: Pair<number | null>;
  /** Mean USD per completed trial, with list-price estimates where a host reported none. */
  meanUsdWithEstimates: Pair<number | null>;
  meanCredits: Pair<number | null>;
  costRatio: { usd: number | null; credits: number | null; usdWithEstimates: number | null };
  passRatePerUsd: Pair<number | null>;
  passRatePerCredit: Pair<number | null>;
  flippedTasks: FlippedTask[];
  /** Completed trials per task, on every task of the experiment. */
  completedPerTask: Pair<number[]>;
  /** Infrastructure errors of both variants on the compared tasks. */
  infraErrors: number;
}

export class CellIndex {
  private readonly cells = new Map<string, CellAggregate>();
  constructor(aggregates: Aggregates) {
    for (const cell of aggregates.cells)
      this.cells.set(JSON.stringify([cell.variant, cell.task]), cell);
  }
  get(variant: string, task: string): CellAggregate {
    const cell = this.cells.get(JSON.stringify([variant, task]));
    if (!cell) throw new Error(`no aggregate for ${variant} on ${task}`);
    return cell;
  }
}

function meanOrNull(values: readonly (number | null)[]): number | null {
  if (values.length === 0 || values.some((v) => v === null)) return null;
  return (values as number[]).reduce((a, b) => a + b, 0) / values.length;
}

function ratioOrNull(numerator: number | null, denominator: number | null): number | null {
  if (numerator === null || denominator === null || denominator === 0) return null;
  return numerator / denominator;
}

/** The fixed design's difference, interval and test at level 1 − alpha. */
function fixedDesignOf(
  strata: readonly TwoByTwo[],
  alpha: number,
): { difference: number; interval: DifferenceInterval; test: DecisionTest } {
  const result = fixedTest(strata, alpha);
  return {
    difference: result.difference,
    interval: {
      lower: result.lower,
      upper: result.upper,
      level: 1 - alpha,
      method: "score-with-exact-test",
    },
    test: {
      design: "fixed",
      method: "exact-conditional-and-score",
      pValue: result.pValue,
      threshold: alpha,
      exact: result.exact,
      score: result.score,
      sequential: null,
    },
  };
}

function flipOf(task: string, variantRate: number, baselineRate: number): FlippedTask | null {
  const majority = (rate: number) => (rate > 0.5 ? "pass" : rate < 0.5 ? "fail" : "tie");
  const before = majority(baselineRate);
  const after = majority(variantRate);
  if (before === "fail" && after === "pass")
    return {
      task,
      direction: "improved",
      variantPassRate: variantRate,
      baselinePassRate: baselineRate,
    };
  if (before === "pass" && after === "fail")
    return {
      task,
      direction: "regressed",
      variantPassRate: variantRate,
      baselinePassRate: baselineRate,
    };
  return null;
}

/**
 * Everything the policies decide from, for `variant` against `baseline`. Rates, scores and
 * costs are means over the compared tasks, each task weighing the same. `alpha` sets the
 * intervals' level.
 */
export function pairStatistics(
  cells: CellIndex,
  allTasks: readonly string[],
  variant: string,
  baseline: string,
  alpha: number,
): PairStatistics {
  const missing: MissingCell[] = [];
  for (const name of [variant, baseline])
    for (const task of allTasks) {
      const cell = cells.get(name, task);
      if (cell.completed === 0)
        missing.push({ variant: name, task, trials: cell.trials, infraErrors: cell.infraErrors });
    }
  const tasks = allTasks.filter(
    (task) => cells.get(variant, task).completed > 0 && cells.get(baseline, task).completed > 0,
  );
  const pairs = tasks.map((task) => ({
    task,
    v: cells.get(variant, task),
    b: cells.get(baseline, task),
  }));
  const rateOf = (pick: (p: (typeof pairs)[number]) => CellAggregate): RateSummary => ({
    excludingInfra: meanOrNull(pairs.map((p) => pick(p).passRate.excludingInfra)),
    infraAsFailure: meanOrNull(pairs.map((p) => pick(p).passRate.infraAsFailure)),
  });
  const passRate = { variant: rateOf((p) => p.v), baseline: rateOf((p) => p.b) };

  const completedStrata = pairs.map(({ v, b }) => ({
    successes1: v.passed,
    trials1: v.completed,
    successes0: b.passed,
    trials0: b.completed,
  }));
  const allTrialStrata = pairs.map(({ v, b }) => ({
    successes1: v.passed,
    trials1: v.trials,
    successes0: b.passed,
    trials0: b.trials,
  }));
  const main = tasks.length > 0 ? fixedDesignOf(completedStrata, alpha) : null;
  const anyInfra = pairs.some(({ v, b }) => v.infraErrors > 0 || b.infraErrors > 0);
  const withInfra = !anyInfra
    ? main
    : tasks.length > 0
      ? fixedDesignOf(allTrialStrata, alpha)
      : null;

  const meanCost = (pick: (c: CellAggregate) => number | null | undefined) => ({
    variant: meanOrNull(pairs.map((p) => pick(p.v) ?? null)),
    baseline: meanOrNull(pairs.map((p) => pick(p.b) ?? null)),
  });
  const meanCostUsd = meanCost((c) => c.costUsd?.meanPerCompletedTrial);
  const meanUsdWithEstimates = meanCost((c) => c.usdWithEstimates?.meanPerCompletedTrial);
  const meanCredits = meanCost((c) => c.credits?.meanPerCompletedTrial);
  const meanScore = {
    variant: meanOrNull(pairs.map((p) => p.v.meanScore)),
    baseline: meanOrNull(pairs.map((p) => p.b.meanScore)),
  };

  const flippedTasks = pairs
    .map(({ task, v, b }) =>
      flipOf(task, v.passRate.excludingInfra as number, b.passRate.excludingInfra as number),
    )
    .filter((f): f is FlippedTask => f !== null);

  return {
    variant,
    baseline,
    allTasks: [...allTasks],
    tasks,
    missing,
    passRate,
    difference: main?.difference ?? null,
    interval: main?.interval ?? null,
    infraAsFailure: {
      difference: withInfra?.difference ?? null,
      interval: withInfra?.interval ?? null,
    },
    exactPValue:
      main === null
        ? null
        : Math.min(1, 2 * Math.min(main.test.exact?.upper ?? 1, main.test.exact?.lower ?? 1)),
    exactTestMethod:
      tasks.length === 0
        ? null
        : tasks.length === 1
          ? "fisher-exact"
          : "stratified-exact-conditional",
    test: main?.test ?? null,
    strata: completedStrata,
    meanScore,
    meanCostUsd,
    meanUsdWithEstimates,
    meanCredits,
    costRatio: {
      usd: ratioOrNull(meanCostUsd.variant, meanCostUsd.baseline),
      usdWithEstimates: ratioOrNull(meanUsdWithEstimates.variant, meanUsdWithEstimates.baseline),
      credits: ratioOrNull(meanCredits.variant, meanCredits.baseline),
    },
    passRatePerUsd: {
      variant: ratioOrNull(passRate.variant.excludingInfra, meanCostUsd.variant),
      baseline: ratioOrNull(passRate.baseline.excludingInfra, meanCostUsd.baseline),
    },
    passRatePerCredit: {
      variant: ratioOrNull(passRate.variant.excludingInfra, meanCredits.variant),
      baseline: ratioOrNull(passRate.baseline.excludingInfra, meanCredits.baseline),
    },
    flippedTasks,
    completedPerTask: {
      variant: allTasks.map((task) => cells.get(variant, task).completed),
      baseline: allTasks.map((task) => cells.get(baseline, task).completed),
    },
    infraErrors: pairs.reduce((sum, p) => sum + p.v.infraErrors + p.b.infraErrors, 0),
  };
}

const CURRENCY = {
  usd: { label: "USD", amount: "USD cost" },
  credits: { label: "credits", amount: "credits" },
} as const;

/**
 * One cost test per currency. A test runs only when both variants report that currency and
 * the baseline's mean is above 0; otherwise it is skipped and says why. When USD cannot be
 * compared as reported (a host that reports tokens only), it is compared with list-price
 * estimates for the trials that reported none, when both variants have them; the check says so.
 */
export function costChecks(stats: PairStatistics, maxRatio: number): CostCheck[] {
  const checks = reportedCostChecks(stats, maxRatio);
  const usd = checks.find((c) => c.currency === "usd");
  const estimated = stats.meanUsdWithEstimates;
  if (
    usd?.status === "skipped" &&
    estimated.variant !== null &&
    estimated.baseline !== null &&
    estimated.baseline > 0
  ) {
    const ratio = estimated.variant / estimated.baseline;
    const passed = atMost(ratio, maxRatio);
    checks.splice(checks.indexOf(usd) + 1, 0, {
      currency: "usd-estimated",
      status: passed ? "passed" : "failed",
      ratio,
      maxRatio,
      detail: `USD cost ratio ${formatRatio(ratio, maxRatio)} ${passed ? "≤" : ">"} ${formatLimit(maxRatio)}, with list-price estimates from tokens where a host reported no USD`,
    });
  }
  return checks;
}

function reportedCostChecks(stats: PairStatistics, maxRatio: number): CostCheck[] {
  const checks: CostCheck[] = [];
  for (const currency of ["usd", "credits"] as const) {
    const means = currency === "usd" ? stats.meanCostUsd : stats.meanCredits;
    const { label, amount } = CURRENCY[currency];
    const skipped = (why: string): CostCheck => ({
      currency,
      status: "skipped",
      ratio: null,
      maxRatio,
      detail: `${label} cost test skipped: ${why}`,
    });
    if (means.baseline === null && means.variant === null)
      checks.push(skipped(`neither variant reported ${amount}`));
    else if (means.baseline === null)
      checks.push(skipped(`${stats.baseline} reported no ${amount}`));
    else if (means.baseline === 0) checks.push(skipped(`${stats.baseline}'s ${label} cost is 0`));
    else if (means.variant === null) checks.push(skipped(`${stats.variant} reported no ${amount}`));
    else {
      const ratio = means.variant / means.baseline;
      const passed = atMost(ratio, maxRatio);
      checks.push({
        currency,
        status: passed ? "passed" : "failed",
        ratio,
        maxRatio,
        detail: `${label} cost ratio ${formatRatio(ratio, maxRatio)} ${passed ? "≤" : ">"} ${formatLimit(maxRatio)}`,
      });
    }
  }
  return checks;
}

/** "5 trials each", "5 vs 4 completed trials", "over 3 tasks, 3–5 completed trials per variant per task". */
export function describeTrialCounts(stats: PairStatistics): string {
  const counts = stats.tasks.flatMap((task) => {
    const i = stats.allTasks.indexOf(task);
    return [
      stats.completedPerTask.variant[i] as number,
      stats.completedPerTask.baseline[i] as number,
    ];
  });
  const low = Math.min(...counts);
  const high = Math.max(...counts);
  if (stats.tasks.length === 1) {
    const [v, b] = counts as [number, number];
    return v === b ? `${plural(v, "completed trial")} each` : `${v} vs ${b} completed trials`;
  }
  const range = low === high ? `${low}` : `${low}–${high}`;
  return `over ${stats.tasks.length} tasks, ${range} completed trial${high === 1 ? "" : "s"} per variant per task`;
}

/** "2 infrastructure errors excluded (counted as failures: pass rate 0.60 vs 0.20)", or "". */
export function describeInfraExclusion(stats: PairStatistics): string {
  if (stats.infraErrors === 0) return "";
  return `${plural(stats.infraErrors, "infrastructure error")} excluded (counted as failures: pass rate ${formatRate(
    stats.passRate.variant.infraAsFailure,
  )} vs ${formatRate(stats.passRate.baseline.infraAsFailure)})`;
}

/** "cand on task t1 (3 infrastructure errors), base on task t2 (no trials)". */
export function describeMissing(missing: readonly MissingCell[]): string {
  return missing
    .map(
      (m) =>
        `${m.variant} on task ${m.task} (${m.trials === 0 ? "no trials" : plural(m.infraErrors, "infrastructure error")})`,
    )
    .join(", ");
}
