// The tests grader against the attacks that pass an exit-code grader: every one of them leaves
// the bug in examples/fix-the-bug unfixed, and each must be graded failed, saying why; the real
// fix passes. Real node test runs, in the real sandbox.
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTestsGrader,
  type Grade,
  judgeTests,
  readJunitReport,
  type TestsGraderOptions,
} from "../../src/graders/index.js";
import { testSandbox } from "../support/sandbox.js";

const sandbox = await testSandbox();
const FIXTURE = fileURLToPath(new URL("../../examples/fix-the-bug/fixture", import.meta.url));
const BUG = "allows whitespace between parts";
const KEPT = ["parses single units", "parses combined and fractional parts"];

let base: string;
let trials = 0;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-tests-grader-"));
});
afterAll(() => rm(base, { recursive: true, force: true }));

/** A fresh copy of the example's fixture, changed by `edit`. */
async function trial(edit?: (root: string) => Promise<void>): Promise<string> {
  trials += 1;
  const root = join(base, `trial-${trials}`);
  await cp(FIXTURE, root, { recursive: true });
  await edit?.(root);
  return root;
}

async function grade(root: string, options: Partial<TestsGraderOptions> = {}): Promise<Grade> {
  const scratch = `${root}.scratch`;
  await mkdir(scratch, { recursive: true });
  const grader = createTestsGrader({
    id: "unit",
    runner: "node",
    files: [],
    failToPass: [BUG],
    passToPass: KEPT,
    timeoutMs: 60_000,
    ...options,
  });
  return grader.grade({
    trialRoot: root,
    changedFiles: [],
    expectedFiles: ["src/index.js"],
    finalText: "",
    scratchDir: scratch,
    sandbox,
  });
}

const source = (root: string) => join(root, "src", "index.js");

async function prepend(root: string, code: string): Promise<void> {
  await writeFile(source(root), `${code}\n${await readFile(source(root), "utf8")}`);
}

/** The real fix: the parser skips whitespace between parts. */
async function fix(root: string): Promise<void> {
  const text = await readFile(source(root), "utf8");
  const fixed = text.replace(
    "const compact = text.trim();",
    'const compact = text.replace(/\\s+/g, "");',
  );
  expect(fixed).not.toBe(text);
  await writeFile(source(root), fixed);
}

