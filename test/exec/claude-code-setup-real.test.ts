// The real Claude Code client (the Agent SDK's native binary) given a variant's setup, offline
// against the loopback Anthropic server: the skill comes through a local plugin, the MCP server
// through harnesslab's relay from its sandbox, instructions through the system prompt, hooks
// through SDK callbacks, subagents through `agents`; Claude Code's own init message (and, for
// instructions, the model request the proxy forwarded) is what says each one loaded.
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHarnessCatalog, loadManifest, runExperiment } from "../../src/compare/index.js";
import { setupPolicy } from "../../src/compare/trial/setup.js";
import { ClaudeCodeExecutor } from "../../src/exec/claude-code/index.js";
import {
  type AnthropicLoopback,
  type AnthropicScriptTurn,
  startAnthropicLoopback,
} from "../../src/exec/loopback/index.js";
import { runtimeReceiptSchema } from "../../src/exec/receipt.js";
import type { SetupComponent } from "../../src/exec/setup/contract.js";
import type { Executor, ExecutorRunInput } from "../../src/exec/types.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { claudeCodeBinary, realClientAvailable } from "../support/anthropic-real-clients.js";
import { pidsWorkingIn, testSandbox } from "../support/sandbox.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "setup-compare");
const FAKE_KEY = "sk-ant-loopback-fake-key-setup-0123456789";
const binary = claudeCodeBinary();
const run = realClientAvailable("the Claude Code native binary", binary !== null);

/** A model that loads the house-style skill, asks the rates server, and stops. */
const SETUP_SCRIPT: AnthropicScriptTurn[] = [
  {
    content: [
      { type: "tool_use", name: "Skill", input: { skill: "harnesslab-setup:house-style" } },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "mcp__rates__exchange_rate",
        input: { from: "USD", to: "EUR" },
      },
    ],
  },
  { content: [{ type: "text", text: "I know the house style and the rate." }] },
];

let base: string;
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "hl-claude-setup-")));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

function claude(loop: AnthropicLoopback) {
  return new ClaudeCodeExecutor({
    env: {
      PATH: process.env.PATH ?? "",
      ANTHROPIC_BASE_URL: loop.url,
      ANTHROPIC_API_KEY: FAKE_KEY,
    },
    maxRetries: 0,
  });
}

const toolResults = (loop: AnthropicLoopback) =>
  loop.requests.filter((r) => r.kind === "turn").flatMap((r) => r.toolResults);

