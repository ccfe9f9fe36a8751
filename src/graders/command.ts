import { realpath } from "node:fs/promises";
import { minimalEnv, npmArgv, runCommand } from "../shared/index.js";
import { commandEvidence, describeOutcome } from "./output.js";
import type { Grade, GradeCheck, GradeContext, Grader } from "./types.js";
import { weightedScore } from "./types.js";

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
  /** Extra variables on top of the minimal, secret-free environment. */
  env?: Readonly<Record<string, string>>;
}

/**
 * Runs one command in the trial root (its own process group, killed with its children on
 * timeout) and passes when it exits with the expected code. The command runs in a child
 * process: agent-written code never executes inside the harness.
 */
export function createCommandGrader(options: CommandGraderOptions): Grader {
  if (options.argv.length === 0) throw new Error(`command grader ${options.id}: empty argv`);
  const expectedExitCode = options.expectedExitCode ?? 0;
  const [program, ...args] = options.argv;
  const argv = program === "npm" ? npmArgv(args) : [...options.argv];
  return {
    id: options.id,
    async grade(context: GradeContext): Promise<Grade> {
      const result = await runCommand(argv, {
        cwd: context.trialRoot,
        env: minimalEnv({ ...options.env }),
        timeoutMs: options.timeoutMs,
        maxOutputBytes: 64 * 1024,
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
