import { fileURLToPath } from "node:url";
import { runCli } from "../../src/cli/index.js";
import { runCommand } from "../../src/shared/index.js";

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the `harness` CLI in-process with captured output. */
export async function runHarness(
  argv: string[],
  cwd = process.cwd(),
  env?: NodeJS.ProcessEnv,
): Promise<CliRun> {
  let stdout = "";
  let stderr = "";
  const exitCode = await runCli(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    isStderrTTY: false,
    cwd,
    ...(env ? { env } : {}),
  });
  return { exitCode, stdout, stderr };
}

const CLI_SOURCE = fileURLToPath(new URL("../../src/cli/bin.ts", import.meta.url));

/**
 * Runs the `harness` CLI as its own Node process (from source, through tsx), for what only a
 * real process shows: modules loaded by Node's own loader rather than the test runner's, with
 * Node's errors and stacks.
 */
export async function runHarnessProcess(argv: string[], cwd = process.cwd()): Promise<CliRun> {
  const result = await runCommand([process.execPath, "--import", "tsx", CLI_SOURCE, ...argv], {
    cwd,
    env: process.env,
    timeoutMs: 120_000,
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}
