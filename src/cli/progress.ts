import type { RunProgress } from "../compare/index.js";
import type { CliIO } from "./io.js";

function seconds(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function progressLine(p: RunProgress): string {
  const width = String(p.total).length;
  const parts = [
    `[${String(p.done).padStart(width)}/${p.total}]`,
    `passed ${p.passed}`,
    `failed ${p.failed}`,
    `infra errors ${p.infraErrors}`,
    `elapsed ${seconds(p.elapsedMs)}`,
    `ETA ${p.etaMs === null ? "…" : seconds(p.etaMs)}`,
  ];
  if (p.reused > 0) parts.push(`${p.reused} resumed`);
  if (p.retried > 0) parts.push(`${p.retried} retried`);
  if (p.last)
    parts.push(`last: ${p.last.variant}/${p.last.task} #${p.last.trial} ${p.last.outcome}`);
  return parts.join(" · ");
}

/** The first line of a text, clipped: what a console line can show of an error. */
function firstLine(text: string, max = 200): string {
  const line = text.split(/\r?\n/, 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * A line for a trial whose agent itself broke, which would otherwise pass unnoticed in the
 * counts: a host that reported an error (the setup's failed trial), or a scripted agent that
 * threw (the experiment's own bug, an infrastructure error the experimenter has to fix), or a
 * setup the host did not load.
 */
function agentFailureLine(trial: NonNullable<RunProgress["last"]>): string | null {
  const id = `${trial.variant}/${trial.task} #${trial.trial}`;
  if (trial.infraReason === "scripted_agent_failed")
    return `  ${id}: the experiment's scripted agent failed (fix it; the trial does not count): ${firstLine(trial.explanation.replace(/^scripted_agent_failed: /, ""))}`;
  if (trial.infraReason === "setup_failed")
    return `  ${id}: the variant's setup did not load (the trial does not count): ${firstLine(trial.explanation.replace(/^setup_failed: /, ""), 300)}`;
  if (trial.receiptStatus !== "agent_error") return null;
  return `  ${id}: agent error: ${firstLine(trial.explanation.replace(/^the agent failed with an error: /, ""))}`;
}

/**
 * A live progress line on stderr: redrawn in place on a terminal, one line per finished trial
 * otherwise (logs and CI keep every step).
 */
export function createProgressReporter(io: CliIO): {
  update(p: RunProgress): void;
  finish(): void;
} {
  let drawn = false;
  return {
    update(p) {
      const failure = p.last ? agentFailureLine(p.last) : null;
      if (failure !== null) {
        // Above the progress line, which is then drawn again below it.
        io.stderr(`${io.isStderrTTY ? "\r\x1b[2K" : ""}${failure}\n`);
      }
      const line = progressLine(p);
      if (io.isStderrTTY) {
        io.stderr(`\r\x1b[2K${line}`);
        drawn = true;
      } else if (p.last || p.done === 0) {
        io.stderr(`${line}\n`);
      }
    },
    finish() {
      if (drawn) io.stderr("\n");
      drawn = false;
    },
  };
}
