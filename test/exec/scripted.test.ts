import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ExecutorRunInput,
  type RuntimeReceipt,
  runtimeReceiptSchema,
  ScriptedExecutor,
} from "../../src/exec/index.js";
import { startAgentThread } from "../../src/exec/scripted/agent-thread.js";
import type { ScriptedTools } from "../../src/exec/scripted/contract.js";
import { createScriptedTools } from "../../src/exec/scripted/tools.js";
import { createToolPolicy, type ToolPolicy } from "../../src/policy/index.js";
import {
  capturePatch,
  createTrialWorkspace,
  snapshotTree,
  type TrialWorkspace,
} from "../../src/workspace/index.js";
import { testSandbox } from "../support/sandbox.js";

const testSandboxInstance = await testSandbox();

let base: string;
let fixture: string;
let outside: string;
let workspace: TrialWorkspace;
let policy: ToolPolicy;
let agentCounter = 0;

const TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"];

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-exec-"));
  fixture = join(base, "fixture");
  outside = join(base, "outside");
  await mkdir(join(fixture, "src"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(fixture, "README.md"), "# Demo\n");
  await writeFile(join(fixture, "src", "math.js"), "export const add = (a, b) => a - b;\n");
  await writeFile(join(fixture, "print-env.js"), "console.log(JSON.stringify(process.env));\n");
  await writeFile(join(fixture, "hang.js"), "setInterval(() => {}, 1000);\n");
  await writeFile(join(outside, "keep.txt"), "untouched\n");
  workspace = await createTrialWorkspace(fixture, { tempParent: base });
  policy = makePolicy();
});

afterEach(async () => {
  await workspace.cleanup();
  await rm(base, { recursive: true, force: true });
});

function makePolicy(
  allowedCommands: string[][] = [
    ["git", "status", "--short"],
    ["node", "print-env.js"],
    ["node", "hang.js"],
  ],
) {
  return createToolPolicy({
    trialRoot: workspace.root,
    allowedWrites: ["README.md", "src/math.js", "docs/notes.md"],
    allowedCommands,
    tools: TOOLS,
  });
}

/** Writes an agent module to a temp file; tests load it the way a manifest's `agent` would. */
async function agentModule(source: string): Promise<string> {
  const path = join(base, `agent-${++agentCounter}.mjs`);
  await writeFile(path, source);
  return path;
}

function runInput(agent: string, overrides: Partial<ExecutorRunInput> = {}): ExecutorRunInput {
  return {
    prompt: "Fix the add function.",
    preamble: "- [verify] run the tests before finishing",
    cwd: workspace.root,
    policy,
    timeoutMs: 20_000,
    scratchDir: workspace.scratchDir,
    sandbox: testSandboxInstance,
    runtime: { tools: TOOLS, allowedTools: [], disallowedTools: ["WebFetch", "WebSearch"] },
    agent,
    trialIndex: 3,
    variant: "candidate",
    task: "fix-add",
    ...overrides,
  };
}

async function run(
  agent: string,
  overrides: Partial<ExecutorRunInput> = {},
): Promise<RuntimeReceipt> {
  const receipt = await new ScriptedExecutor().run(runInput(agent, overrides));
  expect(runtimeReceiptSchema.parse(receipt)).toEqual(receipt);
  return receipt;
}

