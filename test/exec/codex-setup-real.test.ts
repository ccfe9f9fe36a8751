// The real Codex client (the SDK's native binary) given a variant's setup, offline against the
// loopback Responses server: the skill linked into the isolated CODEX_HOME, the instructions as
// its AGENTS.md, the MCP server through harnesslab's relay from the trial's sandbox. Codex has no
// init message; what loaded is what Codex did: sent the skill and the instructions to the model
// (seen by the endpoint proxy), connected to the server and listed its tools.
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupPolicy } from "../../src/compare/trial/setup.js";
import { locateCodexBinary } from "../../src/exec/codex/binary.js";
import { CodexExecutor } from "../../src/exec/codex/index.js";
import { type ResponsesScriptTurn, startResponsesLoopback } from "../../src/exec/loopback/index.js";
import type { SetupComponent } from "../../src/exec/setup/contract.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { createTrialWorkspace } from "../../src/workspace/index.js";
import { pidsWorkingIn, testSandbox } from "../support/sandbox.js";

const binary = locateCodexBinary();
if (!binary.ok) {
  if (process.env.CI) throw new Error(`the Codex binary must be installed in CI: ${binary.error}`);
  console.log(`skipped: real Codex client setup tests (${binary.error})`);
}
const describeReal = binary.ok ? describe : describe.skip;

const LOOPBACK_KEY = "loopback-key-setup-7d2e";
// A model Codex has no catalog entry for: it offers MCP tools directly (for gpt-5 models it defers
// them behind its tool_search tool, which the real model calls first).
const MODEL = "loopback-model";
const RATES_SERVER = join(
  import.meta.dirname,
  "..",
  "..",
  "examples",
  "setup-compare",
  "mcp",
  "rates",
  "server.mjs",
);

let base: string;
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "hl-codex-setup-")));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

const sha256 = (bytes: Buffer | string) =>
  `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** The three components, materialized read-only as a trial materializes them. */
async function materialize(setupDir: string, serverSource: string): Promise<SetupComponent[]> {
  const skill = join(setupDir, "house-style");
  const rules = join(setupDir, "conventions");
  const rates = join(setupDir, "rates");
  await mkdir(skill, { recursive: true });
  await mkdir(rules, { recursive: true });
  await mkdir(rates, { recursive: true });
  const skillText =
    "---\nname: house-style\ndescription: How this shop writes prices (code first).\n---\nWrite `EUR 12.50`.\n";
  const rulesText = "Run the tests before you say you are done.\n";
  await writeFile(join(skill, "SKILL.md"), skillText, { mode: 0o444 });
  await writeFile(join(rules, "CONVENTIONS.md"), rulesText, { mode: 0o444 });
  await writeFile(join(rates, "server.mjs"), serverSource, { mode: 0o444 });
  return [
    {
      id: "house-style",
      kind: "skill",
      mechanism: "native-skill",
      strength: "wired",
      onDegrade: "fail",
      source: {
        path: skill,
        type: "directory",
        files: [{ path: "SKILL.md", sha256: sha256(skillText) }],
        skill: { name: "house-style", description: "How this shop writes prices (code first)." },
      },
    },
    {
      id: "conventions",
      kind: "instructions",
      mechanism: "system-instruction",
      strength: "wired",
      onDegrade: "report",
      source: {
        path: join(rules, "CONVENTIONS.md"),
        type: "file",
        files: [{ path: "CONVENTIONS.md", sha256: sha256(rulesText) }],
      },
    },
    {
      id: "rates",
      kind: "tool",
      mechanism: "mcp-server",
      strength: "wired",
      onDegrade: "fail",
      source: {
        path: rates,
        type: "directory",
        files: [{ path: "server.mjs", sha256: sha256(serverSource) }],
      },
      mcp: { command: "node", args: [join(rates, "server.mjs")], env: {} },
    },
  ];
}

async function setupRun(script: ResponsesScriptTurn[], serverSource: string) {
  const fixture = join(base, `fixture-${Math.random().toString(36).slice(2)}`);
  await mkdir(fixture, { recursive: true });
  await writeFile(join(fixture, "notes.txt"), "hello\n");
  const workspace = await createTrialWorkspace(fixture, { tempParent: base });
  const setupDir = join(workspace.scratchDir, "..", "setup");
  const setup = await materialize(setupDir, serverSource);
  const loop = await startResponsesLoopback({ apiKey: LOOPBACK_KEY, script });
  try {
    const policy = createToolPolicy({
      trialRoot: workspace.root,
      allowedWrites: [],
      allowedCommands: [],
      tools: ["Read", "Bash"],
      ...setupPolicy(setup),
    });
    const receipt = await new CodexExecutor({
      env: { PATH: process.env.PATH ?? "" },
      endpoint: { baseUrl: loop.url, apiKey: LOOPBACK_KEY },
    }).run({
      prompt: "What is the rate?",
      preamble: "",
      cwd: workspace.root,
      policy,
      // A safety bound only, for a heavily loaded machine.
      timeoutMs: 150_000,
      scratchDir: workspace.scratchDir,
      sandbox: await testSandbox(),
      runtime: { model: MODEL, tools: ["Read", "Bash"], allowedTools: [], disallowedTools: [] },
      trialIndex: 1,
      variant: "v",
      task: "t",
      setup,
    });
    const leftover = await pidsWorkingIn([workspace.root]);
    return { receipt, loop, policy, leftover };
  } finally {
    await loop.close();
    await workspace.cleanup();
  }
}

describeReal("the real Codex client with a variant's setup (offline)", () => {
  it("sends the skill and the instructions to the model and calls the MCP server's tool through the relay; each is loaded by what Codex did", async () => {
    const server = await readFile(RATES_SERVER, "utf8");
    const { receipt, loop, policy, leftover } = await setupRun(
      [
        {
          output: [
            {
              type: "function_call",
              // Codex offers the server as one namespace tool, its tools inside.
              namespace: "mcp__rates",
              name: "exchange_rate",
              arguments: { from: "USD", to: "EUR" },
            },
          ],
        },
        { output: [{ type: "message", text: "The rate is 0.9137." }] },
      ],
      server,
    );
    expect(receipt.status, receipt.error ?? "").toBe("completed");
    expect(receipt.setup).toEqual([
      {
        component: "house-style",
        mechanism: "native-skill",
        status: "loaded",
        hostName: "house-style",
      },
      { component: "conventions", mechanism: "system-instruction", status: "loaded" },
      {
        component: "rates",
        mechanism: "mcp-server",
        status: "loaded",
        tools: ["mcp__rates__exchange_rate"],
      },
    ]);
    const offered = loop.requests.find((r) => r.kind === "turn")?.toolNames ?? [];
    expect(offered).toContain("mcp__rates");
    const outputs = loop.requests.flatMap((r) => r.toolOutputs);
    expect(outputs.map((o) => o.text).join("\n")).toContain("0.9137");
    expect(policy.decisions().map((d) => [d.tool, d.decision])).toContainEqual([
      "mcp__rates__exchange_rate",
      "allow",
    ]);
    expect(leftover).toEqual([]);
  }, 400_000);

  it("a server that crashes on start ends the trial as setup_failed before Codex starts (on-degrade fail)", async () => {
    const { receipt, loop } = await setupRun(
      [{ output: [{ type: "message", text: "never asked" }] }],
      'process.stderr.write("rates: no rate table\\n"); process.exit(3);\n',
    );
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "setup_failed" });
    expect(receipt.error).toMatch(/rates \(mcp-server\).*no rate table/);
    expect(loop.requests).toEqual([]);
  }, 400_000);
});
