import { readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createReadmePackageGrader,
  README_PACKAGE_WEIGHTS,
  type ReadmePackageContract,
} from "../../src/graders/index.js";
import {
  check,
  cleanupTemporaryDirs,
  exampleContract,
  failedCheckIds,
  goodReadme,
  makeTrial,
  temporaryDir,
  withQuickStart,
} from "./support.js";

let contract: ReadmePackageContract;
let good: string;

beforeAll(async () => {
  contract = await exampleContract();
  good = await goodReadme();
});
afterAll(cleanupTemporaryDirs);

interface BlockEvidence {
  passed: boolean;
  quickStart: boolean;
  problem?: string;
  screen: { rule: string }[];
  run?: { exitCode: number | null; timedOut: boolean; stdoutTail: string; stderrTail: string };
}

async function gradeQuickStart(code: string, quickStartTimeoutMs = 30_000) {
  const context = await makeTrial({ readme: withQuickStart(good, code) });
  const result = await createReadmePackageGrader(contract, { quickStartTimeoutMs }).grade(context);
  const blocks = (check(result, "quick-start").evidence as { blocks: BlockEvidence[] }).blocks;
  return { result, blocks, context };
}

function expectOnlyQuickStartFailed(result: Awaited<ReturnType<typeof gradeQuickStart>>["result"]) {
  expect(failedCheckIds(result)).toEqual(["quick-start"]);
  expect(result.score).toBe(100 - README_PACKAGE_WEIGHTS["quick-start"]);
}

const importLine = 'import { createPool, DEFAULT_CONCURRENCY } from "@fixture/task-pool";\n';

describe("readme-package-v1 quick-start", () => {
  it.concurrent("fails alone for an example that throws, keeping its stderr", async () => {
    const { result, blocks } = await gradeQuickStart(
      `${importLine}createPool({ concurrency: DEFAULT_CONCURRENCY - 2 });\n`,
    );
    expectOnlyQuickStartFailed(result);
    expect(blocks[0]?.run?.exitCode).toBe(1);
    expect(blocks[0]?.run?.stderrTail).toContain(
      "RangeError: concurrency must be a positive integer",
    );
    expect(check(result, "quick-start").detail).toBe(
      "block 1 (README line 14): exited with code 1: RangeError: concurrency must be a positive integer, got 0",
    );
  });

  it.concurrent("rejects an example that reads process.env without running it", async () => {
    const { result, blocks } = await gradeQuickStart(
      `${importLine}console.log(process.env.HOME, createPool, DEFAULT_CONCURRENCY);\n`,
    );
    expectOnlyQuickStartFailed(result);
    expect(blocks[0]?.screen.map((f) => f.rule)).toEqual(["host-capability"]);
    expect(blocks[0]?.run).toBeUndefined();
  });

  it.concurrent("rejects an example that calls fetch", async () => {
    const { result, blocks } = await gradeQuickStart(
      `${importLine}const response = await fetch("https://task-pool.invalid/");\nconsole.log(response.status, createPool, DEFAULT_CONCURRENCY);\n`,
    );
    expectOnlyQuickStartFailed(result);
    expect(blocks[0]?.screen.map((f) => f.rule)).toEqual(["host-capability"]);
  });

  it.concurrent("rejects an example with a dynamic import()", async () => {
    const { result, blocks } = await gradeQuickStart(
      'const { createPool, DEFAULT_CONCURRENCY } = await import("@fixture/task-pool");\nconsole.log(createPool, DEFAULT_CONCURRENCY);\n',
    );
    expectOnlyQuickStartFailed(result);
    expect(blocks[0]?.screen.map((f) => f.rule)).toEqual(["dynamic-import"]);
  });

  it.concurrent("rejects an example that imports another package", async () => {
    const { result, blocks } = await gradeQuickStart(
      `${importLine}import chunk from "lodash/chunk.js";\nconsole.log(chunk, createPool, DEFAULT_CONCURRENCY);\n`,
    );
    expectOnlyQuickStartFailed(result);
    expect(blocks[0]?.screen.map((f) => f.rule)).toEqual(["foreign-import"]);
  });

  it.concurrent("rejects an example that imports a node: builtin", async () => {
    const { result, blocks } = await gradeQuickStart(
      `${importLine}import { setTimeout } from "node:timers/promises";\nawait setTimeout(1);\nconsole.log(createPool, DEFAULT_CONCURRENCY);\n`,
    );
    expectOnlyQuickStartFailed(result);
    expect(blocks[0]?.screen.map((f) => f.rule)).toEqual(["url-specifier"]);
  });

  it.concurrent("fails alone for an example that runs forever, killed at the timeout", async () => {
    const { result, blocks } = await gradeQuickStart(
      `${importLine}createPool({ concurrency: DEFAULT_CONCURRENCY });\nsetInterval(() => {}, 1000);\n`,
      1500,
    );
    expectOnlyQuickStartFailed(result);
    expect(blocks[0]?.run?.timedOut).toBe(true);
    expect(check(result, "quick-start").detail).toContain("timed out after 1500 ms");
  });

  it.concurrent("fails alone when the Quick Start has no block in an allowed language", async () => {
    const readme = good.replace("## Quick Start\n\n```js", "## Quick Start\n\n```ts");
    const context = await makeTrial({ readme });
    const result = await createReadmePackageGrader(contract).grade(context);
    expectOnlyQuickStartFailed(result);
    expect(check(result, "quick-start").evidence).toMatchObject({ skipped: [{ lang: "ts" }] });
  });

  it.concurrent("runs every allowed block of the README, the Quick Start's (nested subsections included) marked, and cleans up", async () => {
    const readme = good.replace(
      "## API\n",
      '### Second example\n\n```mjs\nimport { PoolFullError } from "@fixture/task-pool";\nconsole.log(new PoolFullError(1).code);\n```\n\n## API\n',
    );
    const context = await makeTrial({ readme });
    const before = await readdir(context.trialRoot);
    const result = await createReadmePackageGrader(contract).grade(context);
    expect(failedCheckIds(result)).toEqual([]);
    const blocks = (check(result, "quick-start").evidence as { blocks: BlockEvidence[] }).blocks;
    expect(blocks.filter((b) => b.quickStart).map((b) => b.run?.stdoutTail)).toEqual([
      "[ 'a', 'b', 'c' ]\n",
      "POOL_FULL\n",
    ]);
    // The examples of the other sections ran too, each on its own.
    const others = blocks.filter((b) => !b.quickStart);
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((b) => b.passed)).toBe(true);
    expect(await readdir(context.trialRoot)).toEqual(before);
  });

  it.concurrent("runs examples without write access and without the grader's environment", async () => {
    // The screen cannot see through the package: a tampered entry is how such code would run.
    const context = await makeTrial({
      readme: good,
      files: {
        "src/index.js": [
          'import { writeFileSync } from "node:fs";',
          'export { createPool, DEFAULT_CONCURRENCY } from "./pool.js";',
          'export { PoolFullError } from "./errors.js";',
          'let write = "allowed";',
          'try { writeFileSync("probe.txt", "x"); } catch (error) { write = error.code; }',
          "console.log(JSON.stringify({ write, env: Object.keys(process.env).sort() }));",
        ].join("\n"),
      },
    });
    const result = await createReadmePackageGrader(contract).grade(context);
    const blocks = (check(result, "quick-start").evidence as { blocks: BlockEvidence[] }).blocks;
    const firstLine = blocks[0]?.run?.stdoutTail.split("\n")[0] ?? "";
    // Only the sandbox's own variables (bwrap adds PWD): nothing of the grader's environment.
    expect(JSON.parse(firstLine)).toEqual({
      write: "ERR_ACCESS_DENIED",
      env: ["HOME", "PATH", "PWD", "TMPDIR"],
    });
  });
});