describe("scripted host: built-in agents", () => {
  it("nop does nothing and reports it, with no invented usage", async () => {
    const before = await snapshotTree(workspace.root, { mode: "trial" });
    const receipt = await run("nop");
    expect(receipt).toMatchObject({
      status: "completed",
      infraReason: null,
      finalText: "nothing to do",
      tokens: null,
      costUsd: null,
      credits: null,
      turns: null,
      toolCalls: 0,
      executor: { host: "scripted", kind: "scripted", agentVersion: "builtin:nop" },
      trial: { task: "fix-add", variant: "candidate", index: 3 },
      settings: { agent: "nop", disallowedTools: ["WebFetch", "WebSearch"] },
    });
    expect((await snapshotTree(workspace.root, { mode: "trial" })).hash).toBe(before.hash);
  });

  it("oracle applies a reference patch as the harness, proving the task solvable", async () => {
    const solved = await createTrialWorkspace(fixture, { tempParent: base });
    await writeFile(join(solved.root, "src", "math.js"), "export const add = (a, b) => a + b;\n");
    const reference = await capturePatch(solved.root);
    await solved.cleanup();
    const patchFile = join(base, "fix.diff");
    await writeFile(patchFile, reference.patchBytes);

    const receipt = await run(`oracle:${patchFile}`);
    expect(receipt.status).toBe("completed");
    expect(receipt.finalText).toBe("applied fix.diff");
    expect(receipt.executor.agentVersion).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(receipt.trace).toContainEqual({ type: "oracle_apply", patch: "fix.diff", ok: true });
    expect(await readFile(join(workspace.root, "src", "math.js"), "utf8")).toContain("a + b");
    expect(policy.decisions()).toEqual([]);
  });

  it("oracle with a patch that does not apply, or a missing patch, is the experiment's error", async () => {
    const patchFile = join(base, "bad.diff");
    await writeFile(
      patchFile,
      "diff --git a/nope.js b/nope.js\n--- a/nope.js\n+++ b/nope.js\n@@ -1 +1 @@\n-x\n+y\n",
    );
    expect(await run(`oracle:${patchFile}`)).toMatchObject({
      status: "infra_error",
      infraReason: "scripted_agent_failed",
      error: expect.stringContaining("does not apply"),
    });
    expect(await run(`oracle:${join(base, "missing.diff")}`)).toMatchObject({
      status: "infra_error",
      infraReason: "config_invalid",
    });
  });
});

