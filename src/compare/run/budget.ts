// Budgets for a run (`--max-cost-usd`, `--max-tokens`): before a trial starts, would it be
// possible for it to go over? Pure: the runner tells it what finished and what is running.
import type { BudgetStop, TrialMetrics } from "../../artifacts/index.js";

export interface BudgetLimits {
  /** Stop starting trials once the next one could take the USD spent past this. */
  maxCostUsd?: number;
  /** The same for tokens (every kind a host reports: input, cache reads and writes, output, reasoning). */
  maxTokens?: number;
}

type Limit = BudgetStop["limit"];

/** USD one finished trial used: its last attempt and every earlier attempt that reported a cost. */
function trialCost(m: TrialMetrics): number | null {
  const amounts = [m.costUsd, ...m.retriedAttempts.map((a) => a.costUsd)].filter(
    (c): c is number => c !== null,
  );
  return amounts.length === 0 ? null : amounts.reduce((a, b) => a + b, 0);
}

/** Tokens one finished trial used (its last attempt: attempts do not record tokens). */
function trialTokens(m: TrialMetrics): number | null {
  if (m.tokens === null) return null;
  const kinds = Object.values(m.tokens).filter((v): v is number => v !== null);
  return kinds.length === 0 ? null : kinds.reduce((a, b) => a + b, 0);
}

/**
 * Whether starting one more trial, while `running` others are still going, could take the
 * spending past a limit, assuming each of them uses as much as the largest finished trial did
 * (trials taken from the trial cache cost this run nothing).
 * Before any finished trial reported an amount nothing is known, so nothing is stopped. Returns
 * what ran out, or null.
 */
export function budgetReached(
  limits: BudgetLimits,
  finished: readonly TrialMetrics[],
  running: number,
  planned: number,
): BudgetStop | null {
  const checks: Array<[Limit, number | undefined, (m: TrialMetrics) => number | null]> = [
    ["max-cost-usd", limits.maxCostUsd, trialCost],
    ["max-tokens", limits.maxTokens, trialTokens],
  ];
  for (const [limit, value, amountOf] of checks) {
    if (value === undefined) continue;
    const amounts = finished.map(amountOf).filter((a): a is number => a !== null);
    if (amounts.length === 0) continue;
    // A trial taken from the trial cache was paid for by an earlier run; it still says how
    // much the next trial could take.
    const spent = finished
      .filter((m) => m.cachedFrom === undefined)
      .map(amountOf)
      .reduce<number>((a, b) => a + (b ?? 0), 0);
    const largest = Math.max(...amounts);
    if (spent + (running + 1) * largest > value)
      return {
        limit,
        value,
        spent,
        largestTrial: largest,
        running,
        trialsRun: finished.length,
        trialsPlanned: planned,
      };
  }
  return null;
}

/** "--max-cost-usd 5.00 was reached after 12 of 40 trials ($4.62 used; the largest trial used $0.41)". */
export function describeBudgetStop(stop: BudgetStop): string {
  const amount = (x: number) =>
    stop.limit === "max-cost-usd" ? `$${x.toFixed(2)}` : `${Math.round(x)} tokens`;
  return `--${stop.limit} ${stop.limit === "max-cost-usd" ? stop.value.toFixed(2) : stop.value} was reached after ${stop.trialsRun} of ${stop.trialsPlanned} trials (${amount(stop.spent)} used; the largest trial used ${amount(stop.largestTrial)}, so the next could have gone over)`;
}
