// The `heuristic-v1` policy: better-harness's rules, made for `harness-compare.v1`
// experiments of one task and two variants, so that v1 manifests keep their verdicts.
import {
  costChecks,
  describeInfraExclusion,
  describeMissing,
  describeTrialCounts,
  type PairStatistics,
} from "./comparison.js";
import { formatRate, formatScore } from "./format.js";
import type { PolicyDecision } from "./paired.js";
import { atLeast, nearlyEqual } from "./tolerance.js";

const HEURISTIC_MAX_COST_RATIO = 1.25;
const HEURISTIC_SCORE_MARGIN = 5;
/** The policy ignores intervals; they are still reported, at the usual 95%. */
export const HEURISTIC_REPORTING_ALPHA = 0.05;

/**
 * reject: lower pass rate, or mean score more than 5 points lower. accept: higher pass rate, or
 * mean score at least 5 points higher, and no cost (USD, credits) above 1.25× the baseline's.
 * Otherwise need_more_work. Pass rates exclude infrastructure errors; with several tasks,
 * rates and scores are means over tasks.
 */
export function decideHeuristic(stats: PairStatistics): PolicyDecision {
  const checks = costChecks(stats, HEURISTIC_MAX_COST_RATIO);
  if (stats.missing.length > 0)
    return {
      status: "infrastructure_error",
      reason: `no completed trial for ${describeMissing(stats.missing)}, so ${stats.variant} cannot be compared with ${stats.baseline}`,
      enoughTrials: null,
      costChecks: checks,
    };
  const { variant, baseline } = stats;
  const rate = {
    variant: stats.passRate.variant.excludingInfra as number,
    baseline: stats.passRate.baseline.excludingInfra as number,
  };
  const score = stats.meanScore;
  const scoreGap =
    score.variant !== null && score.baseline !== null ? score.variant - score.baseline : null;

  const sameRate = nearlyEqual(rate.variant, rate.baseline);
  const lowerRate = !sameRate && rate.variant < rate.baseline;
  const higherRate = !sameRate && rate.variant > rate.baseline;
  const muchLowerScore = scoreGap !== null && !atLeast(scoreGap, -HEURISTIC_SCORE_MARGIN);
  const muchHigherScore = scoreGap !== null && atLeast(scoreGap, HEURISTIC_SCORE_MARGIN);

  const rateText = `pass rate ${formatRate(rate.variant)} vs ${formatRate(rate.baseline)}`;
  const scoreText =
    scoreGap === null
      ? "mean score not available"
      : `mean score ${formatScore(score.variant)} vs ${formatScore(score.baseline)}`;
  const evidence = `${rateText}, ${scoreText}, ${describeTrialCounts(stats)}`;
  const infraNote = describeInfraExclusion(stats);
  const join = (lead: string, notes: readonly string[]) =>
    [`${lead}: ${evidence}`, ...notes.filter((n) => n !== "")].join("; ");
  const decision = (status: PolicyDecision["status"], reason: string): PolicyDecision => ({
    status,
    reason,
    enoughTrials: null,
    costChecks: checks,
  });

  if (lowerRate || muchLowerScore) {
    const why = [
      lowerRate ? "its pass rate is lower" : "",
      muchLowerScore ? `its mean score is more than ${HEURISTIC_SCORE_MARGIN} points lower` : "",
    ].filter((w) => w !== "");
    return decision(
      "reject",
      join(`${variant} is worse than ${baseline} (${why.join(" and ")})`, [infraNote]),
    );
  }
  if (higherRate || muchHigherScore) {
    const why = [
      higherRate ? "its pass rate is higher" : "",
      muchHigherScore ? `its mean score is at least ${HEURISTIC_SCORE_MARGIN} points higher` : "",
    ].filter((w) => w !== "");
    const costNotes = checks.filter((c) => c.status !== "skipped").map((c) => c.detail);
    if (checks.some((c) => c.status === "failed"))
      return decision(
        "need_more_work",
        join(`${variant} is better than ${baseline} (${why.join(" and ")}) but costs too much`, [
          infraNote,
          ...costNotes,
        ]),
      );
    return decision(
      "accept",
      join(`${variant} is better than ${baseline} (${why.join(" and ")})`, [
        infraNote,
        ...costNotes,
      ]),
    );
  }
  return decision(
    "need_more_work",
    join(
      `${variant} is not clearly different from ${baseline} (pass rate not higher, mean score not ${HEURISTIC_SCORE_MARGIN} points higher)`,
      [infraNote],
    ),
  );
}
