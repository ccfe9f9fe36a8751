// What `harness ci` tells a pull request (pure): one comment, found again by a hidden marker and
// edited on every run, and the commit status's state and description.
import type { VerdictDocument } from "../../artifacts/index.js";
import { type SetupChanges, setupChangeLines } from "./changes.js";
import { CI_BASELINE, CI_CANDIDATE } from "./derive.js";

/** The comment's first line, which finds it again: one comment per variant under test. */
export function ciCommentMarker(variant: string): string {
  return `<!-- harnesslab-ci:${variant.replace(/[^A-Za-z0-9_-]/g, "-")} -->`;
}

export type CiStatusState = "success" | "failure" | "error" | "warning";

/**
 * The commit status by the exit code's rule: accept success, reject failure, a draw success
 * (`warning` where the forge has it) unless --fail-on need_more_work, no comparison error.
 */
export function ciStatusState(
  status: string | "no_change",
  failOn: "reject" | "need_more_work",
  forge: "github" | "gitea",
): CiStatusState {
  if (status === "accept" || status === "no_change") return "success";
  if (status === "reject") return "failure";
  if (status === "need_more_work")
    return failOn === "need_more_work" ? "failure" : forge === "gitea" ? "warning" : "success";
  return "error";
}

const percent = (value: number | null | undefined) =>
  value === null || value === undefined ? "—" : `${Math.round(value * 100)}%`;
const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** Per task, the majority outcome of each side, where they differ. */
function flips(verdict: VerdictDocument): string[] {
  const majority = (variant: string, task: string) => {
    const trials = verdict.trials.filter((t) => t.variant === variant && t.task === task);
    const passed = trials.filter((t) => t.outcome === "passed").length;
    return trials.length === 0 ? undefined : passed * 2 > trials.length ? "passes" : "fails";
  };
  return verdict.tasks.flatMap((task) => {
    const before = majority(CI_BASELINE, task);
    const after = majority(CI_CANDIDATE, task);
    return before !== undefined && after !== undefined && before !== after
      ? [`\`${task}\`: ${before} at the base, ${after} at the head`]
      : [];
  });
}

export interface CiCommentInput {
  variant: string;
  baseRef: string;
  baseCommit: string;
  changes: SetupChanges;
  /** Undefined when nothing changed and no trial ran. */
  verdict?: VerdictDocument;
  /** Where the whole report is: a URL given with --report-url, or the output folder. */
  report?: string;
}

export function ciCommentBody(input: CiCommentInput): string {
  const { verdict } = input;
  const head = `${ciCommentMarker(input.variant)}\n### harnesslab: `;
  const against = `\`${input.variant}\` in this pull request against \`${input.baseRef}\` (${input.baseCommit.slice(0, 12)})`;
  if (verdict === undefined)
    return `${head}no change in the setup\n\n${against}: both resolve to \`${input.changes.headRevision}\`, so no trial was run.\n`;
  const lines = [`${head}**${verdict.status}** — ${against}`, "", cell(verdict.reason), ""];
  lines.push(
    "| | trials passed | pass rate | mean cost (USD) | mean duration |",
    "| --- | --- | --- | --- | --- |",
  );
  for (const id of [CI_BASELINE, CI_CANDIDATE]) {
    const trials = verdict.trials.filter((t) => t.variant === id);
    const done = trials.filter((t) => t.outcome !== "infrastructure_error");
    const passed = done.filter((t) => t.outcome === "passed").length;
    const costs = trials.flatMap((t) => (t.costUsd === null ? [] : [t.costUsd]));
    const mean = (values: number[]) =>
      values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
    const cost = mean(costs);
    const duration = mean(trials.map((t) => t.durationMs));
    lines.push(
      `| ${id === CI_BASELINE ? "base" : "head"} | ${passed} / ${done.length} | ${percent(done.length === 0 ? null : passed / done.length)} | ${cost === null ? "—" : cost.toFixed(4)} | ${duration === null ? "—" : `${(duration / 1000).toFixed(1)} s`} |`,
    );
  }
  const flipped = flips(verdict);
  lines.push(
    "",
    "**What changed in the setup**",
    "",
    ...setupChangeLines(input.changes).map((line) => `- ${cell(line)}`),
  );
  if (flipped.length > 0)
    lines.push("", "**Tasks that flipped**", "", ...flipped.map((f) => `- ${f}`));
  if (input.report !== undefined) lines.push("", `Full report: ${input.report}`);
  return `${lines.join("\n")}\n`;
}
