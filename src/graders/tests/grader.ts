// The `tests` grader: runs the task's tests and passes only when the named tests are reported
// passed (or at least N tests ran, none failed or skipped), read from a report the runner's own
// process writes, not from the exit code that code under test controls.
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { commandEnvironment } from "../../sandbox/index.js";
import { npmArgv, readRegularFile } from "../../shared/index.js";
import { commandEvidence, describeOutcome } from "../output.js";
import type { Grade, GradeCheck, GradeContext, Grader } from "../types.js";
import { weightedScore } from "../types.js";
import { FREEZE_PRELOAD, NODE_REPORTER, TESTS_PROGRAMS, VITEST_REPORTER } from "./programs.js";
import {
  judgeTests,
  type ReadReport,
  readFramedReport,
  readJunitReport,
  type TestExpectations,
  withoutFrames,
} from "./report.js";

export type TestRunner = "node" | "vitest" | "junit";

export interface TestsGraderOptions extends TestExpectations {
  id: string;
  runner: TestRunner;
  /** node and vitest: test files or folders (relative to the trial root, or absolute: hidden tests). */
  files: readonly string[];
  /**
   * vitest: its entry, relative to the trial root (default `node_modules/vitest/vitest.mjs`).
   * junit: the command, which writes a JUnit XML report to the path in the environment variable
   * `HARNESSLAB_TEST_REPORT`; the text `$HARNESSLAB_TEST_REPORT` in an argument is replaced by it.
   */
  argv?: readonly string[];
  timeoutMs: number;
}

/** The default vitest entry, installed in the fixture. */
export const VITEST_ENTRY = "node_modules/vitest/vitest.mjs";

/** The variable naming where a junit command writes its report. */
export const TEST_REPORT_VARIABLE = "HARNESSLAB_TEST_REPORT";

/** A report file larger than this is not read (a real one is far smaller). */
const MAX_REPORT_BYTES = 16 * 1024 * 1024;

/** What the grader keeps of the runner's output: enough to find a stray report in it. */
const MAX_RUN_OUTPUT_BYTES = 8 * 1024 * 1024;

/** The command for the runner, with the harness's programs in `programs` (a folder shown read-only). */
function runnerArgv(options: TestsGraderOptions, programs: string, report: string): string[] {
  switch (options.runner) {
    case "node":
      return [
        "node",
        "--import",
        join(programs, FREEZE_PRELOAD),
        "--test",
        `--test-reporter=${join(programs, NODE_REPORTER)}`,
        "--test-reporter-destination=stdout",
        ...options.files,
      ];
    case "vitest":
      return [
        "node",
        "--import",
        join(programs, FREEZE_PRELOAD),
        ...(options.argv ?? [VITEST_ENTRY]),
        "run",
        `--reporter=${join(programs, VITEST_REPORTER)}`,
        ...options.files,
      ];
    case "junit": {
      // No shell expands the variable in an argument: the harness puts the path there itself.
      const [program = "", ...args] = (options.argv ?? []).map((arg) =>
        arg.split(`$${TEST_REPORT_VARIABLE}`).join(report),
      );
      return program === "npm" ? npmArgv(args) : [program, ...args];
    }
  }
}

export function createTestsGrader(options: TestsGraderOptions): Grader {
  if (options.runner === "junit" && (options.argv?.length ?? 0) === 0)
    throw new Error(`tests grader ${options.id}: the junit runner needs an argv`);
  // Hidden tests the experiment keeps out of the fixture: shown read-only, nothing else outside.
  const hidden = options.files.filter((file) => isAbsolute(file));
  return {
    id: options.id,
    async grade(context: GradeContext): Promise<Grade> {
      const programs = await mkdtemp(join(context.scratchDir, "tests-programs-"));
      for (const [name, source] of Object.entries(TESTS_PROGRAMS))
        await writeFile(join(programs, name), source, { mode: 0o444 });
      await chmod(programs, 0o555);
      const reportDir = await mkdtemp(join(context.scratchDir, "tests-report-"));
      const reportFile = join(reportDir, "report.xml");
      const nonce = randomBytes(24).toString("hex");
      const junit = options.runner === "junit";
      const result = await context.sandbox.run(runnerArgv(options, programs, reportFile), {
        cwd: context.trialRoot,
        writable: junit ? [context.trialRoot, reportDir] : [context.trialRoot],
        readOnly: [programs, ...hidden],
        protect: [join(context.trialRoot, ".git")],
        env: commandEnvironment(junit ? { [TEST_REPORT_VARIABLE]: reportFile } : {}),
        timeoutMs: options.timeoutMs,
        maxOutputBytes: MAX_RUN_OUTPUT_BYTES,
        privateDir: context.scratchDir,
        // Read by the reporter, in the runner's own process, before any test file runs.
        ...(junit ? {} : { input: `${nonce}\n` }),
        ...(context.signal === undefined ? {} : { signal: context.signal }),
      });
      context.signal?.throwIfAborted();
      const report: ReadReport = junit
        ? await readJunitFile(reportFile, context.trialRoot)
        : readFramedReport(result.stdout, nonce, context.trialRoot);
      const scrubbed = { ...result, stdout: withoutFrames(result.stdout, nonce) };
      const evidence = commandEvidence(
        scrubbed,
        new Map([
          [context.trialRoot, "<trial-root>"],
          [programs, "<harness-tests-programs>"],
          [reportFile, `$${TEST_REPORT_VARIABLE}`],
        ]),
      );
      const outcome = describeOutcome(result, options.timeoutMs);
      const checks: GradeCheck[] = [];
      if (!report.ok) {
        checks.push({
          id: "report",
          weight: 1,
          passed: false,
          detail: `${report.problem} (${evidence.argv.join(" ")} ${outcome})`,
          evidence,
        });
      } else {
        const judged = judgeTests(report, options);
        checks.push(
          ...judged.checks.map((check) => ({
            ...check,
            weight: 1,
            evidence: { counts: judged.counts, command: evidence },
          })),
        );
      }
      const passed = checks.every((check) => check.passed);
      return { grader: options.id, checks, score: weightedScore(checks), passed };
    },
  };
}

async function readJunitFile(path: string, trialRoot: string): Promise<ReadReport> {
  const read = await readRegularFile(path, MAX_REPORT_BYTES);
  if (!read.ok)
    return {
      ok: false,
      problem: `the command wrote no JUnit report to $${TEST_REPORT_VARIABLE} (${read.error})`,
    };
  return readJunitReport(read.value.toString("utf8"), trialRoot);
}
