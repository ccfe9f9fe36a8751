// The verdict: every candidate compared with the baseline under the chosen policy, and one
// overall status from those comparisons.
import { aggregateLayout } from "./aggregate.js";
import {
  CellIndex,
  describeMissing,
  type MissingCell,
  type PairStatistics,
  pairStatistics,
} from "./comparison.js";
import {
  type Comparison,
  type TrialRecord,
  trialRecordSchema,
  type Verdict,
  type VerdictOptions,
  type VerdictPolicy,
  type VerdictStatistics,
  type VerdictStatus,
  verdictPolicySchema,
} from "./contract.js";
import { formatSigned, plural } from "./format.js";
import { decideHeuristic, HEURISTIC_REPORTING_ALPHA } from "./heuristic.js";
import { compareText, type Layout, layoutOf } from "./layout.js";
import { familyOf } from "./multiplicity.js";
import { decidePaired } from "./paired.js";
import { pairsInPlannedOrder, sequentialSignTest } from "./sequential.js";

/**
 * Refuses records the published schema refuses (a NaN or negative cost, a fractional trial
 * number, an outcome spelled "PASSED"), naming the record and the field: a verdict decided on
 * them would look sound and mean nothing.
 */
export function checkTrialRecords(trials: readonly TrialRecord[]): void {
  for (const [index, trial] of trials.entries()) {
    const parsed = trialRecordSchema.safeParse(trial);
    if (parsed.success) continue;
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join(".") ?? "";
    throw new RangeError(
      `trial record ${index} (${JSON.stringify((trial as { variant?: unknown }).variant)}, task ${JSON.stringify((trial as { task?: unknown }).task)}, trial ${JSON.stringify((trial as { trial?: unknown }).trial)}) cannot be decided on: ${field === "" ? "" : `${field}: `}${issue?.message ?? "invalid"} (as harnesslab/stats' trialRecordSchema says)`,
    );
  }
}

function checkedPolicy(policy: VerdictPolicy): VerdictPolicy {
  const parsed = verdictPolicySchema.safeParse(policy);
  if (!parsed.success)
    throw new RangeError(
      `invalid verdict policy: ${parsed.error.issues.map((i) => i.message).join("; ")}`,
    );
  return parsed.data;
}

/** Ranks accepted candidates: larger difference, then larger lower bound, then larger score gap, then name. */
function betterFirst(a: Comparison, b: Comparison): number {
  const byNumber = (x: number | null | undefined, y: number | null | undefined) =>
    (y ?? -Infinity) - (x ?? -Infinity);
  const scoreGap = (c: Comparison) =>
    c.meanScore.variant !== null && c.meanScore.baseline !== null
      ? c.meanScore.variant - c.meanScore.baseline
      : null;
  return (
    byNumber(a.difference, b.difference) ||
    byNumber(a.interval?.lower, b.interval?.lower) ||
    byNumber(scoreGap(a), scoreGap(b)) ||
    compareText(a.variant, b.variant)
  );
}

/**
 * The sequential design's difference, repeated interval and test for one comparison, at the
 * family's per-comparison alpha (split evenly between the two sides).
 */
