import { type ChildProcess, spawn } from "node:child_process";
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

const REPO = fileURLToPath(new URL("../../", import.meta.url));
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

/** A `harness` process started by `spawnHarness`, still running or not. */
export interface SpawnedHarness {
  child: ChildProcess;
  /** Its stdout and stderr so far, interleaved as they came. */
  output: () => string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Resolves once the output holds `text`; rejects if the process exits first. */
  waitFor(text: string): Promise<void>;
}

/**
 * Starts the `harness` CLI as its own Node process (from source, through tsx, in the repository)
 * without waiting for it, for what runs beside others: `harness worker`, `compare run --queue`.
 */
export function spawnHarness(args: string[], env: Record<string, string> = {}): SpawnedHarness {
  const child = spawn(process.execPath, ["--import", "tsx", CLI_SOURCE, ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  const waiters: Array<{ needle: string; resolve: () => void }> = [];
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const waiter of [...waiters])
      if (text.includes(waiter.needle)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    child,
    output: () => text,
    exited,
    waitFor: (needle) =>
      new Promise<void>((resolve, reject) => {
        if (text.includes(needle)) return resolve();
        waiters.push({ needle, resolve });
        void exited.then(() => {
          if (!text.includes(needle))
            reject(new Error(`exited before printing ${needle}:\n${text}`));
        });
      }),
  };
}
