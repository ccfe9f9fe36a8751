// The real Claude Code client (the Agent SDK's native binary) solving forge tasks through the
// harness's forge MCP server, offline: the loopback Anthropic server plays scripted turns that
// call the MCP tools; Claude Code runs contained, reaches its model and the MCP server through
// the two endpoints granted into its sandbox, and every call is put to the tool policy.
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHarnessCatalog, loadManifest, runExperiment } from "../../src/compare/index.js";
import { ClaudeCodeExecutor } from "../../src/exec/claude-code/index.js";
import {
  type AnthropicLoopback,
  type AnthropicScriptTurn,
  startAnthropicLoopback,
} from "../../src/exec/loopback/index.js";
import type { RepoState } from "../../src/scoring/index.js";
import {
  claudeCodeBinary,
  claudeCodeRuntime,
  IN_CI,
  realClientAvailable,
} from "../support/anthropic-real-clients.js";
import {
  copyForgeSuiteTools,
  DUPLICATE_CHANGES,
  FORGE_HARNESS,
  FORGE_TOOL_COMPONENTS,
  SMALL_SEED,
} from "../support/forge.js";

const FAKE_KEY = "sk-ant-loopback-fake-key-forge-0123456789";
const binary = claudeCodeBinary();
const run = realClientAvailable("the Claude Code native binary", binary !== null);

/** Closes #2 as a duplicate of #1 with the forge MCP tools, after a denied curl. */
const MUTATION_SCRIPT: AnthropicScriptTurn[] = [
  {
    content: [
      { type: "text", text: "Let me look at issue #2." },
      { type: "tool_use", name: "mcp__forge__get_issue", input: { number: 2 } },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: { command: "curl http://127.0.0.1:40118/api/v1/version", description: "probe" },
      },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "mcp__forge__add_comment",
        input: { number: 2, body: "Duplicate of #1" },
      },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "mcp__forge__add_labels",
        input: { number: 2, labels: ["duplicate"] },
      },
    ],
  },
  { content: [{ type: "tool_use", name: "mcp__forge__close", input: { number: 2 } }] },
  { content: [{ type: "text", text: "Closed #2 as a duplicate of #1." }] },
];

/** Reads the open issues and reports their count. */
const READ_SCRIPT: AnthropicScriptTurn[] = [
  {
    content: [{ type: "tool_use", name: "mcp__forge__list_issues", input: { state: "open" } }],
  },
  { content: [{ type: "text", text: "There are 2 open issues: #1 and #2." }] },
];

let base: string;
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "hl-claude-forge-")));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Closes #2 with curl through the forge's gateway; the token is never in a command. */
const API = "http://127.0.0.1:40118/api/v1/repos/acme/widgets";
const curl = (method: string, path: string, body: string) =>
  `curl -sS -f -X ${method} -H 'Content-Type: application/json' -d '${body}' ${API}${path}`;
const CLI_SCRIPT: AnthropicScriptTurn[] = [
  {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: { command: curl("POST", "/issues/2/comments", '{"body":"Duplicate of #1"}') },
      },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: { command: curl("POST", "/issues/2/labels", '{"labels":["duplicate"]}') },
      },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: { command: curl("PATCH", "/issues/2", '{"state":"closed"}') },
      },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: { command: "curl -sS -m 5 http://127.0.0.1:40117/v1/models" },
      },
    ],
  },
  { content: [{ type: "text", text: "Closed #2 as a duplicate of #1." }] },
];

/** The forge suite's stand-in tools as Claude Code arms, each the agent's only tool. */
const TOOL_ARMS_HARNESS = `${FORGE_HARNESS}
${FORGE_TOOL_COMPONENTS}
binding widgets-mcp for claude-code { mechanism mcp-server strength wired }
binding forge-cli for claude-code { mechanism prompt-preamble strength advisory }
plugin tool-arms {
  version "1.0.0"
  provides [ component.widgets-mcp, component.forge-cli ]
}
composition claude-tool-mcp {
  target claude-code
  include [ plugin.forge-core@^1, plugin.tool-arms@^1 ]
  configure { forge.tool = "widgets-mcp" forge.only = true }
}
composition claude-tool-mcp-again {
  target claude-code
  include [ plugin.forge-core@^1, plugin.tool-arms@^1 ]
  configure { forge.tool = "widgets-mcp" forge.only = true run.label = "again" }
}
composition claude-tool-cli {
  target claude-code
  include [ plugin.forge-core@^1, plugin.tool-arms@^1 ]
  configure { forge.tool = "forge-cli" forge.only = true }
}
composition claude-tool-cli-again {
  target claude-code
  include [ plugin.forge-core@^1, plugin.tool-arms@^1 ]
  configure { forge.tool = "forge-cli" forge.only = true run.label = "again" }
}
`;

