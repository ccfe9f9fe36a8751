// `compare run --calibrate`: an A/A run. The baseline runs against a copy of itself, so every
// difference between them is noise; the verdict then says how often the policy would claim one.

import type { Calibration } from "../../artifacts/index.js";
import { calibrateNoise, type TrialRecord, type VerdictOptions } from "../../stats/index.js";
import type { Experiment } from "../experiment.js";
import { mulberry32 } from "./prng.js";

/**
 * The experiment with two variants: the baseline, and a copy of it under a new id (`H1` for a
 * v1 layout, whose folders are H0/H1; `<baseline>-copy` otherwise). The copy
 * resolves the same composition and runs the same agent, so only chance separates the two.
 */
export function calibrationExperiment(experiment: Experiment): Experiment {
  const base = experiment.variants.find((v) => v.isBaseline);
  if (base === undefined) throw new Error("the experiment has no baseline variant");
  // The other variants do not run, so the copy's id only has to differ from the baseline's.
  const copyId = experiment.layout === "v1" ? "H1" : `${base.id}-copy`;
  return {
    ...experiment,
    variants: [
      base,
      {
        ...base,
        id: copyId,
        label: `${base.label} (copy)`,
        isBaseline: false,
      },
    ],
    calibration: { variant: base.id, copy: copyId },
  };
}

/** Re-splits of the A/A trials the verdict reports (`calibration.resplits`). */
const CALIBRATION_RESPLITS = 200;

/** How often the policy claims a difference on re-splits of the A/A trials (seeded by the manifest). */
export function calibrationOf(
  experiment: Experiment,
  trials: readonly TrialRecord[],
  options: VerdictOptions,
): Calibration | null {
  if (experiment.calibration === undefined) return null;
  const result = calibrateNoise(
    trials,
    options,
    CALIBRATION_RESPLITS,
    mulberry32(experiment.trials.seed),
  );
  return {
    ...experiment.calibration,
    ...result,
    nominal: experiment.verdict.kind === "paired-v1" ? experiment.verdict.alpha : null,
  };
}
