// Planning before paying: how likely a design is to reach a decision, how many trials per cell
// a wanted effect needs, and how many more would settle an open comparison. Power comes from
// simulating the decision itself (seeded through `random`), because normal approximations are
// far off at the few trials per task agent benchmarks run.
import type { PairedPolicy } from "./contract.js";
import { fixedTest } from "./fixed-test.js";
import type { TwoByTwo } from "./intervals.js";
import { normalQuantile } from "./normal.js";
import { sequentialSignTest, type TrialPair } from "./sequential.js";

export interface PowerScenario {
  tasks: number;
  trialsPerCell: number;
  /** Candidates compared with the baseline (each is tested at alpha / candidates). */
  candidates: number;
  /** The baseline's pass rate on each task (one value: every task). */
  baselineRate: number | readonly number[];
  /** The candidate's pass rate minus the baseline's on every task (clamped to [0, 1]). */
  effect: number;
  policy: PairedPolicy;
}

export interface PowerEstimate {
  /** Share of simulated experiments in which the candidate was accepted (rejected). */
  accept: number;
  reject: number;
  /** Mean share of the planned trials run before the decision (1 for the fixed design). */
  trialsUsed: number;
  runs: number;
}

function checkScenario(s: PowerScenario): void {
  const whole = (name: string, value: number, min: number) => {
    if (!Number.isInteger(value) || value < min)
      throw new RangeError(`${name} must be a whole number of at least ${min}, got ${value}`);
  };
  whole("tasks", s.tasks, 1);
  whole("trialsPerCell", s.trialsPerCell, 1);
  whole("candidates", s.candidates, 1);
  const rates = typeof s.baselineRate === "number" ? [s.baselineRate] : s.baselineRate;
  if (rates.length === 0 || rates.some((r) => !(r >= 0 && r <= 1)))
    throw new RangeError("baseline pass rates must lie in [0, 1]");
  if (!(s.effect >= -1 && s.effect <= 1))
    throw new RangeError(`effect must lie in [-1, 1], got ${s.effect}`);
}

function rateOf(s: PowerScenario, task: number): number {
  if (typeof s.baselineRate === "number") return s.baselineRate;
  return s.baselineRate[task % s.baselineRate.length] as number;
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** One simulated comparison: its decision and the share of planned trials it needed. */
export function simulateComparison(
  s: PowerScenario,
  random: () => number,
): { decided: "up" | "down" | null; trialsUsed: number } {
  const alpha = s.policy.alpha / s.candidates;
  const draw = (p: number) => random() < p;
  if (s.policy.design === "sequential") {
    // Round-major order, as the runner plans a sequential design: trial 1 of every task, then 2, …
    const pairs: TrialPair[] = [];
    for (let trial = 0; trial < s.trialsPerCell; trial++)
      for (let task = 0; task < s.tasks; task++) {
        const p0 = rateOf(s, task);
        pairs.push({ candidatePassed: draw(clamp01(p0 + s.effect)), baselinePassed: draw(p0) });
      }
    const result = sequentialSignTest(pairs, pairs.length, alpha / 2);
    return {
      decided: result.decided,
      trialsUsed: (result.decidedAtPair ?? pairs.length) / pairs.length,
    };
  }
  const strata: TwoByTwo[] = [];
  for (let task = 0; task < s.tasks; task++) {
    const p0 = rateOf(s, task);
    let successes1 = 0;
    let successes0 = 0;
    for (let i = 0; i < s.trialsPerCell; i++) {
      if (draw(clamp01(p0 + s.effect))) successes1 += 1;
      if (draw(p0)) successes0 += 1;
    }
    strata.push({ successes1, trials1: s.trialsPerCell, successes0, trials0: s.trialsPerCell });
  }
  const result = fixedTest(strata, alpha);
  const enough = s.trialsPerCell >= s.policy.minTrials;
  return {
    decided: result.lower > 0 ? (enough ? "up" : null) : result.upper < 0 ? "down" : null,
    trialsUsed: 1,
  };
}

/** Estimates power (and the false-decision rates, with effect 0) by `runs` simulated experiments. */
export function estimatePower(
  scenario: PowerScenario,
  runs: number,
  random: () => number,
): PowerEstimate {
  checkScenario(scenario);
  if (!Number.isInteger(runs) || runs < 1)
    throw new RangeError(`runs must be a positive whole number, got ${runs}`);
  let accept = 0;
  let reject = 0;
  let used = 0;
  for (let i = 0; i < runs; i++) {
    const one = simulateComparison(scenario, random);
    if (one.decided === "up") accept += 1;
    else if (one.decided === "down") reject += 1;
    used += one.trialsUsed;
  }
  return { accept: accept / runs, reject: reject / runs, trialsUsed: used / runs, runs };
}

/**
 * The fewest trials per cell (up to `maxTrials`) at which the simulated chance of accepting a
 * candidate better by `effect` reaches `power`; null when even `maxTrials` does not. The search
 * starts at the normal approximation's answer and brackets from there (probing large counts
 * only when needed: an exact test over many trials is slow to simulate), then bisects, assuming
 * power grows with trials (it does, apart from the small ups and downs exact tests have at a few
 * trials).
 */
export function trialsForPower(
  scenario: Omit<PowerScenario, "trialsPerCell">,
  power: number,
  options: { runs: number; maxTrials: number; random: () => number },
): { trialsPerCell: number; estimate: PowerEstimate } | null {
  const probed = new Map<number, PowerEstimate>();
  const at = (n: number) => {
    let estimate = probed.get(n);
    if (estimate === undefined) {
      estimate = estimatePower({ ...scenario, trialsPerCell: n }, options.runs, options.random);
      probed.set(n, estimate);
    }
    return estimate;
  };
  const reaches = (n: number) => acceptLowerBound(at(n)) >= power;
  const guess = Math.min(options.maxTrials, Math.max(1, normalTrialsGuess(scenario, power)));
  // Bracket: `low` falls short (0 always does), `high` reaches the power.
  let low = 0;
  let high = guess;
  if (reaches(guess)) {
    let step = 1;
    while (high - step > 0 && reaches(high - step)) {
      high -= step;
      step *= 2;
    }
    low = Math.max(0, high - step);
  } else {
    low = guess;
    high = guess;
    while (!reaches(high)) {
      if (high >= options.maxTrials) return null;
      low = high;
      high = Math.min(options.maxTrials, high * 2);
    }
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (reaches(middle)) high = middle;
    else low = middle;
  }
  return { trialsPerCell: high, estimate: at(high) };
}

/**
 * A one-sided 95% lower bound (Wilson) on the chance to accept, from its simulated estimate. A
 * plan that asks the estimate itself to reach the wanted power recommends, about half the time,
 * a count whose true power falls short of it by the simulation's noise; asking the bound errs on
 * the safe side.
 */
function acceptLowerBound(estimate: PowerEstimate): number {
  const n = estimate.runs;
  const p = estimate.accept;
  const z = 1.6448536269514722;
  const centre = p + (z * z) / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n));
  return Math.max(0, (centre - spread) / (1 + (z * z) / n));
}

