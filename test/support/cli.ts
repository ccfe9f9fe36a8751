import { runCli } from "../../src/cli/index.js";

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the `harness` CLI in-process with captured output. */
export async function runHarness(argv: string[], cwd = process.cwd()): Promise<CliRun> {
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
  });
  return { exitCode, stdout, stderr };
}
