// Reading a test run's report and judging it against the task's named tests (pure): the framed
// report of the harness's own reporters, or a JUnit XML file, into one list of tests.
import { XMLParser } from "fast-xml-parser";
import { z } from "zod";
import { FRAME_BEGIN, FRAME_END } from "./programs.js";

export type TestStatus = "passed" | "failed" | "skipped" | "todo" | "unfinished";

/** One test as the run reported it: its file (relative to the trial root) and full name. */
export interface ReportedTest {
  file: string;
  /** The names from the outermost suite to the test, joined with " > ". */
  name: string;
  status: TestStatus;
}

export type ReadReport =
  | {
      ok: true;
      tests: ReportedTest[];
      /** Files that failed outside any test (did not load, or their process died). */
      fileErrors: string[];
    }
  | { ok: false; problem: string };

const resultSchema = z.strictObject({
  file: z.string().nullable(),
  path: z.array(z.string()).min(1),
  status: z.enum(["passed", "failed", "skipped", "todo", "unfinished"]),
  suite: z.boolean(),
  fileError: z.boolean().optional(),
});
const frameSchema = z.strictObject({
  runner: z.enum(["node", "vitest"]),
  results: z.array(resultSchema).max(200_000),
});
type FramedResult = z.infer<typeof resultSchema>;

/** `file` relative to the trial root when it lies inside it; absolute otherwise (hidden tests). */
function relativeFile(file: string, trialRoot: string): string {
  return file.startsWith(`${trialRoot}/`) ? file.slice(trialRoot.length + 1) : file;
}

/** The text a runner printed, without the report's frames (for evidence). */
export function withoutFrames(stdout: string, nonce: string): string {
  const begin = `${FRAME_BEGIN} ${nonce} `;
  const end = ` ${FRAME_END} ${nonce}`;
  let out = stdout;
  for (;;) {
    const at = out.indexOf(begin);
    if (at === -1) return out;
    const stop = out.indexOf(end, at);
    out = `${out.slice(0, at)}[the harness's test report]${stop === -1 ? "" : out.slice(stop + end.length)}`;
  }
}

/**
 * The report a harness reporter printed, framed by `nonce`. Exactly one frame must be there: none
 * means the runner did not finish (or never loaded its reporter), two mean something else wrote
 * one, and either way the run says nothing the harness can trust.
 */
export function readFramedReport(stdout: string, nonce: string, trialRoot: string): ReadReport {
  const begin = `${FRAME_BEGIN} ${nonce} `;
  const end = ` ${FRAME_END} ${nonce}`;
  const first = stdout.indexOf(begin);
  if (first === -1)
    return {
      ok: false,
      problem:
        "the test run printed no report: the runner did not finish, or it could not load the harness's reporter",
    };
  if (stdout.indexOf(begin, first + begin.length) !== -1)
    return { ok: false, problem: "the test run printed its report more than once" };
  const stop = stdout.indexOf(end, first);
  if (stop === -1) return { ok: false, problem: "the test run's report was cut off" };
  let parsed: z.infer<typeof frameSchema>;
  try {
    parsed = frameSchema.parse(JSON.parse(stdout.slice(first + begin.length, stop)));
  } catch {
    return { ok: false, problem: "the test run's report cannot be read" };
  }
  return fromResults(parsed.results, trialRoot);
}

/**
 * Leaves only: a suite, or a test that has subtests, is not a test of its own. A result whose
 * only name is its file is the file itself (node reports a file that ran no test, or died).
 */
function fromResults(results: readonly FramedResult[], trialRoot: string): ReadReport {
  const tests: ReportedTest[] = [];
  const fileErrors: string[] = [];
  const keys = results.map((r) => JSON.stringify([r.file, r.path]));
  const parents = new Set<string>();
  for (const r of results)
    for (let n = 1; n < r.path.length; n += 1)
      parents.add(JSON.stringify([r.file, r.path.slice(0, n)]));
  results.forEach((r, index) => {
    const file = r.file === null ? "" : relativeFile(r.file, trialRoot);
    const isFile = r.fileError === true || (r.path.length === 1 && r.path[0] === r.file);
    if (isFile) {
      if (r.status === "failed") fileErrors.push(file);
      return;
    }
    if (r.suite || parents.has(keys[index] as string)) return;
    tests.push({ file, name: r.path.join(" > "), status: r.status });
  });
  return { ok: true, tests, fileErrors: [...new Set(fileErrors)].sort() };
}

const junitParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "",
  isArray: (name) => ["testsuite", "testcase", "failure", "error", "skipped"].includes(name),
  processEntities: true,
});

interface JunitCase {
  name?: unknown;
  classname?: unknown;
  file?: unknown;
  failure?: unknown[];
  error?: unknown[];
  skipped?: unknown[];
}
interface JunitSuite {
  name?: unknown;
  file?: unknown;
  testcase?: JunitCase[];
  testsuite?: JunitSuite[];
}

/**
 * A JUnit XML report (vitest, jest-junit, mocha's xunit, pytest's --junitxml): each `testcase`,
 * failed when it holds a failure or an error, skipped when it holds a skipped.
 */