describe("scripted host: module agents", () => {
  it("gives the agent its context and tools that really read, edit, write, search and run commands", async () => {
    const agent = await agentModule(`
      export default async ({ prompt, preamble, cwd, tools, trial, signal }) => {
        const read = await tools.read("src/math.js");
        const edit = await tools.edit("src/math.js", "a - b", "a + b");
        const write = await tools.write("docs/notes.md", "fixed\\n");
        const glob = await tools.glob("**/*.js");
        const grep = await tools.grep("a \\\\+ b", "src");
        const status = await tools.bash("git status --short");
        return JSON.stringify({ prompt, preamble, cwd, trial, aborted: signal.aborted, read, edit, write, glob, grep, status });
      };
    `);
    const receipt = await run(agent);
    expect(receipt.status).toBe("completed");
    const report = JSON.parse(receipt.finalText);
    expect(report).toMatchObject({
      prompt: "Fix the add function.",
      preamble: "- [verify] run the tests before finishing",
      cwd: workspace.root,
      trial: { index: 3, variant: "candidate", task: "fix-add" },
      aborted: false,
      read: { ok: true, content: "export const add = (a, b) => a - b;\n" },
      edit: { ok: true, replacements: 1 },
      write: { ok: true, bytes: 6 },
      glob: { ok: true, files: ["hang.js", "print-env.js", "src/math.js"] },
      grep: {
        ok: true,
        matches: [{ path: "src/math.js", line: 1, text: "export const add = (a, b) => a + b;" }],
      },
      status: { ok: true, exitCode: 0, stdout: " M src/math.js\n?? docs/\n" },
    });
    expect(await readFile(join(workspace.root, "docs", "notes.md"), "utf8")).toBe("fixed\n");
    expect(receipt.toolCalls).toBe(6);
    expect(receipt.permissionDenials).toEqual([]);
    expect(policy.decisions().map((d) => [d.tool, d.decision])).toEqual([
      ["Read", "allow"],
      ["Edit", "allow"],
      ["Write", "allow"],
      ["Glob", "allow"],
      ["Grep", "allow"],
      ["Bash", "allow"],
    ]);
    const calls = receipt.trace.filter((e) => e.type === "tool_call");
    expect(calls).toHaveLength(6);
    expect(calls[0]).toMatchObject({
      seq: 1,
      tool: "Read",
      decision: "allow",
      result: { ok: true, contentChars: 36 },
    });
    expect(receipt.executor.agentVersion).toMatch(/^sha256:/);
  });

  it("applies a MultiEdit all or nothing and never lists .git in glob results", async () => {
    const agent = await agentModule(`
      export default async ({ tools }) => JSON.stringify([
        await tools.call("MultiEdit", { file_path: "src/math.js", edits: [
          { old_string: "add", new_string: "sum" }, { old_string: "missing", new_string: "x" } ] }),
        await tools.call("multiedit", { file_path: "src/math.js", edits: [
          { old_string: "add", new_string: "sum" }, { old_string: "a - b", new_string: "a + b" } ] }),
        await tools.glob("**/*"),
      ]);
    `);
    policy = createToolPolicy({ ...policy.config, tools: [...TOOLS, "MultiEdit"] });
    const [partial, whole, glob] = JSON.parse((await run(agent)).finalText);
    expect(partial).toMatchObject({
      ok: false,
      denied: false,
      error: expect.stringContaining("edits[1]"),
    });
    expect(whole).toEqual({ ok: true, replacements: 2 });
    expect(await readFile(join(workspace.root, "src", "math.js"), "utf8")).toBe(
      "export const sum = (a, b) => a + b;\n",
    );
    expect(glob.files).toEqual(["README.md", "hang.js", "print-env.js", "src/math.js"]);
  });

  it("runs commands with an allowlisted environment and a private HOME", async () => {
    process.env.HL_TEST_API_TOKEN = "must-not-leak-0123456789";
    try {
      const agent = await agentModule(`
        export default async ({ tools }) => (await tools.bash("node print-env.js")).stdout;
      `);
      const receipt = await run(agent);
      const env = JSON.parse(receipt.finalText);
      // The sandbox's own, empty HOME: nothing of the user's or the harness's.
      expect(env.HOME).toBe("/tmp/home");
      expect(env.HL_TEST_API_TOKEN).toBeUndefined();
      // bwrap adds PWD; everything else is the list the receipt names.
      expect(
        Object.keys(env)
          .filter((name) => name !== "PWD")
          .sort(),
      ).toEqual(receipt.settings.envVarNames);
      expect(JSON.stringify(receipt)).not.toContain("must-not-leak");
    } finally {
      delete process.env.HL_TEST_API_TOKEN;
    }
  });

  it("masks the harness's credential values in the trace and the final report", async () => {
    const agent = await agentModule(`
      export default async ({ tools, prompt }) => {
        await tools.write("README.md", prompt);
        return "the key is " + prompt;
      };
    `);
    const secret = "sk-test-0123456789abcdef";
    const receipt = await new ScriptedExecutor({ secretValues: [secret] }).run(
      runInput(agent, { prompt: secret }),
    );
    expect(receipt.status).toBe("completed");
    expect(receipt.finalText).toBe("the key is [REDACTED]");
    expect(JSON.stringify(receipt)).not.toContain(secret);
  });

  it("reports failures of allowed calls as values the agent can handle", async () => {
    const agent = await agentModule(`
      export default async ({ tools }) => JSON.stringify([
        await tools.read("missing.md"),
        await tools.edit("README.md", "no such text", "x"),
        await tools.grep("(unclosed"),
      ]);
    `);
    const results = JSON.parse((await run(agent)).finalText);
    expect(results).toEqual([
      { ok: false, denied: false, error: "no such file" },
      { ok: false, denied: false, error: "`old_string` not found in the file" },
      { ok: false, denied: false, error: expect.stringContaining("invalid regular expression") },
    ]);
  });

  it("makes a throwing agent the experiment's error (an infrastructure error naming its file and line), keeping what it did before", async () => {
    const agent = await agentModule(`
      export default async ({ tools }) => { await tools.read("README.md"); throw new Error("gave up"); };
    `);
    const receipt = await run(agent);
    expect(receipt).toMatchObject({
      status: "infra_error",
      infraReason: "scripted_agent_failed",
      error: expect.stringMatching(
        /^the scripted agent threw: gave up \(at agent-\d+\.mjs:2:\d+\)$/,
      ),
      toolCalls: 1,
    });
    expect(receipt.trace.filter((e) => e.type === "tool_call")).toHaveLength(1);
  });

  it("makes a non-string result, or an agent whose thread exits, the experiment's error", async () => {
    const number = await agentModule("export default async () => 42;");
    expect(await run(number)).toMatchObject({
      status: "infra_error",
      infraReason: "scripted_agent_failed",
      error: "the scripted agent returned number; expected a string (its final report)",
    });
    const exits = await agentModule("export default async () => { process.exit(0); };");
    expect(await run(exits)).toMatchObject({
      status: "infra_error",
      infraReason: "scripted_agent_failed",
      error: "the agent's thread exited with code 0",
    });
  });

  it("treats an unusable agent setting as an infrastructure error (config_invalid)", async () => {
    const noDefault = await agentModule("export const agent = () => 'x';");
    for (const spec of [join(base, "absent.mjs"), "relative/agent.mjs", noDefault, ""]) {
      expect(await run(spec), spec).toMatchObject({
        status: "infra_error",
        infraReason: "config_invalid",
      });
    }
  });

  it("refuses to run with a policy made for another trial root", async () => {
    const other = createToolPolicy({
      trialRoot: outside,
      allowedWrites: [],
      allowedCommands: [],
      tools: TOOLS,
    });
    expect(await run("nop", { policy: other })).toMatchObject({
      status: "infra_error",
      infraReason: "config_invalid",
    });
  });

  it("treats a module that fails while loading as the experiment's error, not the agent's", async () => {
    const broken = await agentModule("export default async () => {;");
    expect(await run(broken)).toMatchObject({
      status: "infra_error",
      infraReason: "config_invalid",
      error: expect.stringContaining("failed to load"),
    });
    const noDefault = await agentModule("export const agent = async () => 'x';\n");
    expect(await run(noDefault)).toMatchObject({
      status: "infra_error",
      error: expect.stringContaining("has no default-exported function (write `export default"),
    });
  });

  it("times out a hanging agent, kills its command, and refuses its later tool calls", async () => {
    const agent = await agentModule(`
      export default async ({ tools, signal }) => {
        signal.addEventListener("abort", () => { tools.write("README.md", "late").catch(() => {}); });
        tools.bash("node hang.js");
        await new Promise(() => {});
      };
    `);
    const receipt = await run(agent, { timeoutMs: 500 });
    expect(receipt).toMatchObject({ status: "timeout", error: expect.stringContaining("500 ms") });
    const calls = receipt.trace.filter((e) => e.type === "tool_call");
    // The command was killed with the trial (no exit code), and the late write never happened.
    expect(calls).toMatchObject([{ tool: "Bash", result: { ok: true, exitCode: null } }]);
    expect(await readFile(join(workspace.root, "README.md"), "utf8")).toBe("# Demo\n");
  });

  // Each would keep a harness that ran agents in its own thread from ever reaching its timer.
  for (const [name, body] of [
    [
      "retries a refused command in a loop",
      'let r; do { r = await tools.bash("npm test"); } while (r.exitCode !== 0); return "done";',
    ],
    ["spins in a busy loop", "while (true) {}"],
    ["awaits a promise that never settles", "await new Promise(() => {});"],
    ["spins in a loop of resolved promises", "for (;;) await Promise.resolve();"],
  ] as const)
    it(`ends an agent that ${name} at its timeout, and records the timeout`, async () => {
      const agent = await agentModule(`export default async ({ tools }) => { ${body} };`);
      const receipt = await run(agent, { timeoutMs: 300 });
      expect(receipt).toMatchObject({
        status: "timeout",
        error: "the agent did not finish within 300 ms",
      });
      expect(receipt.trace.at(-1)).toEqual({ type: "timeout", afterMs: 300 });
    });

  it("rejects every tool call made after the trial ended, in the agent's thread and in the harness", async () => {
    const agent = await agentModule(`
      export default async ({ tools, signal }) => {
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve));
        const outcomes = [];
        for (const call of [() => tools.read("README.md"), () => tools.bash("git status --short")])
          outcomes.push(await call().then((r) => ({ resolved: r }), (e) => ({ rejected: e.message })));
        return JSON.stringify(outcomes);
      };
    `);
    // The thread told that the trial ended, but not (yet) terminated: its calls reject.
    const answered: string[] = [];
    const tools = new Proxy({} as ScriptedTools, {
      get: (_target, method: string) => async () => {
        answered.push(method);
        return { ok: true };
      },
    });
    const thread = startAgentThread(
      pathToFileURL(agent).href,
      {
        prompt: "",
        preamble: "",
        cwd: workspace.root,
        trial: { index: 1, variant: "v", task: "t" },
        setup: { components: [], context: [] },
      },
      tools,
    );
    thread.abort();
    const ending = await thread.ending;
    await thread.terminate();
    const ended = { rejected: "the trial has ended; tool calls are no longer carried out" };
    expect(ending).toEqual({ kind: "returned", value: JSON.stringify([ended, ended]) });
    expect(answered).toEqual([]);
    // The harness's side refuses them too, should one arrive after the end.
    const controller = new AbortController();
    const toolbox = createScriptedTools({
      policy,
      cwd: workspace.root,
      scratchDir: workspace.scratchDir,
      sandbox: testSandboxInstance,
      signal: controller.signal,
      commandTimeoutMs: 10_000,
      trace: [],
    });
    controller.abort();
    await expect(toolbox.tools.read("README.md")).rejects.toThrow(ended.rejected);
    await expect(toolbox.tools.bash("git status --short")).rejects.toThrow(ended.rejected);
    expect(toolbox.calls()).toBe(0);
  });

  it("stops on an external abort, even an agent in a busy loop", async () => {
    for (const body of ["await new Promise(() => {});", "while (true) {}"]) {
      const controller = new AbortController();
      const agent = await agentModule(`export default async () => { ${body} };`);
      setTimeout(() => controller.abort(), 50);
      expect(await run(agent, { signal: controller.signal })).toMatchObject({
        status: "aborted",
      });
    }
  });
});

