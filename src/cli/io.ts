import { InvalidInputError } from "../shared/index.js";

/** Where a command writes. Tests pass buffers; the bin passes the process streams. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal (live progress lines redraw only there). */
  isStderrTTY: boolean;
  cwd: string;
  /** Where commands read variables such as a forge token from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export function processIO(): CliIO {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isStderrTTY: Boolean(process.stderr.isTTY),
    cwd: process.cwd(),
  };
}

/** Exit codes shared by every command (the README's command table). */
/** Exit codes; `interrupted` and `terminated` are the shell's 128 + SIGINT / SIGTERM (a stopped `compare run`). */
export const EXIT = { ok: 0, fail: 1, usage: 2, interrupted: 130, terminated: 143 } as const;

/** A usage or input problem a command reports with exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * With --json, stdout must hold exactly one JSON document even when the command fails,
 * so a script can always parse it: `{ok: false, error: {exitCode, message, file?, problems}}`.
 */
export function jsonErrorDocument(exitCode: number, message: string, error?: unknown): string {
  const problems = error instanceof InvalidInputError ? error.problems : [];
  const file = error instanceof InvalidInputError ? error.source : undefined;
  return `${JSON.stringify({ ok: false, error: { exitCode, message, ...(file ? { file } : {}), problems } }, null, 2)}\n`;
}

/** How a command sets the process's exit code (nothing calls process.exit). */
export type SetExitCode = (code: number) => void;