const repo = { owner: "acme", repo: "widgets" };
/** Closes #2 with the third-party MCP server's tools (owner and repo on every call). */
const TOOL_MCP_SCRIPT: AnthropicScriptTurn[] = [
  ...[
    ["create_issue_comment", { index: 2, body: "Duplicate of #1" }],
    ["add_issue_labels", { index: 2, labels: ["duplicate"] }],
    ["edit_issue", { index: 2, state: "closed" }],
  ].map(([tool, input]) => ({
    content: [
      {
        type: "tool_use" as const,
        name: `mcp__widgets-mcp__${tool as string}`,
        input: { ...repo, ...(input as object) },
      },
    ],
  })),
  { content: [{ type: "text", text: "Closed #2 as a duplicate of #1." }] },
];

/** Closes #2 with the CLI, run by its name; then tries curl, which this arm does not have. */
const TOOL_CLI_SCRIPT: AnthropicScriptTurn[] = [
  ...[
    "forge-cli comment 2 'Duplicate of #1'",
    "forge-cli label 2 duplicate",
    "forge-cli close 2",
    "curl -sS http://127.0.0.1:40118/api/v1/version",
  ].map((command) => ({
    content: [{ type: "tool_use" as const, name: "Bash", input: { command } }],
  })),
  { content: [{ type: "text", text: "Closed #2 as a duplicate of #1." }] },
];

function manifest(task: Record<string, unknown>, arm = "mcp") {
  return {
    schemaVersion: "harness-compare.v2",
    harness: "./forge.harness",
    tasks: [
      {
        fixture: "./fixture",
        prompt: "./prompt.md",
        forge: { seed: "./seed.json", repo: "acme/widgets" },
        ...task,
      },
    ],
    // Two variants (a comparison needs two) with the same script: both must solve the task.
    variants: [
      { id: arm, composition: `claude-${arm}` },
      { id: `${arm}-again`, composition: `claude-${arm}-again` },
    ],
    baseline: arm,
    runtime: claudeCodeRuntime({ timeoutMs: 60000 }),
    trials: { count: 1, seed: 1, order: "sequential" },
    verdict: { policy: "heuristic-v1" },
    concurrency: 1,
  };
}

