import { runCli } from "../../src/cli/index.js";

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
