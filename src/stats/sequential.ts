// The sequential design: a group-sequential test on the trials paired by index within each
// task, looked at after every pair, with O'Brien–Fleming-type error spending. Why and how:
// docs/statistics.md ("Sequential design").
import {
  binomialLowerTail,
  binomialUpperTail,
  clopperPearsonLower,
  clopperPearsonUpper,
} from "./binomial.js";
import type { TrialRef } from "./contract.js";
import type { Layout } from "./layout.js";
import { normalQuantile, normalUpperTail } from "./normal.js";

/** Trial i of the candidate and trial i of the baseline on one task; null when either is an infrastructure error. */
export type TrialPair = { candidatePassed: boolean; baselinePassed: boolean } | null;

/**
 * Lan–DeMets O'Brien–Fleming-type spending for one side at level `sideAlpha`: the error allowed
 * to have been spent by information fraction t, 2·(1 − Φ(z₁₋ₐ/₂ / √t)), which is sideAlpha at
 * t = 1 and tiny early on (Lan and DeMets 1983).
 */
export function obrienFlemingSpending(t: number, sideAlpha: number): number {
  if (!(t > 0)) return 0;
  return 2 * normalUpperTail(normalQuantile(1 - sideAlpha / 2) / Math.sqrt(Math.min(1, t)));
}

/** Relative slack when comparing spent error with the allowance, for floating-point sums only. */
const SPENDING_SLACK = 1e-12;

interface SequentialLook {
  /** Pairs seen at this look (infrastructure-error pairs included: they advance the information fraction). */
  pairs: number;
  /** Pairs with both trials completed. */
  usablePairs: number;
  /** Pairs the candidate won (it passed, the baseline failed) and lost. */
  wins: number;
  losses: number;
  /**
   * The nominal one-sided level of this look's boundary a: halfway between P(W ≥ a) and
   * P(W ≥ a − 1) for a fair coin over the wins + losses disagreements (any level in between
   * makes the same test; halfway keeps the interval off 0 when W = a); 0 when no number of
   * wins can cross yet. The boundary is crossed upward exactly when `upperP` ≤ threshold
   * (downward when `lowerP` ≤ threshold), and then `upperP` < threshold.
   */
  threshold: number;
  upperP: number;
  lowerP: number;
}

export interface SequentialResult {
  /** `up`: the candidate is better; `down`: worse; null: no boundary crossed (yet). */
  decided: "up" | "down" | null;
  /** 1-based index of the pair whose look crossed the boundary; null when none did. */
  decidedAtPair: number | null;
  /** The deciding look, or the last one; null before the first pair. */
  look: SequentialLook | null;
  /** (wins − losses) / usable pairs at that look; null without a usable pair. */
  difference: number | null;
  /** Repeated confidence interval for the difference at that look (see repeatedInterval). */
  lower: number;
  upper: number;
}

/**
 * The sequential test, fed one pair at a time in planned order, as a run records them. Under "no
 * task differs", each disagreement (one trial passed, the other failed) is won by the candidate
 * with probability 1/2 whatever the task and its pass rate, so the wins form a fair-coin walk
 * indexed by disagreements. Each look's boundary a is the smallest number of wins whose crossing
 * probability, added to what earlier looks spent, stays within the spending function (computed
 * exactly by dynamic programming over the walk, given where disagreements occurred); the lower
 * boundary mirrors it. Crossing either is final: later pairs are ignored. So the chance of a
 * false accept (or false reject) is at most `sideAlpha` however many looks are taken. A pair
 * costs time in proportion to the disagreements so far, whatever came before: the whole test is
 * never recomputed. `spending` (O'Brien–Fleming type unless given) must rise from 0 to at most
 * `sideAlpha` at t = 1.
 */
export class SequentialMonitor {
  /** Probability of each number of wins among paths that crossed no boundary yet. */
  private paths = [1];
  private spent = 0;
  private wins = 0;
  private losses = 0;
  private usable = 0;
  private pairs = 0;
  private look: SequentialLook | null = null;
  private decided: "up" | "down" | null = null;
  private decidedAtPair: number | null = null;