function sequentialDesignOf(
  layout: Layout,
  variant: string,
  baseline: string,
  options: VerdictOptions,
  alpha: number,
): Pick<PairStatistics, "difference" | "interval" | "test" | "infraAsFailure"> {
  const { order, plannedTrials } = options;
  if (order === undefined || plannedTrials === undefined)
    throw new RangeError("the sequential design needs the planned order and trials per cell");
  const planned = pairsInPlannedOrder(layout, variant, baseline, order, plannedTrials);
  const result = sequentialSignTest(planned.pairs, planned.plannedPairs, alpha / 2);
  // "Counted as failures" is a sequential test of its own, looked at with the same spending at
  // every look: checked once, as a fixed test at a moment the data chose, it would let a
  // candidate whose failures are labelled infrastructure errors through more often than alpha/2.
  const counted = pairsInPlannedOrder(layout, variant, baseline, order, plannedTrials, true);
  const withInfra = sequentialSignTest(counted.pairs, counted.plannedPairs, alpha / 2);
  const look = result.look;
  const threshold = Math.min(1, 2 * (look?.threshold ?? 0));
  const at = result.decidedAtPair;
  return {
    difference: result.difference,
    interval:
      result.difference === null
        ? null
        : {
            lower: result.lower,
            upper: result.upper,
            level: Math.max(1 - threshold, Number.EPSILON),
            method: "sequential-sign",
          },
    test:
      look === null
        ? null
        : {
            design: "sequential",
            method: "sequential-sign",
            pValue: Math.min(1, 2 * Math.min(look.upperP, look.lowerP)),
            threshold,
            exact: null,
            score: null,
            sequential: {
              spending: "obrien-fleming",
              plannedPairs: planned.plannedPairs,
              pairs: look.pairs,
              usablePairs: look.usablePairs,
              wins: look.wins,
              losses: look.losses,
              decidedAtPair: at,
              decidedAfterTrials: at === null ? null : (planned.positions[at - 1] as number),
              infraAsFailure: {
                wins: withInfra.look?.wins ?? 0,
                losses: withInfra.look?.losses ?? 0,
                decided: withInfra.decided,
                decidedAtPair: withInfra.decidedAtPair,
              },
            },
          },
    infraAsFailure: {
      difference: withInfra.difference,
      interval:
        withInfra.difference === null
          ? null
          : {
              lower: withInfra.lower,
              upper: withInfra.upper,
              level: Math.max(
                1 - Math.min(1, 2 * (withInfra.look?.threshold ?? 0)),
                Number.EPSILON,
              ),
              method: "sequential-sign",
            },
    },
  };
}

function compareAll(
  layout: Layout,
  cells: CellIndex,
  options: VerdictOptions,
  policy: VerdictPolicy,
): Comparison[] {
  const { baseline } = options;
  // k counts every planned candidate, one that completed nothing included: the family is
  // fixed before the data are seen, and canStopEarly relies on k not changing as trials arrive.
  const candidates = layout.variants.length - 1;
  const family = policy.kind === "paired-v1" ? familyOf(policy.alpha, candidates) : null;
  const alpha = family === null ? HEURISTIC_REPORTING_ALPHA : family.comparisonAlpha;
  return layout.variants
    .filter((variant) => variant !== baseline)
    .map((variant) => {
      const fixed = pairStatistics(cells, layout.tasks, variant, baseline, alpha);
      const stats =
        policy.kind === "paired-v1" && policy.design === "sequential" && fixed.tasks.length > 0
          ? { ...fixed, ...sequentialDesignOf(layout, variant, baseline, options, alpha) }
          : fixed;
      const decision =
        policy.kind === "paired-v1" && family !== null
          ? decidePaired(stats, policy, family)
          : decideHeuristic(stats);
      return {
        variant,
        baseline,
        status: decision.status,
        reason: decision.reason,
        tasks: stats.tasks,
        passRate: stats.passRate,
        difference: stats.difference,
        interval: stats.interval,
        infraAsFailure: stats.infraAsFailure,
        exactPValue: stats.exactPValue,
        exactTestMethod: stats.exactTestMethod,
        test: stats.test,
        toSettle: decision.toSettle ?? null,
        meanScore: stats.meanScore,
        meanCostUsd: stats.meanCostUsd,
        meanUsdWithEstimates: stats.meanUsdWithEstimates,
        meanCredits: stats.meanCredits,
        costRatio: stats.costRatio,
        costChecks: decision.costChecks,
        passRatePerUsd: stats.passRatePerUsd,
        passRatePerCredit: stats.passRatePerCredit,
        flippedTasks: stats.flippedTasks,
        enoughTrials: decision.enoughTrials,
      };
    });
}

function missingCells(layout: Layout, cells: CellIndex): MissingCell[] {
  const missing: MissingCell[] = [];
  for (const variant of layout.variants)
    for (const task of layout.tasks) {
      const cell = cells.get(variant, task);
      if (cell.completed === 0)
        missing.push({ variant, task, trials: cell.trials, infraErrors: cell.infraErrors });
    }
  return missing;
}