async function runClaude(
  name: string,
  task: Record<string, unknown>,
  script: AnthropicScriptTurn[],
  arm = "mcp",
) {
  const dir = join(base, name);
  await mkdir(join(dir, "fixture"), { recursive: true });
  await writeFile(join(dir, "fixture", "README.md"), "# widgets\n");
  await writeFile(join(dir, "prompt.md"), "Work on the forge as asked.\n");
  await writeFile(join(dir, "forge.harness"), TOOL_ARMS_HARNESS);
  await copyForgeSuiteTools(dir);
  await writeFile(join(dir, "seed.json"), JSON.stringify(SMALL_SEED));
  await writeFile(join(dir, "experiment.json"), JSON.stringify(manifest(task, arm), null, 2));
  const loaded = await loadManifest(join(dir, "experiment.json"), {
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  const server: AnthropicLoopback = await startAnthropicLoopback({ script, apiKey: FAKE_KEY });
  const tempParent = join(dir, "trials");
  await mkdir(tempParent);
  try {
    const outDir = join(dir, "out");
    const result = await runExperiment(loaded.experiment, {
      outDir,
      manifestDocument: loaded.manifest,
      manifestHash: loaded.manifestHash,
      executorFor: () =>
        new ClaudeCodeExecutor({
          env: {
            PATH: process.env.PATH ?? "",
            ANTHROPIC_BASE_URL: server.url,
            ANTHROPIC_API_KEY: FAKE_KEY,
          },
          maxRetries: 0,
        }),
      tempParent,
      env: { ...process.env, ANTHROPIC_API_KEY: FAKE_KEY },
    });
    return { ...result, requests: server.requests };
  } finally {
    await server.close();
  }
}

const readJson = async (path: string) => JSON.parse(await readFile(path, "utf8")) as unknown;

describe.skipIf(!run)("the real Claude Code client on forge tasks (offline)", () => {
  it.runIf(IN_CI)("has the Claude Code native binary installed in CI", () => {
    expect(binary).not.toBeNull();
  });

  it("solves a mutation task through the forge MCP tools, contained, every call decided", async () => {
    const { verdict, outDir, requests } = await runClaude(
      "mutation",
      {
        id: "close-duplicate",
        tier: "single-mutation",
        graders: [{ kind: "forge-state", changes: DUPLICATE_CHANGES }],
      },
      MUTATION_SCRIPT,
    );
    expect(verdict.trials.map((t) => [t.variant, t.outcome, t.explanation])).toEqual([
      ["mcp", "passed", "all graders passed"],
      ["mcp-again", "passed", "all graders passed"],
    ]);
    // Claude Code offered the model the forge tools from the harness's MCP server.
    const offered = requests.find((r) => r.kind === "turn")?.toolNames ?? [];
    expect(offered).toEqual(expect.arrayContaining(["mcp__forge__get_issue", "mcp__forge__close"]));
    // The MCP answer reached the model: issue #2's comment by alice is in the tool result.
    const results = requests.flatMap((r) => r.toolResults.map((t) => t.text));
    expect(results.some((text) => text.includes("Same here"))).toBe(true);
    for (const trial of verdict.trials) {
      const dir = join(outDir, trial.artifactDir);
      const decisions = (await readJson(join(dir, "permission-decisions.json"))) as {
        decisions: Array<{ tool: string; decision: string; rule: string }>;
      };
      expect(decisions.decisions.map((d) => [d.tool, d.decision, d.rule])).toEqual([
        ["mcp__forge__get_issue", "allow", "allowed"],
        ["Bash", "deny", "command-not-allowed"],
        ["mcp__forge__add_comment", "allow", "allowed"],
        ["mcp__forge__add_labels", "allow", "allowed"],
        ["mcp__forge__close", "allow", "allowed"],
      ]);
      const toolUse = (await readJson(join(dir, "tool-use.json"))) as {
        counts: Record<string, number>;
      };
      expect(toolUse.counts).toEqual({ shell: 1, mcp: 4, other: 0 });
      const after = (await readJson(join(dir, "forge-after.json"))) as RepoState;
      expect(after.issues?.find((i) => i.number === 2)).toMatchObject({
        state: "closed",
        labels: ["duplicate"],
      });
      const metrics = (await readJson(join(dir, "metrics.json"))) as {
        turns: number;
        costEquivalentTokens: number;
        tokens: { uncachedInput: number; output: number };
      };
      expect(metrics.turns).toBeGreaterThan(0);
      // The loopback reports 120 input, 30 cache read, 10 cache write, 24 output per turn.
      expect(metrics.costEquivalentTokens).toBeGreaterThan(metrics.tokens.uncachedInput);
      const trace = (await readFile(join(dir, "trace.jsonl"), "utf8")).split("\n");
      expect(trace.some((line) => line.includes('"harness.contained"'))).toBe(true);
    }
    expect(verdict.containment?.kind).toBe("bwrap");
  });

  it("closes the duplicate with curl through the gateway: its commands run in their own sandbox, reaching the forge and nothing else", async () => {
    const { verdict, outDir, requests } = await runClaude(
      "cli",
      { id: "close-duplicate", graders: [{ kind: "forge-state", changes: DUPLICATE_CHANGES }] },
      CLI_SCRIPT,
      "cli",
    );
    expect(verdict.trials.map((t) => [t.variant, t.outcome, t.explanation])).toEqual([
      ["cli", "passed", "all graders passed"],
      ["cli-again", "passed", "all graders passed"],
    ]);
    // No forge tool was offered: this arm reaches the forge with commands only.
    const offered = requests.find((r) => r.kind === "turn")?.toolNames ?? [];
    expect(offered.filter((name) => name.startsWith("mcp__"))).toEqual([]);
    const results = requests.flatMap((r) => r.toolResults);
    // The relayed command reached the gateway (the comment's JSON came back)…
    expect(results.some((r) => r.text.includes('"body":"Duplicate of #1"'))).toBe(true);
    for (const trial of verdict.trials) {
      const dir = join(outDir, trial.artifactDir);
      const toolUse = (await readJson(join(dir, "tool-use.json"))) as {
        counts: Record<string, number>;
        calls: Array<{ command?: string }>;
      };
      expect(toolUse.counts).toEqual({ shell: 4, mcp: 0, other: 0 });
      const log = (await readJson(join(dir, "forge-write-log.json"))) as Array<{ status: number }>;
      expect(log.map((e) => e.status)).toEqual([201, 200, 201]);
    }
    // …and the model's port was not reachable from the command's sandbox.
    const probe = results.at(-1);
    expect(probe?.isError).toBe(true);
    expect(probe?.text).toMatch(/Failed to connect to 127\.0\.0\.1 port 40117|Couldn't connect/);
  });

  it("answers a read task from what the forge MCP tools return", async () => {
    const { verdict, outDir } = await runClaude(
      "read",
      {
        id: "count-open",
        tier: "read",
        graders: [
          {
            kind: "read-facts",
            facts: [{ description: "two open issues", anyOf: ["2 open issues"] }],
          },
        ],
      },
      READ_SCRIPT,
    );
    expect(verdict.trials.map((t) => [t.variant, t.outcome])).toEqual([
      ["mcp", "passed"],
      ["mcp-again", "passed"],
    ]);
    const response = await readFile(
      join(outDir, verdict.trials[0]!.artifactDir, "response.txt"),
      "utf8",
    );
    expect(response).toContain("2 open issues");
  });
  it("closes the duplicate with a third-party MCP server as its only tool: no shell, the gateway its only way", async () => {
    const { verdict, outDir, requests } = await runClaude(
      "tool-mcp",
      { id: "close-duplicate", graders: [{ kind: "forge-state", changes: DUPLICATE_CHANGES }] },
      TOOL_MCP_SCRIPT,
      "tool-mcp",
    );
    expect(verdict.trials.map((t) => [t.variant, t.outcome, t.explanation])).toEqual([
      ["tool-mcp", "passed", "all graders passed"],
      ["tool-mcp-again", "passed", "all graders passed"],
    ]);
    // Claude Code offered the model the server's tools and nothing else: no Bash, no files.
    const offered = requests.find((r) => r.kind === "turn")?.toolNames ?? [];
    expect(offered).toEqual(expect.arrayContaining(["mcp__widgets-mcp__edit_issue"]));
    expect(offered.filter((name) => !name.startsWith("mcp__widgets-mcp__"))).toEqual([]);
    for (const trial of verdict.trials) {
      const dir = join(outDir, trial.artifactDir);
      const setup = (await readJson(join(dir, "setup.json"))) as {
        components: Array<{ id: string; status: string }>;
      };
      expect(setup.components.find((c) => c.id === "widgets-mcp")?.status).toBe("loaded");
      const log = (await readJson(join(dir, "forge-write-log.json"))) as Array<{
        path: string;
        actor: string;
      }>;
      expect(log.map((e) => `${e.path} ${e.actor}`)).toEqual([
        "/api/v1/repos/acme/widgets/issues/2/comments agent",
        "/api/v1/repos/acme/widgets/issues/2/labels agent",
        "/api/v1/repos/acme/widgets/issues/2 agent",
      ]);
    }
  });

  it("closes the duplicate with a CLI run by its name, whose shell runs nothing else", async () => {
    const { verdict, outDir, requests } = await runClaude(
      "tool-cli",
      { id: "close-duplicate", graders: [{ kind: "forge-state", changes: DUPLICATE_CHANGES }] },
      TOOL_CLI_SCRIPT,
      "tool-cli",
    );
    expect(verdict.trials.map((t) => [t.variant, t.outcome, t.explanation])).toEqual([
      ["tool-cli", "passed", "all graders passed"],
      ["tool-cli-again", "passed", "all graders passed"],
    ]);
    const offered = requests.find((r) => r.kind === "turn")?.toolNames ?? [];
    expect(offered).toEqual(["Bash"]);
    // The relayed command ran the program (the comment's JSON came back).
    const results = requests.flatMap((r) => r.toolResults);
    expect(results.some((r) => r.text.includes('"body": "Duplicate of #1"'))).toBe(true);
    for (const trial of verdict.trials) {
      const decisions = (await readJson(
        join(outDir, trial.artifactDir, "permission-decisions.json"),
      )) as { decisions: Array<{ decision: string; rule: string }> };
      expect(decisions.decisions.map((d) => `${d.decision} ${d.rule}`)).toEqual([
        "allow allowed",
        "allow allowed",
        "allow allowed",
        "deny command-not-allowed",
      ]);
    }
  });
});