  constructor(
    private readonly plannedPairs: number,
    private readonly sideAlpha: number,
    private readonly spending: (t: number, sideAlpha: number) => number = obrienFlemingSpending,
  ) {
    if (!Number.isInteger(plannedPairs) || plannedPairs < 1)
      throw new RangeError(`plannedPairs must be a positive integer, got ${plannedPairs}`);
  }

  /** The boundary this test crossed, if it did. */
  get crossed(): "up" | "down" | null {
    return this.decided;
  }

  /** Looks at one more pair (null: an infrastructure error in it). */
  push(pair: TrialPair): void {
    if (this.decided !== null) return;
    if (this.pairs >= this.plannedPairs)
      throw new RangeError(`more than the ${this.plannedPairs} planned pairs`);
    this.pairs += 1;
    if (pair !== null) {
      this.usable += 1;
      if (pair.candidatePassed !== pair.baselinePassed) {
        if (pair.candidatePassed) this.wins += 1;
        else this.losses += 1;
        const next = new Array<number>(this.paths.length + 1).fill(0);
        this.paths.forEach((p, w) => {
          next[w] = (next[w] as number) + p / 2;
          next[w + 1] = (next[w + 1] as number) + p / 2;
        });
        this.paths = next;
      }
    }
    const paths = this.paths;
    const allowance = this.spending(this.pairs / this.plannedPairs, this.sideAlpha);
    const disagreements = this.wins + this.losses;
    // The upper boundary: lower it one step at a time while the crossing mass stays allowed.
    let boundary = disagreements + 1;
    let mass = 0;
    while (
      boundary - 1 > disagreements - (boundary - 1) &&
      this.spent + mass + (paths[boundary - 1] as number) <= allowance * (1 + SPENDING_SLACK)
    ) {
      boundary -= 1;
      mass += paths[boundary] as number;
    }
    // By symmetry the lower boundary (disagreements − boundary) takes the same mass.
    this.spent += mass;
    for (let w = 0; w < paths.length; w++)
      if (w >= boundary || w <= disagreements - boundary) paths[w] = 0;
    this.look = {
      pairs: this.pairs,
      usablePairs: this.usable,
      wins: this.wins,
      losses: this.losses,
      threshold: nominalLevel(disagreements, boundary),
      upperP: binomialUpperTail(disagreements, this.wins, 0.5),
      lowerP: binomialLowerTail(disagreements, this.wins, 0.5),
    };
    const crossed =
      this.wins >= boundary ? "up" : this.wins <= disagreements - boundary ? "down" : null;
    if (crossed !== null) {
      this.decided = crossed;
      this.decidedAtPair = this.pairs;
    }
  }

  /** The test as it stands: the deciding look, or the last one. */
  result(): SequentialResult {
    const look = this.look;
    return {
      decided: this.decided,
      decidedAtPair: this.decidedAtPair,
      look,
      ...(look === null ? { difference: null, lower: -1, upper: 1 } : repeatedInterval(look)),
    };
  }
}

/** The sequential test (see SequentialMonitor) over `pairs`, a prefix of the `plannedPairs`. */
export function sequentialSignTest(
  pairs: readonly TrialPair[],
  plannedPairs: number,
  sideAlpha: number,
  spending: (t: number, sideAlpha: number) => number = obrienFlemingSpending,
): SequentialResult {
  const monitor = new SequentialMonitor(plannedPairs, sideAlpha, spending);
  if (pairs.length > plannedPairs)
    throw new RangeError(`${pairs.length} pairs recorded but only ${plannedPairs} planned`);
  for (const pair of pairs) {
    monitor.push(pair);
    if (monitor.crossed !== null) break;
  }
  return monitor.result();
}

function nominalLevel(disagreements: number, boundary: number): number {
  if (boundary > disagreements) return 0;
  return (
    (binomialUpperTail(disagreements, boundary, 0.5) +
      binomialUpperTail(disagreements, boundary - 1, 0.5)) /
    2
  );
}

