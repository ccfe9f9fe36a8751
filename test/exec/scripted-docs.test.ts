// The scripted-agent guide's complete example is code users copy: it must type-check against the
// package's types and do what the guide says on the example it names. The agents `harness init`
// writes must type-check too, since they carry the same `// @ts-check` promise. tsc takes
// seconds per run on a busy machine, hence the longer limits of those tests.

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initFiles } from "../../src/cli/init-template.js";
import { ScriptedExecutor } from "../../src/exec/index.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { createTrialWorkspace } from "../../src/workspace/index.js";
import { testSandbox } from "../support/sandbox.js";

const execFileAsync = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../..");
const GUIDE = join(REPO, "docs", "scripted-agents.md");
const FIXTURE = join(REPO, "examples", "fix-the-bug", "fixture");
const MARKER = "<!-- scripted-agents.md: complete example -->";
const TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"];

async function guideExample(): Promise<string> {
  const text = await readFile(GUIDE, "utf8");
  const at = text.indexOf(MARKER);
  expect(at, `${GUIDE} has no "${MARKER}" marker`).toBeGreaterThan(-1);
  const block = /^```js\n([\s\S]*?)^```$/m.exec(text.slice(at));
  expect(block, "the marker is followed by a js block").not.toBeNull();
  return block![1]!;
}

const TYPE_CHECK_MARKER = "<!-- scripted-agents.md: type-check command -->";

/** The guide's type-check command, as the options it gives tsc. */
async function documentedTypeCheckOptions(): Promise<Record<string, unknown>> {
  const text = await readFile(GUIDE, "utf8");
  const at = text.indexOf(TYPE_CHECK_MARKER);
  expect(at, `${GUIDE} has no "${TYPE_CHECK_MARKER}" marker`).toBeGreaterThan(-1);
  const command = /^```sh\n(npx tsc [^\n]*)\n```$/m.exec(text.slice(at))?.[1];
  expect(command, "the marker is followed by an `npx tsc …` block").toBeDefined();
  const words = command!.split(/\s+/).slice(2);
  const options: Record<string, unknown> = {};
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (!word.startsWith("--")) continue;
    const next = words[i + 1];
    const name = word.slice(2);
    if (next !== undefined && !next.startsWith("--") && !next.includes("*")) {
      options[name] = name === "types" ? next.split(",") : next;
      i++;
    } else options[name] = true;
  }
  return options;
}

/**
 * Runs tsc over `files` with the options of the guide's command, `harnesslab` resolving to this
 * package's sources (a user's project resolves it to the installed package's declarations).
 * Returns tsc's diagnostics ("" when clean).
 */
async function typeCheck(dir: string, files: string[]): Promise<string> {
  const config = {
    compilerOptions: {
      ...(await documentedTypeCheckOptions()),
      typeRoots: [join(REPO, "node_modules", "@types")],
      paths: { harnesslab: [join(REPO, "src", "api", "index.ts")] },
    },
    files,
  };
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify(config));
  try {
    await execFileAsync(process.execPath, [
      join(REPO, "node_modules", "typescript", "bin", "tsc"),
      "-p",
      dir,
    ]);
    return "";
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; message: string };
    return `${failed.stdout ?? ""}${failed.stderr ?? ""}` || failed.message;
  }
}

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-guide-"));
});
afterAll(() => rm(base, { recursive: true, force: true }));

describe("docs/scripted-agents.md", () => {
  it("its type-check command checks only @ts-check files, strictly", async () => {
    expect(await documentedTypeCheckOptions()).toMatchObject({
      noEmit: true,
      allowJs: true,
      strict: true,
      module: "nodenext",
      moduleResolution: "nodenext",
    });
    expect(await documentedTypeCheckOptions()).not.toHaveProperty("checkJs");
  });

  it("its complete example type-checks with its own command against the package's types, and a typo would not", async () => {
    const dir = await mkdtemp(join(base, "tsc-"));
    const source = await guideExample();
    expect(source.startsWith("// @ts-check\n")).toBe(true);
    await writeFile(join(dir, "careful.mjs"), source);
    expect(await typeCheck(dir, ["careful.mjs"])).toBe("");

    await writeFile(join(dir, "typo.mjs"), source.replace("found.matches[0]", "found.matchez[0]"));
    expect(await typeCheck(dir, ["typo.mjs"])).toContain("matchez");
  }, 180_000);

  it.each([
    [1, "tries the partial fix first, sees npm test fail, then fixes it"],
    [2, "fixes it at the first attempt"],
  ])("its complete example fixes examples/fix-the-bug in trial %i (%s)", async (trialIndex) => {
    const dir = await mkdtemp(join(base, "run-"));
    const agent = join(dir, "careful.mjs");
    await writeFile(agent, await guideExample());
    const workspace = await createTrialWorkspace(FIXTURE, { tempParent: dir });
    try {
      const policy = createToolPolicy({
        trialRoot: workspace.root,
        allowedWrites: ["src/index.js"],
        allowedCommands: [["npm", "test"]],
        tools: TOOLS,
      });
      const receipt = await new ScriptedExecutor().run({
        prompt: "Fix parseDuration.",
        preamble: "",
        cwd: workspace.root,
        policy,
        timeoutMs: 60_000,
        scratchDir: workspace.scratchDir,
        sandbox: await testSandbox(),
        runtime: { tools: TOOLS, allowedTools: [], disallowedTools: [] },
        agent,
        trialIndex,
        variant: "careful",
        task: "fix-the-bug",
      });
      expect(receipt.status, receipt.error ?? "").toBe("completed");
      expect(receipt.finalText).toBe(
        "Fixed src/index.js:18; npm test passes (test/duration.test.js stays as it was: write-not-allowed).",
      );
      // The attempted edit of the tests is refused by the policy and recorded as a denial.
      expect(receipt.permissionDenials.map((d) => d.rule)).toEqual(["write-not-allowed"]);
      const npmTests = receipt.trace.filter(
        (e) => e.type === "tool_call" && e.tool === "Bash",
      ).length;
      expect(npmTests).toBe(trialIndex % 2 === 1 ? 2 : 1);
      const source = await readFile(join(workspace.root, "src", "index.js"), "utf8");
      expect(source).toContain('const compact = text.replace(/\\s+/g, "");');
      const test = await readFile(join(workspace.root, "test", "duration.test.js"), "utf8");
      expect(test).toContain("allows whitespace between parts");
    } finally {
      await workspace.cleanup();
    }
  });
});

describe("harness init's scripted agents", () => {
  it("type-check against the package's types", async () => {
    const dir = await mkdtemp(join(base, "init-"));
    const files = initFiles("scripted", dir);
    const agents = Object.keys(files).filter((name) => name.startsWith("agents/"));
    for (const name of agents) {
      await writeFile(join(dir, name.replace("agents/", "")), files[name]!);
    }
    const checked = agents
      .filter((name) => files[name]!.startsWith("// @ts-check"))
      .map((name) => name.replace("agents/", ""));
    expect(checked.sort()).toEqual(["baseline.mjs", "careful.mjs"]);
    expect(await typeCheck(dir, checked)).toBe("");
  }, 180_000);
});
