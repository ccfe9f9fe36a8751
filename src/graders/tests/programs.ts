// The programs the tests grader puts beside a test run, inside the sandbox, read-only: a reporter
// for node's test runner, one for vitest, and a preload that freezes the assertion modules. Plain
// JavaScript given as source, so the same files run from the built package and from the
// TypeScript sources under test.
//
// The reporters run in the runner's own process (node --test's parent, vitest's main process),
// not in the processes that import the agent's code. Each reads a nonce from its standard input,
// which the harness writes and closes before any test runs, and prints the results once, framed
// by that nonce: a test file's code cannot know it, so what it prints (a TAP or JUnit report of
// its own, a frame without the nonce) is not taken for the report.

/** The marker that opens a report frame: `<BEGIN> <nonce> <json> <END> <nonce>`. */
export const FRAME_BEGIN = "@@harnesslab-tests-report";
export const FRAME_END = "@@end-harnesslab-tests-report";

/** Where the programs appear inside the sandbox's view of the grader's own folder. */
export const NODE_REPORTER = "node-reporter.mjs";
export const VITEST_REPORTER = "vitest-reporter.mjs";
export const FREEZE_PRELOAD = "freeze-assert.mjs";

const READ_NONCE = `import { readFileSync } from "node:fs";
// The harness writes the nonce and closes standard input before any test file runs.
const nonce = readFileSync(0, "utf8").trim();
const frame = (report) => "\\n${FRAME_BEGIN} " + nonce + " " + JSON.stringify(report) + " ${FRAME_END} " + nonce + "\\n";
`;

/**
 * node --test's reporter. Each result carries its file and its path of names (describe > it),
 * built from the dequeue events, which come before a test's children are enqueued. A test that
 * was enqueued and never finished (its process exited under it) is reported as unfinished.
 */
const NODE_REPORTER_SOURCE = `${READ_NONCE}
export default async function* harnesslabReport(source) {
  const stacks = new Map();
  const pathOf = (data) => {
    const stack = stacks.get(data.file) ?? [];
    return [...stack.slice(0, data.nesting), data.name];
  };
  const key = (file, path) => JSON.stringify([file, path]);
  const results = [];
  const enqueued = new Map();
  for await (const event of source) {
    const data = event.data ?? {};
    if (event.type === "test:dequeue") {
      const stack = stacks.get(data.file) ?? [];
      stack.length = data.nesting;
      stack.push(data.name);
      stacks.set(data.file, stack);
    } else if (event.type === "test:enqueue" && data.name !== data.file) {
      // (A file is enqueued too, and reports a result only when it ran no test.)
      const path = pathOf(data);
      enqueued.set(key(data.file, path), { file: data.file ?? null, path });
    } else if (event.type === "test:pass" || event.type === "test:fail") {
      const path = pathOf(data);
      enqueued.delete(key(data.file, path));
      results.push({
        file: data.file ?? null,
        path,
        status: event.type === "test:fail" ? "failed" : data.skip !== undefined && data.skip !== false ? "skipped" : data.todo !== undefined && data.todo !== false ? "todo" : "passed",
        suite: data.details?.type === "suite",
      });
    }
  }
  for (const { file, path } of enqueued.values()) results.push({ file, path, status: "unfinished", suite: false });
  yield frame({ runner: "node", results });
}
`;

/** vitest's reporter (vitest 3 and 4): every test case with its module and state. */
const VITEST_REPORTER_SOURCE = `${READ_NONCE}
const STATES = { passed: "passed", pass: "passed", failed: "failed", fail: "failed", skipped: "skipped", skip: "skipped", todo: "todo" };
export default class HarnesslabReporter {
  onTestRunEnd(testModules) {
    const results = [];
    for (const module of testModules) {
      const state = typeof module.state === "function" ? module.state() : undefined;
      if (state === "failed" && [...module.children.allTests()].length === 0)
        results.push({ file: module.moduleId, path: [module.moduleId], status: "failed", suite: false, fileError: true });
      for (const test of module.children.allTests())
        results.push({ file: module.moduleId, path: test.fullName.split(" > "), status: STATES[test.result().state] ?? "unfinished", suite: false });
    }
    this.printed = true;
    process.stdout.write(frame({ runner: "vitest", results }));
  }
  // vitest 3 calls onFinished with its task tree instead.
  onFinished(files = []) {
    if (this.printed) return;
    const results = [];
    const walk = (task, names, file) => {
      const path = task.type === "suite" && task.filepath === undefined ? [...names, task.name] : names;
      for (const child of task.tasks ?? []) {
        if (child.type === "test") results.push({ file, path: [...path, child.name], status: STATES[child.result?.state ?? child.mode] ?? "unfinished", suite: false });
        else walk(child, path, file);
      }
    };
    for (const file of files) {
      if (file.result?.state === "fail" && (file.tasks ?? []).length === 0)
        results.push({ file: file.filepath, path: [file.filepath], status: "failed", suite: false, fileError: true });
      walk(file, [], file.filepath);
    }
    process.stdout.write(frame({ runner: "vitest", results }));
  }
}
`;

/**
 * Preloaded in every process of the run (node passes its options to the processes of each test
 * file, vitest to its workers): the assertion modules and node:test's exports are frozen before
 * any test file or the agent's code loads, so `assert.equal = () => {}` throws in a module
 * instead of disarming the tests.
 */
const FREEZE_SOURCE = `import assert from "node:assert";
import * as strict from "node:assert/strict";
import * as nodeTest from "node:test";
for (const value of [assert, assert.strict, strict.default, ...Object.values(nodeTest)])
  if ((typeof value === "function" || (typeof value === "object" && value !== null)) && !Object.isFrozen(value))
    Object.freeze(value);
`;

/** Every program, by file name. */
export const TESTS_PROGRAMS: Readonly<Record<string, string>> = {
  [NODE_REPORTER]: NODE_REPORTER_SOURCE,
  [VITEST_REPORTER]: VITEST_REPORTER_SOURCE,
  [FREEZE_PRELOAD]: FREEZE_SOURCE,
};