/**
 * The difference and its interval at a look. The difference is d·(2θ − 1), where d is the
 * share of pairs that disagree and θ the share of disagreements the candidate wins; each is
 * bounded by Clopper–Pearson limits at the look's nominal level, θ's on the side of 1/2 its
 * test decides, so the interval lies above 0 exactly when the boundary was crossed upward
 * (below 0 when downward).
 */
function repeatedInterval(look: SequentialLook): {
  difference: number | null;
  lower: number;
  upper: number;
} {
  const { usablePairs, wins, losses, threshold } = look;
  if (usablePairs === 0) return { difference: null, lower: -1, upper: 1 };
  const disagreements = wins + losses;
  const level = threshold;
  const winsLow = clopperPearsonLower(wins, disagreements, level, 0.5);
  const winsHigh = clopperPearsonUpper(wins, disagreements, level, 0.5);
  const shareLow = clopperPearsonLower(disagreements, usablePairs, level);
  const shareHigh = clopperPearsonUpper(disagreements, usablePairs, level);
  const scaled = (theta: number, whenPositive: number, whenNegative: number) =>
    (2 * theta - 1) * (theta > 0.5 ? whenPositive : whenNegative);
  return {
    difference: (wins - losses) / usablePairs,
    lower: scaled(winsLow, shareLow, shareHigh),
    upper: scaled(winsHigh, shareHigh, shareLow),
  };
}

/** The comparison's pairs in planned order, as far as they are complete. */
export interface PlannedPairs {
  /** Every pair up to the first one with a trial not yet recorded. */
  pairs: TrialPair[];
  /** For each of those pairs, how many trials of the planned order precede and complete it. */
  positions: number[];
  plannedPairs: number;
}

/**
 * Pairs trial i of `variant` with trial i of `baseline` on each task, orders the pairs by the
 * later of their two trials' places in `order`, and keeps the prefix whose trials are all
 * recorded. The order is fixed before any outcome is known, which the design's guarantee needs.
 */
export function pairsInPlannedOrder(
  layout: Pick<Layout, "tasks" | "trialsOf">,
  variant: string,
  baseline: string,
  order: readonly TrialRef[],
  plannedTrials: number,
  /** Count an infrastructure error as a failure instead of leaving its pair out. */
  infraAsFailure = false,
): PlannedPairs {
  const place = new Map(order.map((t, i) => [JSON.stringify([t.variant, t.task, t.trial]), i + 1]));
  const placeOf = (v: string, task: string, trial: number) => {
    const found = place.get(JSON.stringify([v, task, trial]));
    if (found === undefined)
      throw new RangeError(`the planned order has no trial ${trial} of ${v} on ${task}`);
    return found;
  };
  const planned: Array<{ task: string; trial: number; position: number }> = [];
  for (const task of layout.tasks)
    for (let trial = 1; trial <= plannedTrials; trial++)
      planned.push({
        task,
        trial,
        position: Math.max(placeOf(variant, task, trial), placeOf(baseline, task, trial)),
      });
  planned.sort((a, b) => a.position - b.position);
  const recorded = (v: string, task: string, trial: number) =>
    layout.trialsOf(v, task).find((t) => t.trial === trial);
  const pairs: TrialPair[] = [];
  const positions: number[] = [];
  for (const { task, trial, position } of planned) {
    const mine = recorded(variant, task, trial);
    const theirs = recorded(baseline, task, trial);
    if (mine === undefined || theirs === undefined) break;
    const infra =
      mine.outcome === "infrastructure_error" || theirs.outcome === "infrastructure_error";
    pairs.push(
      infra && !infraAsFailure
        ? null
        : {
            candidatePassed: mine.outcome === "passed",
            baselinePassed: theirs.outcome === "passed",
          },
    );
    positions.push(position);
  }
  return { pairs, positions, plannedPairs: planned.length };
}
