import type { RunProgress } from "../compare/index.js";
import type { CliIO } from "./io.js";

function seconds(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function progressLine(p: RunProgress): string {
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