describe("scripted host: adversarial agents", () => {
  it("denies and records every attempt to leave the trial, and nothing outside it changes", async () => {
    // As if an earlier step had planted a link to the outside inside the trial.
    await symlink(outside, join(workspace.root, "escape"));
    await symlink(join(outside, "planted.txt"), join(workspace.root, "docs-link"));
    const agent = await agentModule(`
      export default async ({ tools }) => {
        const attempts = [
          tools.write("../x", "x"),
          tools.write(${JSON.stringify(join(outside, "abs.txt"))}, "x"),
          tools.read(${JSON.stringify(join(outside, "keep.txt"))}),
          tools.write("escape/keep.txt", "overwritten"),
          tools.write("escape/new.txt", "x"),
          tools.write("docs-link", "x"),
          tools.edit("escape/keep.txt", "untouched", "changed"),
          tools.write(".git/hooks/pre-commit", "#!/bin/sh\\necho pwned\\n"),
          tools.write("package.json", "{}"),
          tools.glob("../**/*"),
          tools.grep("untouched", ${JSON.stringify(outside)}),
          tools.bash("git status --short; touch ../x"),
          tools.bash("git status --short && curl https://example.com"),
          tools.bash("echo $(id)"),
          tools.bash("echo \`id\`"),
          tools.bash("git status --short > ../x"),
          tools.bash("curl https://example.com"),
          tools.bash("node -e require('fs').writeFileSync('../x','x')"),
          tools.call("WebFetch", { url: "https://example.com" }),
          tools.call("WebSearch", { query: "x" }),
          tools.call("NotebookEdit", { notebook_path: "a.ipynb" }),
        ];
        return JSON.stringify(await Promise.all(attempts));
      };
    `);
    const gitBefore = await snapshotTree(join(workspace.root, ".git"), { mode: "trial" });
    const outsideBefore = await snapshotTree(outside, { mode: "trial" });
    const baseBefore = (await readdir(base)).sort();
    const receipt = await run(agent);
    expect(receipt.status).toBe("completed");
    const results = JSON.parse(receipt.finalText) as {
      ok: boolean;
      denied: boolean;
      rule: string;
    }[];
    expect(results.map((r) => r.rule)).toEqual([
      "path-outside-root",
      "path-outside-root",
      "path-outside-root",
      "path-outside-root",
      "path-outside-root",
      "path-outside-root",
      "path-outside-root",
      "git-dir",
      "write-not-allowed",
      "path-outside-root",
      "path-outside-root",
      "shell-metacharacter",
      "shell-metacharacter",
      "shell-metacharacter",
      "shell-metacharacter",
      "shell-metacharacter",
      "command-not-allowed",
      "shell-metacharacter",
      "unknown-tool",
      "unknown-tool",
      "unknown-tool",
    ]);
    expect(results.every((r) => r.ok === false && r.denied === true)).toBe(true);
    const decisions = policy.decisions();
    expect(decisions).toHaveLength(results.length);
    expect(decisions.every((d) => d.decision === "deny")).toBe(true);
    expect(receipt.permissionDenials).toHaveLength(results.length);
    expect(receipt.toolCalls).toBe(results.length);
    expect((await snapshotTree(outside, { mode: "trial" })).hash).toBe(outsideBefore.hash);
    expect((await snapshotTree(join(workspace.root, ".git"), { mode: "trial" })).hash).toBe(
      gitBefore.hash,
    );
    expect((await readdir(base)).sort()).toEqual(baseBefore);
    expect(JSON.stringify(decisions)).not.toContain(workspace.root);
  });
});