describe("readme-package-v1 with a tampered package entry", () => {
  it("reads the exports in a separate permission-model process, never in the grader", async () => {
    const markers = await temporaryDir("hl-markers-");
    const context = await makeTrial({
      readme: good,
      files: {
        "src/index.js": [
          'import { writeFileSync } from "node:fs";',
          'export { createPool, DEFAULT_CONCURRENCY } from "./pool.js";',
          'export { PoolFullError } from "./errors.js";',
          "globalThis.__tamperedEntryLoaded = true;",
          "const record = JSON.stringify({ pid: process.pid, execArgv: process.execArgv });",
          `for (const dir of [${JSON.stringify(markers)}, process.cwd()]) {`,
          "  try { writeFileSync(dir + '/imported-' + process.pid + '.json', record); } catch {}",
          "}",
        ].join("\n"),
      },
    });
    const result = await createReadmePackageGrader(contract).grade(context);

    expect(
      (globalThis as { __tamperedEntryLoaded?: boolean }).__tamperedEntryLoaded,
    ).toBeUndefined();
    // The probe still saw the exports: the entry ran, just not here and not with write access.
    expect(check(result, "public-api").passed).toBe(true);
    expect(check(result, "quick-start").passed).toBe(true);
    // Nothing the entry ran as could write outside the trial: every process was contained.
    expect((await readdir(markers)).filter((f) => f.startsWith("imported-"))).toEqual([]);
    const written = (await readdir(context.trialRoot)).filter((f) => f.startsWith("imported-"));
    const writers = await Promise.all(
      written.map(
        async (f) =>
          JSON.parse(await readFile(join(context.trialRoot, f), "utf8")) as {
            pid: number;
            execArgv: string[];
          },
      ),
    );
    // Inside the trial only `npm test` may write (in its sandbox): never the grader process,
    // never a permission-model process.
    for (const writer of writers) {
      expect(writer.pid).not.toBe(process.pid);
      expect(writer.execArgv.join(" ")).not.toMatch(/--(experimental-)?permission/);
    }
    expect(writers.length).toBeGreaterThan(0);
  });

  it("does not follow a symlink planted where the example file is written", async () => {
    const outside = await temporaryDir("hl-outside-");
    const target = join(outside, "target.mjs");
    await writeFile(target, "original");
    const context = await makeTrial({ readme: good });
    await symlink(target, join(context.trialRoot, ".harness-example-1.mjs"));
    const result = await createReadmePackageGrader(contract).grade(context);
    // npm test fails as well: inside the sandbox the link leads nowhere, and `node --test` says so.
    expect(failedCheckIds(result)).toEqual(["quick-start", "package-tests"]);
    expect(check(result, "quick-start").detail).toContain("already exists");
    expect(await readFile(target, "utf8")).toBe("original");
  });
});
