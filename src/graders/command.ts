import { existsSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { commandEnvironment } from "../sandbox/index.js";
import { npmArgv } from "../shared/index.js";
import { commandEvidence, describeOutcome } from "./output.js";
import type { Grade, GradeCheck, GradeContext, Grader } from "./types.js";
import { weightedScore } from "./types.js";

/** Where the sandbox shows the system anyway: no need to mount a program found there. */
const SYSTEM_PREFIXES = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/"];

export interface CommandGraderOptions {
  /** Check id and grader id, e.g. `package-tests`. */
  id: string;
  /**
   * Program and arguments; never a shell string. An argv starting with `npm` is started through
   * `npmArgv`, so it also runs on Windows, where npm is a script no program can spawn directly.
   */
  argv: readonly string[];
  timeoutMs: number;
  expectedExitCode?: number;
  /** Extra variables on top of the contained command's secret-free environment. */
  env?: Readonly<Record<string, string>>;
}

/**
 * Runs one command in the trial root, contained by the grading context's sandbox (every process
 * it starts is killed at the timeout or when it exits), and passes when it exits with the
 * expected code. Agent-written code never executes inside the harness or outside the sandbox.
 */
export function createCommandGrader(options: CommandGraderOptions): Grader {
  if (options.argv.length === 0) throw new Error(`command grader ${options.id}: empty argv`);
  const expectedExitCode = options.expectedExitCode ?? 0;
  const [program, ...args] = options.argv;
  const argv = program === "npm" ? npmArgv(args) : [...options.argv];
  // Files the experiment names by absolute path (a check script, hidden tests kept out of the
  // fixture) are the experimenter's: the sandbox shows them read-only, and nothing else outside.
  const programFiles = options.argv.filter(
    (arg) => isAbsolute(arg) && !SYSTEM_PREFIXES.some((p) => arg.startsWith(p)) && existsSync(arg),
  );
  return {
    id: options.id,
    async grade(context: GradeContext): Promise<Grade> {
      const result = await context.sandbox.run(argv, {
        cwd: context.trialRoot,
        writable: [context.trialRoot],
        readOnly: programFiles,
        protect: [join(context.trialRoot, ".git")],
        env: commandEnvironment(options.env),
        timeoutMs: options.timeoutMs,
        maxOutputBytes: 64 * 1024,
        privateDir: context.scratchDir,
        ...(context.signal === undefined ? {} : { signal: context.signal }),
      });
      // An aborted run is not a verdict on the agent: let the caller classify it.
      context.signal?.throwIfAborted();
      const realRoot = await realpath(context.trialRoot).catch(() => context.trialRoot);
      const evidence = commandEvidence(
        result,
        new Map([
          [context.trialRoot, "<trial-root>"],
          [realRoot, "<trial-root>"],
        ]),
      );
      const passed = !result.timedOut && !result.aborted && result.exitCode === expectedExitCode;
      const outcome = describeOutcome(result, options.timeoutMs);
      const check: GradeCheck = {
        id: options.id,
        weight: 1,
        passed,
        detail: `${evidence.argv.join(" ")} ${outcome}${
          passed || result.timedOut || result.spawnError !== undefined
            ? ""
            : ` (expected ${expectedExitCode})`
        }`,
        evidence,
      };
      const checks = [check];
      return { grader: options.id, checks, score: weightedScore(checks), passed };
    },
  };
}