/** Trials per cell the score test would need in the normal approximation: a starting point. */
function normalTrialsGuess(scenario: Omit<PowerScenario, "trialsPerCell">, power: number): number {
  const z =
    normalQuantile(1 - scenario.policy.alpha / scenario.candidates / 2) + normalQuantile(power);
  let variance = 0;
  let difference = 0;
  for (let task = 0; task < scenario.tasks; task++) {
    const p0 = rateOf({ ...scenario, trialsPerCell: 1 }, task);
    const p1 = clamp01(p0 + scenario.effect);
    difference += (p1 - p0) / scenario.tasks;
    variance += (p1 * (1 - p1) + p0 * (1 - p0)) / scenario.tasks ** 2;
  }
  if (difference === 0) return Number.MAX_SAFE_INTEGER;
  return Math.ceil((variance * z * z) / (difference * difference));
}

/**
 * The smallest effect on the grid 0.05, 0.10, … that the design accepts with at least `power`;
 * null when none up to the largest possible (1 − the highest baseline rate) does.
 */
export function detectableEffect(
  scenario: Omit<PowerScenario, "effect">,
  power: number,
  options: { runs: number; random: () => number },
): { effect: number; estimate: PowerEstimate } | null {
  const rates =
    typeof scenario.baselineRate === "number" ? [scenario.baselineRate] : scenario.baselineRate;
  const steps = Math.floor((1 - Math.max(...rates)) / 0.05 + 1e-9);
  let low = 0;
  let high = steps + 1;
  let found: { effect: number; estimate: PowerEstimate } | null = null;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const effect = Math.round(middle * 5) / 100;
    const estimate = estimatePower({ ...scenario, effect }, options.runs, options.random);
    if (acceptLowerBound(estimate) >= power) {
      high = middle;
      found = { effect, estimate };
    } else low = middle;
  }
  return high <= steps ? found : null;
}

/**
 * About how many completed trials per cell a comparison needs for its test to reach a decision
 * with probability `power`, if the observed per-task pass rates were the true ones (normal
 * approximation of the score statistic; rates are pulled half a trial from 0 and 1 so a task
 * at 0 % or 100 % still counts as uncertain). Null when the observed difference is 0.
 */
export function trialsToSettle(
  strata: readonly TwoByTwo[],
  alpha: number,
  power = 0.8,
): number | null {
  if (strata.length === 0) return null;
  const weight = 1 / strata.length;
  let difference = 0;
  let varianceOneTrial = 0;
  for (const t of strata) {
    const p1 = (t.successes1 + 0.5) / (t.trials1 + 1);
    const p0 = (t.successes0 + 0.5) / (t.trials0 + 1);
    difference += weight * (t.successes1 / t.trials1 - t.successes0 / t.trials0);
    varianceOneTrial += weight * weight * (p1 * (1 - p1) + p0 * (1 - p0));
  }
  if (Math.abs(difference) < 1e-9) return null;
  const z = normalQuantile(1 - alpha / 2) + normalQuantile(power);
  return Math.ceil((varianceOneTrial * z * z) / (difference * difference));
}
