// The noise floor of a setup: in an A/A run (a variant compared with a copy of itself) every
// difference is noise, so re-splitting its trials at random shows how often the policy would
// claim a difference on this setup and task set.
import type { TrialRecord, VerdictOptions } from "./contract.js";
import { layoutOf } from "./layout.js";
import { decideVerdict } from "./verdict.js";

export interface CalibrationResult {
  /** Random re-splits of the A/A trials that were decided. */
  resplits: number;
  /** Re-splits the policy decided as accept (a claimed improvement) or reject (a claimed regression). */
  accepts: number;
  rejects: number;
  /** (accepts + rejects) / resplits: how often this policy claims a difference on pure noise here. */
  claimRate: number;
}

/**
 * Decides `resplits` random re-splits of an A/A run's trials: on each task, the trials of both
 * arms are pooled and dealt back to the same (variant, trial) slots in random order (`random`
 * is the seeded source), so planned counts, order and infrastructure errors keep their places.
 * Since both arms ran the same setup, each re-split is as likely as the real split, and the
 * share of re-splits the policy decides (accept or reject) estimates its false-claim rate on
 * this setup. Needs exactly two variants, the baseline and its copy.
 */
export function calibrateNoise(
  trials: readonly TrialRecord[],
  options: VerdictOptions,
  resplits: number,
  random: () => number,
): CalibrationResult {
  if (!Number.isInteger(resplits) || resplits < 1)
    throw new RangeError(`resplits must be a positive whole number, got ${resplits}`);
  const layout = layoutOf(trials, options);
  if (layout.variants.length !== 2)
    throw new RangeError(
      `an A/A calibration compares exactly two variants, got ${layout.variants.length}`,
    );
  let accepts = 0;
  let rejects = 0;
  for (let r = 0; r < resplits; r++) {
    const dealt: TrialRecord[] = [];
    for (const task of layout.tasks) {
      const slots = layout.variants.flatMap((v) => layout.trialsOf(v, task));
      type Outcome = Omit<TrialRecord, "variant" | "trial">;
      const outcomes: Outcome[] = slots.map(({ variant: _v, trial: _t, ...rest }) => rest);
      // Fisher–Yates with the caller's seeded source.
      for (let i = outcomes.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        const kept = outcomes[i] as Outcome;
        outcomes[i] = outcomes[j] as Outcome;
        outcomes[j] = kept;
      }
      for (const [i, slot] of slots.entries())
        dealt.push({ ...(outcomes[i] as Outcome), variant: slot.variant, trial: slot.trial });
    }
    const status = decideVerdict(dealt, options).status;
    if (status === "accept") accepts += 1;
    else if (status === "reject") rejects += 1;
  }
  return { resplits, accepts, rejects, claimRate: (accepts + rejects) / resplits };
}