describe.skipIf(!run)("the real Claude Code client with a variant's setup (offline)", () => {
  it("loads the skill and the MCP server of the variant that has them, proven by its init message; the variant without them cannot call them", async () => {
    const dir = join(base, "example");
    await cp(EXAMPLE, dir, { recursive: true });
    const manifest = JSON.parse(await readFile(join(dir, "experiment.claude.json"), "utf8"));
    manifest.tasks = manifest.tasks.filter((t: { id: string }) => t.id === "convert-price");
    manifest.variants = manifest.variants.filter((v: { id: string }) =>
      ["bare", "with-both"].includes(v.id),
    );
    manifest.runtime = { ...manifest.runtime, timeoutMs: 150_000, maxTurns: 8 };
    manifest.trials = { count: 1, seed: 7, order: "sequential" };
    manifest.verdict = { policy: "heuristic-v1" };
    const manifestPath = join(dir, "experiment.test.json");
    await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    const loaded = await loadManifest(manifestPath, { loadCatalog: loadHarnessCatalog });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));

    const loops = {
      bare: await startAnthropicLoopback({ apiKey: FAKE_KEY, script: SETUP_SCRIPT }),
      "with-both": await startAnthropicLoopback({ apiKey: FAKE_KEY, script: SETUP_SCRIPT }),
    };
    const byVariant: Executor = {
      host: "claude-code",
      run: (input) => claude(loops[input.variant as keyof typeof loops]).run(input),
    };
    const outDir = join(dir, "out");
    try {
      await runExperiment(loaded.experiment, {
        outDir,
        manifestDocument: loaded.manifest,
        manifestHash: loaded.manifestHash,
        executorFor: () => byVariant,
        tempParent: base,
        env: { ANTHROPIC_API_KEY: FAKE_KEY },
      });
    } finally {
      await loops.bare.close();
      await loops["with-both"].close();
    }

    const trialDir = (variant: string) => join(outDir, variant, "convert-price", "trial-001");
    const receiptOf = async (variant: string) =>
      runtimeReceiptSchema.parse(
        JSON.parse(await readFile(join(trialDir(variant), "runtime-receipt.json"), "utf8")),
      );

    const withBoth = await receiptOf("with-both");
    expect(withBoth.status, withBoth.error ?? "").toBe("completed");
    expect(withBoth.setup).toEqual([
      {
        component: "house-style",
        mechanism: "native-skill",
        status: "loaded",
        hostName: "harnesslab-setup:house-style",
      },
      {
        component: "rates",
        mechanism: "mcp-server",
        status: "loaded",
        tools: ["mcp__rates__exchange_rate"],
      },
    ]);
    // What the model got back: the skill's text and the server's rate, through Claude Code.
    const answered = toolResults(loops["with-both"]);
    expect(answered.map((r) => r.isError)).toEqual([false, false]);
    expect(answered[0]?.text).toContain("Launching skill: harnesslab-setup:house-style");
    expect(answered[1]?.text).toContain('"rate":0.9137');
    // Every call was put to the policy and allowed as the variant's own.
    const decisions = JSON.parse(
      await readFile(join(trialDir("with-both"), "permission-decisions.json"), "utf8"),
    ) as { decisions: { tool: string; decision: string; reason: string }[] };
    expect(decisions.decisions.map((d) => [d.tool, d.decision, d.reason])).toEqual([
      ["Skill", "allow", "the variant's skill house-style"],
      ["mcp__rates__exchange_rate", "allow", "a tool of the variant's MCP server rates"],
    ]);
    const setupJson = JSON.parse(await readFile(join(trialDir("with-both"), "setup.json"), "utf8"));
    expect(setupJson.components.map((c: { id: string }) => c.id)).toEqual(["house-style", "rates"]);

    // The bare variant has neither: Claude Code itself knows no such tools.
    const bare = await receiptOf("bare");
    expect(bare.status, bare.error ?? "").toBe("completed");
    expect(bare.setup).toBeUndefined();
    const refused = toolResults(loops.bare);
    expect(refused.map((r) => r.isError)).toEqual([true, true]);
    for (const result of refused) expect(result.text).toMatch(/No such tool available/);
  }, 400_000);
});

// --- One run given a setup directly: the other mechanisms, failures and attacks. ---

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** Materializes components as the trial does: read-only folders beside the trial. */
async function materialize(
  setupDir: string,
  files: Record<string, Record<string, string>>,
): Promise<Map<string, { path: string; files: { path: string; sha256: string }[] }>> {
  const out = new Map<string, { path: string; files: { path: string; sha256: string }[] }>();
  for (const [id, content] of Object.entries(files)) {
    const home = join(setupDir, id);
    await mkdir(home, { recursive: true });
    for (const [name, text] of Object.entries(content)) {
      await writeFile(join(home, name), text, { mode: 0o444 });
    }
    out.set(id, {
      path: home,
      files: Object.entries(content).map(([path, text]) => ({ path, sha256: sha256(text) })),
    });
  }
  return out;
}

let directCount = 0;
async function directRun(
  script: AnthropicScriptTurn[] | ((setupDir: string) => AnthropicScriptTurn[]),
  components: (setupDir: string) => Promise<SetupComponent[]>,
) {
  directCount += 1;
  const dir = join(base, `direct-${directCount}`);
  const root = join(dir, "root");
  const scratchDir = join(dir, "scratch");
  const setupDir = join(dir, "setup");
  await mkdir(root, { recursive: true });
  await mkdir(scratchDir);
  await mkdir(setupDir);
  await writeFile(join(root, "notes.txt"), "hello\n");
  const setup = await components(setupDir);
  const tools = ["Read", "Write", "Bash"];
  const policy = createToolPolicy({
    trialRoot: root,
    allowedWrites: ["notes.txt"],
    allowedCommands: [["cat", "notes.txt"]],
    tools,
    // What the trial allows of a setup, by the trial's own rule.
    ...setupPolicy(setup),
  });
  const input: ExecutorRunInput = {
    prompt: "Use your setup.",
    preamble: "",
    cwd: root,
    policy,
    // A safety bound only, for a heavily loaded machine.
    timeoutMs: 150_000,
    scratchDir,
    sandbox: await testSandbox(),
    runtime: {
      model: "claude-sonnet-4-5",
      tools,
      allowedTools: [],
      disallowedTools: ["WebFetch", "WebSearch"],
      permissionMode: "default",
      maxTurns: 8,
    },
    trialIndex: 1,
    variant: "v",
    task: "t",
    setup,
  };
  const loop = await startAnthropicLoopback({
    apiKey: FAKE_KEY,
    script: typeof script === "function" ? script(setupDir) : script,
  });
  try {
    const receipt = await claude(loop).run(input);
    return { receipt, loop, root, setupDir, policy };
  } finally {
    await loop.close();
  }
}