function overall(
  comparisons: readonly Comparison[],
  missing: readonly MissingCell[],
  baseline: string,
): { status: VerdictStatus; reason: string; best: string | null } {
  if (missing.length > 0)
    return {
      status: "infrastructure_error",
      reason: `no verdict: no completed trial for ${describeMissing(missing)}`,
      best: null,
    };
  if (comparisons.length === 1) {
    const only = comparisons[0] as Comparison;
    return {
      status: only.status,
      reason: only.reason,
      best: only.status === "accept" ? only.variant : null,
    };
  }
  const details = comparisons.map((c) => `${c.variant}: ${c.status} — ${c.reason}`).join(". ");
  const accepted = comparisons.filter((c) => c.status === "accept").sort(betterFirst);
  const total = comparisons.length;
  if (accepted.length > 0) {
    const best = accepted[0] as Comparison;
    const gap = best.difference === null ? "" : ` (difference ${formatSigned(best.difference)})`;
    return {
      status: "accept",
      reason: `${accepted.length} of ${plural(total, "candidate")} accepted; best: ${best.variant}${gap}. ${details}`,
      best: best.variant,
    };
  }
  if (comparisons.every((c) => c.status === "reject"))
    return {
      status: "reject",
      reason: `all ${total} candidates are worse than ${baseline}. ${details}`,
      best: null,
    };
  return {
    status: "need_more_work",
    reason: `no candidate accepted and not all rejected. ${details}`,
    best: null,
  };
}

function verdictOf(layout: Layout, cells: CellIndex, options: VerdictOptions): Verdict {
  const policy = checkedPolicy(options.policy);
  if (options.variants !== undefined && !options.variants.includes(options.baseline))
    throw new RangeError(`the baseline ${options.baseline} is not among the planned variants`);
  if (layout.variants.length < 2)
    throw new RangeError(
      `a verdict needs at least one variant besides the baseline ${options.baseline}`,
    );
  const comparisons = compareAll(layout, cells, options, policy);
  const decided = overall(comparisons, missingCells(layout, cells), options.baseline);
  // Cost tests matter only where the pass rate is shown to be higher.
  const skipped = [
    ...new Set(
      comparisons
        .filter((c) => (c.interval?.lower ?? 0) > 0 || c.status === "accept")
        .flatMap((c) => c.costChecks.filter((k) => k.status === "skipped"))
        .map((k) => k.detail),
    ),
  ];
  // A skipped cost test reads the same for every candidate: said once, after the decision.
  const reason = [
    decided.reason,
    ...(decided.status === "infrastructure_error" ? [] : skipped),
  ].join("; ");
  return { ...decided, reason, policy, baseline: options.baseline, comparisons };
}

/**
 * Compares every variant with `options.baseline` under `options.policy`. Overall status:
 * infrastructure_error if any variant has a task without a completed trial; with one
 * candidate, that comparison's status; with several, accept if any is accepted (`best` names
 * it), reject if all are rejected, need_more_work otherwise. Under paired-v1 with k
 * candidates every interval is at level 1 − alpha/k (Bonferroni), so the chance of any wrong
 * accept or reject among them stays at most alpha; heuristic-v1 applies no correction.
 */
export function decideVerdict(trials: readonly TrialRecord[], options: VerdictOptions): Verdict {
  checkTrialRecords(trials);
  const layout = layoutOf(trials, options);
  return verdictOf(layout, new CellIndex(aggregateLayout(layout)), options);
}

/** The verdict together with the aggregates it was decided from: what `verdict.json` embeds. */
export function computeVerdictStatistics(
  trials: readonly TrialRecord[],
  options: VerdictOptions,
): VerdictStatistics {
  checkTrialRecords(trials);
  const layout = layoutOf(trials, options);
  const aggregates = aggregateLayout(layout);
  return { ...verdictOf(layout, new CellIndex(aggregates), options), aggregates };
}
