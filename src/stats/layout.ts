// The experiment grid (variants × tasks) the trial records fill, in a stable order.
import type { TrialRecord, TrialRef } from "./contract.js";

/** Code-point order: the same everywhere, unlike localeCompare. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface Layout {
  variants: string[];
  tasks: string[];
  trialsOf(variant: string, task: string): readonly TrialRecord[];
}

export interface LayoutOptions {
  variants?: readonly string[] | undefined;
  tasks?: readonly string[] | undefined;
  /** Always part of the grid, even without records. */
  baseline?: string | undefined;
}

const cellKey = (variant: string, task: string) => JSON.stringify([variant, task]);

/**
 * Groups records by variant and task. Planned variants and tasks, when given, are the grid
 * (so a cell nobody ran still appears, empty); otherwise the grid is what the records name.
 * A record outside the planned grid, or two records for the same trial, is a caller's bug.
 */
export function layoutOf(trials: readonly TrialRecord[], options: LayoutOptions = {}): Layout {
  const variants = new Set(options.variants ?? trials.map((t) => t.variant));
  if (options.baseline !== undefined) variants.add(options.baseline);
  const tasks = new Set(options.tasks ?? trials.map((t) => t.task));
  const cells = new Map<string, TrialRecord[]>();
  const seen = new Set<string>();
  for (const trial of trials) {
    if (!variants.has(trial.variant))
      throw new RangeError(
        `trial record names variant ${JSON.stringify(trial.variant)}, which is not planned`,
      );
    if (!tasks.has(trial.task))
      throw new RangeError(
        `trial record names task ${JSON.stringify(trial.task)}, which is not planned`,
      );
    const id = JSON.stringify([trial.variant, trial.task, trial.trial]);
    if (seen.has(id))
      throw new RangeError(
        `trial ${trial.trial} of ${trial.variant} on ${trial.task} is recorded twice`,
      );
    seen.add(id);
    const key = cellKey(trial.variant, trial.task);
    const cell = cells.get(key);
    if (cell) cell.push(trial);
    else cells.set(key, [trial]);
  }
  for (const cell of cells.values()) cell.sort((a, b) => a.trial - b.trial);
  return {
    variants: [...variants].sort(compareText),
    tasks: [...tasks].sort(compareText),
    trialsOf: (variant, task) => cells.get(cellKey(variant, task)) ?? [],
  };
}

/**
 * A trial that passed (score 100) or failed (score 0) and reported no measurements: what the
 * stopping rules, planning and warnings assume of trials that have not run.
 */
export function assumedTrial(ref: TrialRef, passed: boolean): TrialRecord {
  return {
    variant: ref.variant,
    task: ref.task,
    trial: ref.trial,
    outcome: passed ? "passed" : "failed",
    score: passed ? 100 : 0,
    costUsd: null,
    credits: null,
    tokens: null,
    turns: null,
    durationMs: null,
  };
}