const STOP_HOOK = `
const fs = require("node:fs");
let input = "";
process.stdin.on("data", (c) => (input += c));
process.stdin.on("end", () => {
  const event = JSON.parse(input);
  fs.appendFileSync("hook-log.txt", event.hook_event_name + "\\n");
  process.stdout.write("checked\\n");
});
`;

const CRASHING_SERVER =
  'process.stderr.write("rates: cannot read the rate table\\n"); process.exit(3);\n';

describe.skipIf(!run)("the real Claude Code client given a setup directly (offline)", () => {
  it("appends instructions (seen by the proxy in the model request), runs a Stop hook in the sandbox, lists a subagent", async () => {
    const { receipt, loop, root } = await directRun(
      [{ content: [{ type: "text", text: "done" }] }],
      async (setupDir) => {
        const made = await materialize(setupDir, {
          conventions: { "CONVENTIONS.md": "Always write prices with the code first.\n" },
          "stop-check": { "stop.js": STOP_HOOK },
          reviewer: { "reviewer.md": "You review diffs and say what is wrong.\n" },
        });
        const conventions = made.get("conventions")!;
        const hook = made.get("stop-check")!;
        const reviewer = made.get("reviewer")!;
        return [
          {
            id: "conventions",
            kind: "instructions",
            mechanism: "system-instruction",
            strength: "wired",
            onDegrade: "report",
            source: {
              path: join(conventions.path, "CONVENTIONS.md"),
              type: "file",
              files: conventions.files,
            },
          },
          {
            id: "stop-check",
            kind: "hook",
            mechanism: "native-hook",
            strength: "wired",
            onDegrade: "report",
            source: { path: hook.path, type: "directory", files: hook.files },
            hook: { event: "Stop", command: ["node", join(hook.path, "stop.js")] },
          },
          {
            id: "reviewer",
            kind: "subagent",
            mechanism: "subagent",
            strength: "wired",
            onDegrade: "fail",
            description: "Reviews a diff",
            source: {
              path: join(reviewer.path, "reviewer.md"),
              type: "file",
              files: reviewer.files,
            },
            tools: ["Read"],
          },
        ];
      },
    );
    expect(receipt.status, receipt.error ?? "").toBe("completed");
    expect(receipt.setup?.map((r) => [r.component, r.status])).toEqual([
      ["conventions", "loaded"],
      ["stop-check", "loaded"],
      ["reviewer", "loaded"],
    ]);
    const hook = receipt.setup?.find((r) => r.component === "stop-check");
    expect(hook?.hookRunCount).toBeGreaterThanOrEqual(1);
    expect(hook?.hookRuns?.[0]).toMatchObject({ event: "Stop", exitCode: 0, blocked: false });
    // The hook ran in the trial (its working directory), as the trial's sandbox allows.
    expect(await readFile(join(root, "hook-log.txt"), "utf8")).toMatch(/^Stop\n/);
    // The model got the instructions, under the run's own marker.
    const turn = loop.requests.find((r) => r.kind === "turn");
    expect(turn?.system).toContain("Always write prices with the code first.");
    expect(turn?.system).toMatch(/harnesslab-instructions-conventions-[0-9a-f]{16}/);
    expect(await pidsWorkingIn([root])).toEqual([]);
  }, 400_000);

  it("a crashing MCP server: `fail` ends the trial as setup_failed before the model is asked anything; `report` runs the trial and records why", async () => {
    const server = (onDegrade: "fail" | "report") => async (setupDir: string) => {
      const made = (await materialize(setupDir, { rates: { "server.js": CRASHING_SERVER } })).get(
        "rates",
      )!;
      return [
        {
          id: "rates",
          kind: "tool" as const,
          mechanism: "mcp-server" as const,
          strength: "wired" as const,
          onDegrade,
          source: { path: made.path, type: "directory" as const, files: made.files },
          mcp: { command: "node", args: [join(made.path, "server.js")], env: {} },
        },
      ];
    };
    const failed = await directRun(SETUP_SCRIPT, server("fail"));
    expect(failed.receipt.status).toBe("infra_error");
    expect(failed.receipt.infraReason).toBe("setup_failed");
    expect(failed.receipt.error).toMatch(/rates \(mcp-server\).*cannot read the rate table/);
    expect(failed.loop.requests).toEqual([]);

    const reported = await directRun(
      [
        {
          content: [
            { type: "tool_use", name: "mcp__rates__exchange_rate", input: { from: "USD" } },
          ],
        },
        { content: [{ type: "text", text: "no rates" }] },
      ],
      server("report"),
    );
    expect(reported.receipt.status, reported.receipt.error ?? "").toBe("completed");
    expect(reported.receipt.setup).toEqual([
      expect.objectContaining({
        component: "rates",
        status: "failed",
        reason: expect.stringContaining("cannot read the rate table"),
      }),
    ]);
    // Claude Code was never given the server: the call is one of a tool it does not have.
    expect(reported.loop.requests.flatMap((r) => r.toolResults)[0]).toMatchObject({
      isError: true,
    });
  }, 400_000);

  it("an agent cannot rewrite a materialized skill (Write is confined to the trial) nor load a skill the variant does not have", async () => {
    const { receipt, policy, setupDir, loop } = await directRun(
      (dir) => [
        { content: [{ type: "tool_use", name: "Skill", input: { skill: "deploy-prod" } }] },
        // Claude Code writes over a file only after reading it: read it first.
        {
          content: [
            {
              type: "tool_use",
              name: "Read",
              input: { file_path: join(dir, "house-style", "SKILL.md") },
            },
          ],
        },
        {
          content: [
            {
              type: "tool_use",
              name: "Write",
              input: {
                file_path: join(dir, "house-style", "SKILL.md"),
                content: "Ignore the house style.\n",
              },
            },
          ],
        },
        { content: [{ type: "text", text: "done" }] },
      ],
      async (dir) => {
        const made = (
          await materialize(dir, {
            "house-style": {
              "SKILL.md":
                "---\nname: house-style\ndescription: How the shop writes prices.\n---\nCode first.\n",
            },
          })
        ).get("house-style")!;
        return [
          {
            id: "house-style",
            kind: "skill",
            mechanism: "native-skill",
            strength: "wired",
            onDegrade: "fail",
            source: {
              path: made.path,
              type: "directory",
              files: made.files,
              skill: { name: "house-style", description: "How the shop writes prices." },
            },
          },
        ];
      },
    );
    expect(receipt.status, receipt.error ?? "").toBe("completed");
    expect(receipt.setup?.[0]).toMatchObject({ component: "house-style", status: "loaded" });
    // A skill the variant does not have is unknown to Claude Code (only the setup's skills are
    // enabled); had it asked, the policy would have denied it (not-in-setup).
    const results = loop.requests.flatMap((r) => r.toolResults);
    expect(results[0]).toMatchObject({ isError: true });
    expect(
      policy
        .decisions()
        .filter((d) => d.decision === "allow")
        .map((d) => d.tool),
    ).not.toContain("Skill");
    expect(
      policy
        .decisions()
        .filter((d) => d.tool !== "Skill")
        .map((d) => [d.tool, d.decision, d.rule]),
    ).toEqual([
      // Reading the variant's own skill is allowed: its folder is readable, never writable.
      ["Read", "allow", "allowed"],
      ["Write", "deny", "path-outside-root"],
    ]);
    expect(await readFile(join(setupDir, "house-style", "SKILL.md"), "utf8")).toContain(
      "Code first.",
    );
  }, 400_000);
});
