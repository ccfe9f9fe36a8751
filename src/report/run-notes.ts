// What both reports say about how complete a run is, as plain sentences each renderer escapes its
// own way: an interrupted run, trials reused by --resume or from the trial cache, and tasks on which no flip could be
// judged because a side has no completed trial.
import type { VerdictDocument } from "../artifacts/index.js";

/** Trials the run planned: every task × variant × trial. */
function plannedTrials(verdict: VerdictDocument): number {
  return verdict.tasks.length * verdict.variants.length * verdict.trialsPerCell;
}

/** Null unless the run was stopped before every planned trial finished. */
export function interruptedNote(verdict: VerdictDocument): string | null {
  if (!verdict.interrupted) return null;
  return `This run was interrupted (Ctrl-C or SIGTERM) after ${verdict.trials.length} of ${plannedTrials(verdict)} planned trials finished: the verdict covers only those. Run the same \`harness compare run\` with --resume to finish it.`;
}

/** Null unless --resume took trials over from an earlier run, or the trial cache gave some. */
export function resumedNote(verdict: VerdictDocument): string | null {
  const total = verdict.trials.length;
  const parts = [
    verdict.resumedTrials > 0
      ? `${verdict.resumedTrials} of the ${total} trials were taken from an earlier run of the same experiment (--resume)`
      : "",
    verdict.cachedTrials > 0
      ? `${verdict.cachedTrials} of the ${total} trials were taken from the trial cache (--cache: they ran in an earlier run of the same setup on the same task)`
      : "",
  ].filter(Boolean);
  return parts.length === 0 ? null : `${parts.join("; ")}; the others ran in this one.`;
}

/** A task a comparison could not judge: `missing` are the sides without a completed trial on it. */
export interface UnjudgedTask {
  variant: string;
  baseline: string;
  task: string;
  missing: string[];
}

/** Per comparison, the tasks left out of it because the baseline or the variant completed no trial there. */
export function unjudgedTasks(verdict: VerdictDocument): UnjudgedTask[] {
  const stats = verdict.statistics;
  if (!stats) return [];
  const completed = (variant: string, task: string) =>
    stats.aggregates.cells.find((c) => c.variant === variant && c.task === task)?.completed ?? 0;
  return stats.comparisons.flatMap((c) =>
    verdict.tasks
      .filter((task) => !c.tasks.includes(task))
      .map((task) => ({
        variant: c.variant,
        baseline: c.baseline,
        task,
        missing: [c.baseline, c.variant].filter((v) => completed(v, task) === 0),
      })),
  );
}

/** `no completed trial of baseline` / `… of baseline or candidate`. */
export function unjudgedReason(u: UnjudgedTask): string {
  return u.missing.length === 0
    ? "not compared"
    : `no completed trial of ${u.missing.join(" or ")} (infrastructure errors only, or none ran)`;
}

/** The sentence under "Tasks that flipped" when the table would be empty. */
export function noFlipSentence(
  verdict: VerdictDocument,
  unjudged: readonly UnjudgedTask[],
): string {
  const comparisons = verdict.statistics?.comparisons ?? [];
  if (comparisons.every((c) => c.tasks.length === 0))
    return "No flip can be judged: on no task do the baseline and a variant both have a completed trial.";
  return unjudged.length === 0
    ? "No task flipped: on every task each variant's majority outcome (pass or fail) is the same as the baseline's."
    : "No task flipped among the tasks that could be judged: on each of them each variant's majority outcome (pass or fail) is the same as the baseline's. The tasks below could not be judged.";
}

/**
 * Null unless the run's commands ran without an OS sandbox because the user asked for it: then
 * every report says so before anything else, since such a verdict could have been forged.
 */
export function unsafeNote(verdict: VerdictDocument): string | null {
  if (verdict.containment?.unsafe !== true) return null;
  return "UNSAFE: this run used --unsafe-no-sandbox. Code the agent wrote (validation commands, graders, the host's own commands) ran without an OS sandbox, with your user, your files and your network; it could have read secrets, changed files outside its trial or forged this verdict.";
}

/** Null unless --resume found trial records it could not verify (each was set aside and run again). */
export function rejectedRecordsNote(verdict: VerdictDocument): string | null {
  const rejected = verdict.rejectedRecords;
  if (rejected.length === 0) return null;
  const shown = rejected
    .slice(0, 5)
    .map((r) => `${r.artifactDir} (${r.reason}; kept in ${r.movedTo})`)
    .join("; ");
  return `${rejected.length} trial record(s) in --out were not the ones the harness wrote, so they were set aside and run again: ${shown}${rejected.length > 5 ? "; …" : ""}.`;
}
