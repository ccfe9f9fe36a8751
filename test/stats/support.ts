import {
  assumedTrial,
  type Outcome,
  type TrialRecord,
  type TrialRef,
} from "../../src/stats/index.js";

export interface CellSpec {
  passed?: number;
  failed?: number;
  infra?: number;
  /** USD per completed trial (infrastructure errors report none); null = not reported. */
  costUsd?: number | null;
  /** USD estimated at list prices, for a host that reports none. */
  estimatedCostUsd?: number;
  credits?: number | null;
  /** Score of passed / failed trials. */
  passScore?: number;
  failScore?: number;
  /** Number the first trial of the cell with this (default 1). */
  firstTrial?: number;
}

/** The records of one variant on one task: passes first, then failures, then infrastructure errors. */
export function cell(variant: string, task: string, spec: CellSpec): TrialRecord[] {
  const outcomes: Outcome[] = [
    ...Array<Outcome>(spec.passed ?? 0).fill("passed"),
    ...Array<Outcome>(spec.failed ?? 0).fill("failed"),
    ...Array<Outcome>(spec.infra ?? 0).fill("infrastructure_error"),
  ];
  return outcomes.map((outcome, i) => {
    const infra = outcome === "infrastructure_error";
    return {
      variant,
      task,
      trial: (spec.firstTrial ?? 1) + i,
      outcome,
      score: infra ? null : outcome === "passed" ? (spec.passScore ?? 100) : (spec.failScore ?? 0),
      costUsd: infra ? null : spec.costUsd === undefined ? null : spec.costUsd,
      ...(infra || spec.estimatedCostUsd === undefined
        ? {}
        : { estimatedCostUsd: spec.estimatedCostUsd }),
      credits: infra ? null : spec.credits === undefined ? null : spec.credits,
      tokens: null,
      turns: null,
      durationMs: null,
    };
  });
}

/** A single-task experiment: `H1` (candidate) against `H0` (baseline) on task `readme`. */
export function twoVariants(candidate: CellSpec, baseline: CellSpec): TrialRecord[] {
  return [...cell("H1", "readme", candidate), ...cell("H0", "readme", baseline)];
}

/**
 * A seeded generator of floats in [0, 1) (Marsaglia's xorshift32), so that simulations in
 * tests draw the same numbers on every run.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

export interface SimulatedDesign {
  tasks: number;
  trialsPerCell: number;
  /** The first is the baseline. */
  variants: readonly string[];
}

const taskName = (i: number) => `t${String(i + 1).padStart(2, "0")}`;

/** The planned order a sequential run uses: trial 1 of every task and variant, then trial 2, … */
export function roundMajorOrder(design: SimulatedDesign): TrialRef[] {
  const order: TrialRef[] = [];
  for (let trial = 1; trial <= design.trialsPerCell; trial++)
    for (let task = 0; task < design.tasks; task++)
      for (const variant of design.variants) order.push({ variant, task: taskName(task), trial });
  return order;
}

/**
 * Every planned trial of `design`, each passing with its variant's rate on its task (a number,
 * or one rate per task index), drawn from `random`.
 */
export function simulatedTrials(
  design: SimulatedDesign,
  rates: Record<string, number | ((task: number) => number)>,
  random: () => number,
): TrialRecord[] {
  return roundMajorOrder(design).map((ref) => {
    const rate = rates[ref.variant];
    if (rate === undefined) throw new Error(`no pass rate for ${ref.variant}`);
    const task = Number(ref.task.slice(1)) - 1;
    return assumedTrial(ref, random() < (typeof rate === "number" ? rate : rate(task)));
  });
}

/**
 * How failures become infrastructure errors in a simulation: for each variant, the chance that
 * one of its failed trials is recorded as an infrastructure error instead.
 */
export type Relabelling = Record<string, number>;

/** `simulatedTrials`, with some failures recorded as infrastructure errors (`relabel`). */
export function simulatedTrialsRelabelled(
  design: SimulatedDesign,
  rates: Record<string, number | ((task: number) => number)>,
  relabel: Relabelling,
  random: () => number,
): TrialRecord[] {
  return simulatedTrials(design, rates, random).map((trial) =>
    trial.outcome === "failed" && random() < (relabel[trial.variant] ?? 0)
      ? { ...trial, outcome: "infrastructure_error", score: null }
      : trial,
  );
}