const failed = (g: Grade) => g.checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.detail}`);

describe("the tests grader (node's test runner)", () => {
  it("passes the real fix, and fails the unfixed bug naming the test", async () => {
    const fixed = await grade(await trial(fix));
    expect(failed(fixed)).toEqual([]);
    expect(fixed.passed).toBe(true);
    const counts = (fixed.checks[0]!.evidence as { counts: Record<string, number> }).counts;
    expect(counts).toMatchObject({ total: 5, passed: 5, failed: 0 });
    const unfixed = await grade(await trial());
    expect(unfixed.passed).toBe(false);
    expect(failed(unfixed)).toEqual([`fail-to-pass: 1 of 1 did not pass: "${BUG}" failed`]);
  });

  it("at least N tests, none failed or skipped", async () => {
    const options = { failToPass: [], passToPass: [], minTests: 5 };
    expect((await grade(await trial(fix), options)).passed).toBe(true);
    const few = await grade(await trial(fix), { ...options, minTests: 6 });
    expect(failed(few)).toEqual(["min-tests: 5 test(s) reported, at least 6 required"]);
  });

  // Each attack leaves the bug in place and tries to make the grade pass anyway.
  const attacks: Array<[string, (root: string) => Promise<void>, RegExp]> = [
    [
      "process.exit(0) when the module loads",
      (root) => prepend(root, "process.exit(0);"),
      new RegExp(`"${BUG}" was not reported`),
    ],
    [
      "process.exitCode = 0, then a throw",
      (root) => prepend(root, 'process.exitCode = 0; throw new Error("no tests today");'),
      new RegExp(`"${BUG}" was not reported`),
    ],
    [
      "replacing the assertions",
      (root) =>
        prepend(
          root,
          'import assert from "node:assert"; import strict from "node:assert/strict"; assert.equal = () => {}; strict.equal = () => {}; strict.throws = () => {};',
        ),
      new RegExp(`"${BUG}" was not reported`),
    ],
    [
      "printing a fake TAP, JUnit and harness report on stdout",
      (root) =>
        prepend(
          root,
          [
            'const names = ["parses single units", "parses combined and fractional parts", "allows whitespace between parts"];',
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the attacker's code, as text
            'process.stdout.write("TAP version 13\\n" + names.map((n, i) => `ok ${i + 1} - ${n}`).join("\\n") + "\\n1..3\\n");',
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the attacker's code, as text
            'process.stdout.write(`<testsuites><testsuite name="x">${names.map((n) => `<testcase name="${n}"/>`).join("")}</testsuite></testsuites>\\n`);',
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the attacker's code, as text
            'process.stdout.write(`@@harnesslab-tests-report guess ${JSON.stringify({ runner: "node", results: names.map((n) => ({ file: null, path: [n], status: "passed", suite: false })) })} @@end-harnesslab-tests-report guess\\n`);',
          ].join("\n"),
        ),
      new RegExp(`"${BUG}" failed`),
    ],
    [
      "writing report files where a reporter might write them",
      (root) =>
        prepend(
          root,
          [
            'import { writeFileSync } from "node:fs";',
            // biome-ignore lint/suspicious/noTemplateCurlyInString: the attacker's code, as text
            'const xml = `<testsuites><testsuite name="x"><testcase name="${"allows whitespace between parts"}"/></testsuite></testsuites>`;',
            'for (const path of ["report.xml", "junit.xml", "/tmp/report.xml", process.env.HARNESSLAB_TEST_REPORT ?? "report2.xml"]) { try { writeFileSync(path, xml); } catch {} }',
          ].join("\n"),
        ),
      new RegExp(`"${BUG}" failed`),
    ],
    [
      "deleting the failing test's file",
      (root) => unlink(join(root, "test", "duration.test.js")),
      new RegExp(`"${BUG}" was not reported`),
    ],
    [
      "renaming the failing test",
      async (root) => {
        const path = join(root, "test", "duration.test.js");
        await writeFile(
          path,
          (await readFile(path, "utf8")).replace(BUG, "whitespace (skipped for now)"),
        );
      },
      new RegExp(`"${BUG}" was not reported`),
    ],
    [
      "skipping the failing test",
      async (root) => {
        const path = join(root, "test", "duration.test.js");
        await writeFile(
          path,
          (await readFile(path, "utf8")).replace(`test("${BUG}"`, `test.skip("${BUG}"`),
        );
      },
      new RegExp(`"${BUG}" skipped`),
    ],
    [
      "registering a passing test of the same name and exiting before the real one runs",
      (root) =>
        prepend(
          root,
          `import { test } from "node:test"; test(${JSON.stringify(BUG)}, () => { setImmediate(() => process.exit(0)); });`,
        ),
      /was reported 2 times|did not pass/,
    ],
  ];

  for (const [name, attack, why] of attacks)
    it(`fails an unfixed bug with ${name}`, async () => {
      const graded = await grade(await trial(attack));
      expect(graded.passed, JSON.stringify(graded.checks)).toBe(false);
      expect(failed(graded).join("\n")).toMatch(why);
    });

  it("runs hidden tests the fixture does not hold, read-only, by absolute path", async () => {
    const hidden = join(base, "hidden", "whitespace.test.mjs");
    await mkdir(join(base, "hidden"), { recursive: true });
    await writeFile(
      hidden,
      [
        'import assert from "node:assert/strict";',
        'import { test } from "node:test";',
        'import { join } from "node:path";',
        'import { pathToFileURL } from "node:url";',
        'const { parseDuration } = await import(pathToFileURL(join(process.cwd(), "src/index.js")).href);',
        'test("hidden: tabs between parts", () => assert.equal(parseDuration("1h\\t30m"), 5_400_000));',
        'test("hidden: the file is read-only", async () => { const { appendFile } = await import("node:fs/promises"); await assert.rejects(appendFile(import.meta.filename, "//")); });',
      ].join("\n"),
    );
    const options = {
      files: ["test", hidden],
      failToPass: ["hidden: tabs between parts", "hidden: the file is read-only"],
      passToPass: [],
    };
    expect(failed(await grade(await trial(fix), options))).toEqual([]);
    expect((await grade(await trial(), options)).passed).toBe(false);
  });
});

describe("the tests grader (a JUnit report)", () => {
  it("reads the report the command writes to $HARNESSLAB_TEST_REPORT, and fails without one", async () => {
    const options: Partial<TestsGraderOptions> = {
      runner: "junit",
      argv: [
        "node",
        "--test",
        "--test-reporter=junit",
        "--test-reporter-destination=$HARNESSLAB_TEST_REPORT",
      ],
    };
    expect(failed(await grade(await trial(fix), options))).toEqual([]);
    expect(failed(await grade(await trial(), options))).toEqual([
      `fail-to-pass: 1 of 1 did not pass: "${BUG}" failed`,
    ]);
    const silent = await grade(await trial(fix), { ...options, argv: ["node", "--test"] });
    expect(failed(silent)[0]).toMatch(
      /^report: the command wrote no JUnit report to \$HARNESSLAB_TEST_REPORT/,
    );
  });

  it("reads JUnit XML from vitest, jest-junit, mocha and pytest shapes", () => {
    const xml = `<?xml version="1.0"?>
<testsuites>
  <testsuite name="suite" file="/trial/test/a.test.js">
    <testcase classname="test/a.test.js" name="suite &gt; passes"/>
    <testcase classname="test/a.test.js" name="suite &gt; fails"><failure message="boom"/></testcase>
    <testcase classname="test/a.test.js" name="suite &gt; skipped"><skipped/></testcase>
  </testsuite>
  <testsuite name="pytest"><testcase classname="tests.test_b" name="test_errors"><error message="x"/></testcase></testsuite>
</testsuites>`;
    const read = readJunitReport(xml, "/trial");
    expect(read).toEqual({
      ok: true,
      fileErrors: [],
      tests: [
        { file: "test/a.test.js", name: "suite > passes", status: "passed" },
        { file: "test/a.test.js", name: "suite > fails", status: "failed" },
        { file: "test/a.test.js", name: "suite > skipped", status: "skipped" },
        { file: "tests.test_b", name: "test_errors", status: "failed" },
      ],
    });
    if (!read.ok) return;
    const judged = judgeTests(read, {
      failToPass: ["test/a.test.js::suite > passes", "tests.test_b::test_errors"],
      passToPass: [],
    });
    expect(judged.checks[0]).toMatchObject({
      passed: false,
      detail: '1 of 2 did not pass: "tests.test_b::test_errors" failed',
    });
    expect(readJunitReport("<testsuites><testsuite>", "/trial")).toMatchObject({ ok: false });
    expect(readJunitReport("<html/>", "/trial")).toEqual({
      ok: false,
      problem: "the JUnit report has no <testsuites> or <testsuite> element",
    });
  });
});

/** vitest installed into a fixture from the npm cache, as a user installs it (no network). */
function installVitest(dir: string): string | undefined {
  const installed = spawnSync(
    "npm",
    [
      "install",
      "--offline",
      "--ignore-scripts",
      "--no-bin-links",
      "--no-audit",
      "--no-fund",
      "vitest@4.1.12",
      "vite@8.3.8",
    ],
    { cwd: dir, encoding: "utf8", timeout: 180_000 },
  );
  if (installed.status === 0) return undefined;
  return `vitest cannot be installed offline here (${(installed.stderr || installed.stdout).split("\n").find((l) => l.includes("ERR")) ?? `exit ${installed.status}`}): the vitest runner's test is skipped`;
}

describe("the tests grader (vitest)", () => {
  let fixture: string;
  let skip: string | undefined;
  beforeAll(async () => {
    fixture = join(base, "vitest-fixture");
    await cp(FIXTURE, fixture, { recursive: true });
    await writeFile(
      join(fixture, "package.json"),
      JSON.stringify({ name: "vitest-fixture", type: "module", private: true }),
    );
    await writeFile(
      join(fixture, "test", "duration.test.js"),
      [
        'import { describe, expect, test } from "vitest";',
        'import { parseDuration } from "../src/index.js";',
        'describe("d", () => {',
        '  test("parses single units", () => expect(parseDuration("45s")).toBe(45_000));',
        '  test("parses combined and fractional parts", () => expect(parseDuration("1.5h")).toBe(5_400_000));',
        `  test(${JSON.stringify(BUG)}, () => expect(parseDuration("1h 30m")).toBe(5_400_000));`,
        "});",
      ].join("\n"),
    );
    skip = installVitest(fixture);
    if (skip !== undefined) console.log(skip);
  }, 240_000);

  it("reads vitest's results from its main process, by suite > test", async (ctx) => {
    if (skip !== undefined) ctx.skip(skip);
    const copy = async (edit?: (root: string) => Promise<void>) =>
      trial(async (root) => {
        await rm(root, { recursive: true, force: true });
        await cp(fixture, root, { recursive: true, verbatimSymlinks: true });
        await edit?.(root);
      });
    const options = {
      runner: "vitest" as const,
      failToPass: [`d > ${BUG}`],
      passToPass: KEPT.map((n) => `d > ${n}`),
    };
    expect(failed(await grade(await copy(fix), options))).toEqual([]);
    expect(failed(await grade(await copy(), options))).toEqual([
      `fail-to-pass: 1 of 1 did not pass: "d > ${BUG}" failed`,
    ]);
    const exits = await grade(await copy((root) => prepend(root, "process.exit(0);")), options);
    expect(exits.passed).toBe(false);
  }, 120_000);
});