export function readJunitReport(xml: string, trialRoot: string): ReadReport {
  let document: { testsuites?: JunitSuite; testsuite?: JunitSuite[] };
  try {
    document = junitParser.parse(xml, true) as typeof document;
  } catch (error) {
    return {
      ok: false,
      problem: `the JUnit report is not well-formed XML: ${(error as Error).message.split("\n")[0]}`,
    };
  }
  // node's junit reporter puts its test cases right under <testsuites>; others nest them.
  const suites =
    document.testsuites !== undefined
      ? [typeof document.testsuites === "object" ? document.testsuites : {}]
      : document.testsuite;
  if (suites === undefined)
    return { ok: false, problem: "the JUnit report has no <testsuites> or <testsuite> element" };
  const tests: ReportedTest[] = [];
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  const visit = (suite: JunitSuite) => {
    for (const test of suite.testcase ?? []) {
      const file = text(test.file) || text(suite.file) || text(test.classname);
      tests.push({
        file: relativeFile(file, trialRoot),
        name: text(test.name),
        status:
          (test.failure?.length ?? 0) + (test.error?.length ?? 0) > 0
            ? "failed"
            : (test.skipped?.length ?? 0) > 0
              ? "skipped"
              : "passed",
      });
    }
    for (const inner of suite.testsuite ?? []) visit(inner);
  };
  for (const suite of suites) visit(suite);
  return { ok: true, tests, fileErrors: [] };
}

/** What the task asks of a test run. */
export interface TestExpectations {
  /** Tests that must pass now (they failed before the change): SWE-bench's FAIL_TO_PASS. */
  failToPass: readonly string[];
  /** Tests that must still pass: SWE-bench's PASS_TO_PASS. */
  passToPass: readonly string[];
  /** At least this many tests, none failed, skipped or unfinished. */
  minTests?: number;
}

export interface TestsJudgement {
  checks: { id: string; passed: boolean; detail: string }[];
  counts: Record<TestStatus, number> & { total: number; fileErrors: number };
}

/**
 * A name matches a reported test by its full name (`suite > test`), or by its file and full name
 * (`test/slug.test.js::suite > test`) where the same name is in several files.
 */
function matching(tests: readonly ReportedTest[], wanted: string): ReportedTest[] {
  return tests.filter((t) => t.name === wanted || `${t.file}::${t.name}` === wanted);
}

function namedCheck(
  id: string,
  names: readonly string[],
  tests: readonly ReportedTest[],
): TestsJudgement["checks"][number] {
  const problems: string[] = [];
  for (const name of names) {
    const found = matching(tests, name);
    if (found.length === 0) problems.push(`${JSON.stringify(name)} was not reported`);
    else if (found.length > 1)
      problems.push(
        `${JSON.stringify(name)} was reported ${found.length} times (${found.map((t) => `${t.file}: ${t.status}`).join(", ")}); a duplicated test proves nothing`,
      );
    else if (found[0]?.status !== "passed")
      problems.push(`${JSON.stringify(name)} ${found[0]?.status}`);
  }
  return {
    id,
    passed: problems.length === 0,
    detail:
      problems.length === 0
        ? `all ${names.length} passed`
        : `${problems.length} of ${names.length} did not pass: ${problems.join("; ")}`,
  };
}

/** Judges a report against the expectations; every failed check names its tests. */
export function judgeTests(
  report: Extract<ReadReport, { ok: true }>,
  expected: TestExpectations,
): TestsJudgement {
  const { tests, fileErrors } = report;
  const counts = {
    total: tests.length,
    passed: 0,
    failed: 0,
    skipped: 0,
    todo: 0,
    unfinished: 0,
    fileErrors: fileErrors.length,
  };
  for (const test of tests) counts[test.status] += 1;
  const checks: TestsJudgement["checks"] = [];
  if (expected.failToPass.length > 0)
    checks.push(namedCheck("fail-to-pass", expected.failToPass, tests));
  if (expected.passToPass.length > 0)
    checks.push(namedCheck("pass-to-pass", expected.passToPass, tests));
  if (expected.minTests !== undefined) {
    const bad = tests.filter((t) => t.status !== "passed");
    const enough = tests.length >= expected.minTests;
    checks.push({
      id: "min-tests",
      passed: enough && bad.length === 0 && fileErrors.length === 0,
      detail: [
        `${tests.length} test(s) reported, at least ${expected.minTests} required`,
        ...bad.slice(0, 20).map((t) => `${t.file}::${t.name} ${t.status}`),
        ...fileErrors.map((file) => `${file} failed outside any test`),
      ].join("; "),
    });
  }
  // A test that started and never finished means the run was cut short under it.
  const unfinished = tests.filter((t) => t.status === "unfinished");
  checks.push({
    id: "complete",
    passed: unfinished.length === 0,
    detail:
      unfinished.length === 0
        ? "every test that was queued finished"
        : `the run ended before ${unfinished.length} queued test(s) finished: ${unfinished
            .slice(0, 20)
            .map((t) => `${t.file}::${t.name}`)
            .join(", ")}`,
  });
  return { checks, counts };
}
