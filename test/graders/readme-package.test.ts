import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
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
  fixtureDir,
  goodReadme,
  makeTrial,
  replaceExact,
  type TrialOptions,
  temporaryDir,
} from "./support.js";

let contract: ReadmePackageContract;
let good: string;

beforeAll(async () => {
  contract = await exampleContract();
  good = await goodReadme();
});
afterAll(cleanupTemporaryDirs);

/** The example package's entry as shipped. */
function entry(): Promise<string> {
  return readFile(join(fixtureDir, "src", "index.js"), "utf8");
}

async function grade(options: TrialOptions, custom?: Partial<ReadmePackageContract>) {
  const context = await makeTrial(options);
  return createReadmePackageGrader({ ...contract, ...custom }).grade(context);
}

/** Asserts the grade failed exactly `id` (every other check passed) and scored accordingly. */
function expectOnlyFailure(
  result: Awaited<ReturnType<typeof grade>>,
  id: keyof typeof README_PACKAGE_WEIGHTS,
) {
  expect(failedCheckIds(result)).toEqual([id]);
  expect(result.passed).toBe(false);
  expect(result.score).toBe(100 - README_PACKAGE_WEIGHTS[id]);
}

describe("readme-package-v1 grader", () => {
  it.concurrent("passes a grounded README with score 100 and reports every check of SPEC §5.4", async () => {
    const result = await grade({ readme: good });
    expect(result.checks.map((c) => [c.id, c.weight, c.passed])).toEqual([
      ["scope", 15, true],
      ["structure", 10, true],
      ["links", 5, true],
      ["installation", 10, true],
      ["public-api", 15, true],
      ["behavior-evidence", 15, true],
      ["quick-start", 15, true],
      ["package-tests", 10, true],
      ["no-invented-capabilities", 5, true],
    ]);
    expect(result).toMatchObject({ grader: "readme-package-v1", score: 100, passed: true });
    expect(check(result, "public-api").evidence).toMatchObject({
      exports: ["DEFAULT_CONCURRENCY", "PoolFullError", "createPool"],
    });
  });

  it.concurrent("reports only scope and readme-exists when README.md is missing", async () => {
    const result = await grade({ readme: null });
    expect(result.checks.map((c) => [c.id, c.weight, c.passed])).toEqual([
      ["scope", 15, true],
      ["readme-exists", 85, false],
    ]);
    expect(result.score).toBe(15);
    expect(result.passed).toBe(false);
  });

  it.concurrent("fails scope alone when a second file changed", async () => {
    const result = await grade({ readme: good, changedFiles: ["README.md", "src/pool.js"] });
    expectOnlyFailure(result, "scope");
    expect(check(result, "scope").evidence).toMatchObject({
      files: [
        { file: "README.md", allowed: true },
        { file: "src/pool.js", allowed: false },
      ],
    });
  });

  it.concurrent("fails structure alone when a required heading is missing", async () => {
    const result = await grade({ readme: replaceExact(good, "## Testing", "## How to check it") });
    expectOnlyFailure(result, "structure");
    expect(check(result, "structure").detail).toContain("Testing");
  });

  it.concurrent("matches required headings case-insensitively at any level", async () => {
    const readme = replaceExact(
      replaceExact(good, "## Testing", "#### testing"),
      "## API",
      "## api",
    );
    const result = await grade({ readme });
    expect(failedCheckIds(result)).toEqual([]);
  });

  it.concurrent("fails links alone for a broken local link and names it", async () => {
    const readme = `${good}\nSee [the design notes](docs/design.md) and [the archive](docs/archive-v0.md#top).\n`;
    const result = await grade({ readme });
    expectOnlyFailure(result, "links");
    const evidence = check(result, "links").evidence as { failures: { url: string }[] };
    expect(evidence.failures.map((f) => f.url)).toEqual(["docs/design.md"]);
  });

  it.concurrent("fails links alone for a reference-style link that escapes the repository", async () => {
    const readme = `${good}\nSee [the parent][parent].\n\n[parent]: ../outside.md\n`;
    const result = await grade({ readme });
    expectOnlyFailure(result, "links");
    expect(check(result, "links").detail).toContain("outside the repository");
  });

  it.concurrent("fails links alone for a local link that leaves the repository through a symlink", async () => {
    const outside = await temporaryDir("hl-outside-");
    await writeFile(join(outside, "secret.md"), "outside");
    const context = await makeTrial({
      readme: `${good}\nSee [more](docs/linked/secret.md).\n`,
    });
    await symlink(outside, join(context.trialRoot, "docs/linked"));
    const result = await createReadmePackageGrader(contract).grade(context);
    // npm test fails as well: inside the sandbox the link leads nowhere, and `node --test` says so.
    expect(failedCheckIds(result)).toEqual(["links", "package-tests"]);
    expect(check(result, "links").detail).toContain("symlink");
  });

  it.concurrent("fails links alone for a remote link when the contract forbids them", async () => {
    const readme = `${good}\nThe runner is described in [the Node.js docs](https://nodejs.org/api/test.html).\n`;
    const result = await grade({ readme });
    expectOnlyFailure(result, "links");
    expect(check(result, "links").detail).toContain("https://nodejs.org/api/test.html");
  });

  it.concurrent("accepts remote links, anchors, mailto: and data: when remote links are allowed", async () => {
    const readme = `${good}\n[docs](https://nodejs.org/) [top](#installation) [mail](mailto:a@example.com) ![dot](data:image/png;base64,AA==)\n`;
    const result = await grade({ readme }, { forbidRemoteLinks: false });
    expect(failedCheckIds(result)).toEqual([]);
    expect(check(result, "links").evidence).toMatchObject({ remote: 1, skipped: 3 });
  });

  it.concurrent("fails installation alone when no npm install of the package name is shown", async () => {
    const readme = replaceExact(good, "npm install @fixture/task-pool", "npm install task-pool");
    const result = await grade({ readme });
    expectOnlyFailure(result, "installation");
  });

  it.concurrent("fails public-api alone when an export is not shown in code", async () => {
    let readme = replaceExact(
      good,
      "import { createPool, DEFAULT_CONCURRENCY }",
      "import { createPool }",
    );
    readme = replaceExact(readme, "concurrency: DEFAULT_CONCURRENCY,", "concurrency: 2,");
    readme = replaceExact(readme, "`DEFAULT_CONCURRENCY` (`2`)", "`2`");
    readme = replaceExact(readme, "### `DEFAULT_CONCURRENCY`", "### Default concurrency");
    const result = await grade({ readme });
    expectOnlyFailure(result, "public-api");
    expect(check(result, "public-api").detail).toBe(
      "not shown in README code: DEFAULT_CONCURRENCY",
    );
  });

  it.concurrent("fails public-api alone when a contract name is not exported by the package entry", async () => {
    const readme = `${good}\nThere is no \`createQueue\` any more.\n`;
    const result = await grade({ readme }, { publicApi: [...contract.publicApi, "createQueue"] });
    expectOnlyFailure(result, "public-api");
    expect(check(result, "public-api").detail).toBe(
      "not exported by the package entry: createQueue",
    );
  });

  it.concurrent("does not take an export list the package's own code prints", async () => {
    // The entry runs in the probe's process and prints a report claiming an export it lacks,
    // in the probe's format, then exits before the probe could report.
    const forged = `process.stdout.write('@@harness-exports@@{"ok":true,"exports":["DEFAULT_CONCURRENCY","PoolFullError","createPool","createQueue"]}\\n', () => process.exit(0));\n`;
    const readme = `${good}\nThere is no \`createQueue\` any more.\n`;
    const result = await grade(
      { readme, files: { "src/index.js": `${forged}${await entry()}` } },
      { publicApi: [...contract.publicApi, "createQueue"] },
    );
    expect(check(result, "public-api").passed).toBe(false);
  });

  it.concurrent("fails behavior-evidence alone when a required code token is missing", async () => {
    const result = await grade({ readme: replaceExact(good, "AbortError", "abort reason") });
    expectOnlyFailure(result, "behavior-evidence");
    expect(check(result, "behavior-evidence").evidence).toEqual({
      missingTokens: ["AbortError"],
      missingAnyOf: [],
    });
  });

  it.concurrent("fails behavior-evidence alone when no token of a required group appears", async () => {
    const readme = replaceExact(good, "```sh\nnpm test\n```", "Run the test script.");
    const result = await grade({ readme });
    expectOnlyFailure(result, "behavior-evidence");
    expect(check(result, "behavior-evidence").detail).toBe(
      "none of npm test | node --test in code",
    );
  });

  it.concurrent("fails package-tests alone when the package's tests fail, keeping the output tail", async () => {
    const result = await grade({
      readme: good,
      files: {
        "test/broken.test.js":
          'import { test } from "node:test";\nimport assert from "node:assert/strict";\ntest("deliberately broken", () => assert.equal(1, 2));\n',
      },
    });
    expectOnlyFailure(result, "package-tests");
    const evidence = check(result, "package-tests").evidence as {
      exitCode: number;
      stdoutTail: string;
    };
    expect(evidence.exitCode).not.toBe(0);
    expect(evidence.stdoutTail).toContain("deliberately broken");
  });

  it.concurrent("fails package-tests alone when npm test outlives its timeout", async () => {
    const context = await makeTrial({
      readme: good,
      files: { "test/hang.test.js": "setInterval(() => {}, 1000);\n" },
    });
    const result = await createReadmePackageGrader(contract, { packageTestTimeoutMs: 1500 }).grade(
      context,
    );
    expectOnlyFailure(result, "package-tests");
    expect(check(result, "package-tests").detail).toContain("timed out after 1500 ms");
  });

  it.concurrent("fails no-invented-capabilities alone for a forbidden claim, case-insensitively across lines", async () => {
    const readme = `${good}\nThe pool also works with\nCOMMONJS projects.\n`;
    const result = await grade({ readme });
    expectOnlyFailure(result, "no-invented-capabilities");
    expect(check(result, "no-invented-capabilities").evidence).toEqual({
      matches: [{ claim: "CommonJS", line: good.split("\n").length + 2 }],
    });
  });

  it.concurrent("never leaks the trial path into evidence", async () => {
    const context = await makeTrial({ readme: good });
    const result = await createReadmePackageGrader(contract).grade(context);
    const text = JSON.stringify(result);
    expect(text).not.toContain(context.trialRoot);
    expect(text).toContain("<trial-root>");
  });

  it.concurrent("treats a README.md that links outside the trial as missing", async () => {
    const outside = await temporaryDir("hl-outside-");
    await writeFile(join(outside, "README.md"), good);
    const context = await makeTrial({ readme: null });
    await symlink(join(outside, "README.md"), join(context.trialRoot, "README.md"));
    const result = await createReadmePackageGrader(contract).grade(context);
    expect(failedCheckIds(result)).toEqual(["readme-exists"]);
    expect(check(result, "readme-exists").detail).toContain("outside the repository");
  });

  it.concurrent("treats a README.md directory as missing", async () => {
    const context = await makeTrial({ readme: null });
    await mkdir(join(context.trialRoot, "README.md"));
    const result = await createReadmePackageGrader(contract).grade(context);
    expect(failedCheckIds(result)).toEqual(["readme-exists"]);
  });
});
