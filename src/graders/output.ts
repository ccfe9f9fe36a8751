import type { SandboxedResult, SandboxKind, SandboxLimitHit } from "../sandbox/index.js";
import { type CommandResult, replaceLongestFirst } from "../shared/index.js";

/** Characters of stdout/stderr kept in evidence: enough to show a failing assertion or stack. */
const OUTPUT_TAIL_CHARS = 4000;

/** The last `limit` characters of `text`, marked when something was dropped. */
function tail(text: string, limit = OUTPUT_TAIL_CHARS): string {
  if (text.length <= limit) return text;
  return `[… ${text.length - limit} earlier characters dropped …]\n${text.slice(-limit)}`;
}

/**
 * Replaces machine-specific absolute paths (the temporary trial root, a temporary HOME)
 * with stable placeholders so evidence is comparable across trials and leaks no paths.
 * Longer paths are replaced first so a path and its realpath never leave fragments.
 */
function scrubPaths(text: string, replacements: ReadonlyMap<string, string>): string {
  return replaceLongestFirst(text, replacements);
}

/** What a grader keeps of a finished command: outcome and output tails, paths scrubbed. */
export interface CommandEvidence {
  argv: string[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  spawnError?: string;
  durationMs: number;
  stdoutTail: string;
  stderrTail: string;
  /** How the command was contained (`bwrap`, or `none` under --unsafe-no-sandbox). */
  sandbox?: SandboxKind;
  /** The sandbox limits it ran into (time, CPU, memory, file size, output). */
  limitsHit?: SandboxLimitHit[];
}

export function commandEvidence(
  result: CommandResult | SandboxedResult,
  replacements: ReadonlyMap<string, string>,
): CommandEvidence {
  const scrub = (text: string) => scrubPaths(text, replacements);
  const contained = "sandbox" in result ? result : undefined;
  return {
    argv: result.argv.map(scrub),
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    ...(result.spawnError === undefined ? {} : { spawnError: scrub(result.spawnError) }),
    durationMs: result.durationMs,
    stdoutTail: tail(scrub(result.stdout)),
    stderrTail: tail(scrub(result.stderr)),
    ...(contained
      ? {
          sandbox: contained.sandbox,
          limitsHit: contained.limitsHit.map((hit) => ({ ...hit, detail: scrub(hit.detail) })),
        }
      : {}),
  };
}

/** One line saying how a command ended, for a check's `detail`. */
export function describeOutcome(
  result: CommandResult | SandboxedResult,
  timeoutMs: number,
): string {
  if (result.spawnError !== undefined) return `could not start: ${result.spawnError}`;
  if (result.timedOut) return `timed out after ${timeoutMs} ms (every process it started killed)`;
  if (result.aborted) return "aborted";
  const limits =
    "limitsHit" in result
      ? result.limitsHit.filter((hit) => hit.limit !== "wall-time" && hit.limit !== "output")
      : [];
  const hit =
    limits.length > 0 ? ` (${limits.map((h) => `${h.limit} limit: ${h.detail}`).join("; ")})` : "";
  if (result.signal !== null) return `killed by ${result.signal}${hit}`;
  return `exited with code ${result.exitCode}${hit}`;
}
