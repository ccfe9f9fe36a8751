// The real Codex CLI (from @openai/codex-sdk's bundled binary) driven by the harness against the
// loopback Responses server: whole trials through runExperiment, and the failures the executor
// must classify quickly. Nothing leaves 127.0.0.1; no credentials are used.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
  trialMetricsSchema,
} from "../../src/compare/index.js";
import { locateCodexBinary } from "../../src/exec/codex/binary.js";
import { CodexExecutor } from "../../src/exec/codex/index.js";
import {
  type Executor,
  permissionDecisionsSchema,
  runtimeReceiptSchema,
} from "../../src/exec/index.js";
import {
  applyPatch,
  execCommand,
  type ResponsesLoopback,
  type ResponsesScriptTurn,
  startResponsesLoopback,
} from "../../src/exec/loopback/index.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { createTrialWorkspace } from "../../src/workspace/index.js";
import { testSandbox } from "../support/sandbox.js";

const binary = locateCodexBinary();
if (!binary.ok) {
  if (process.env.CI) throw new Error(`the Codex binary must be installed in CI: ${binary.error}`);
  console.log(`skipped: real Codex client tests (${binary.error})`);
}
const describeReal = binary.ok ? describe : describe.skip;

const LOOPBACK_KEY = "loopback-key-4f1c9a";
const MODEL = "gpt-5.5";
const PATCH =
  "*** Begin Patch\n*** Update File: greeting.txt\n@@\n-hello\n+hello world\n*** End Patch\n";

/** Reads the file, fixes it, runs the check; `extra` turns come before the final message. */
function script(extra: ResponsesScriptTurn[] = []): ResponsesScriptTurn[] {
  return [
    { output: [execCommand("cat greeting.txt")] },
    { output: [applyPatch(PATCH)] },
    { output: [execCommand("node check.js")] },
    ...extra,
    { output: [{ type: "message", text: "greeting.txt now says hello world." }] },
  ];
}

const HARNESS = `
component greet-loop {
  kind workflow
  description "Read the file, change it, run the check."
  input { task repository }
  output { patch }
  permissions { workspace read workspace write process allow network deny }
}

component stay-in-scope {
  kind policy
  description "Only change greeting.txt and run only the check."
  permissions { workspace write network deny }
}

binding greet-loop for codex { mechanism prompt-preamble strength advisory }
binding stay-in-scope for codex { mechanism prompt-preamble strength advisory }

plugin greet-kit {
  version "1.0.0"
  provides [ component.greet-loop ]
}

plugin scope-kit {
  version "1.0.0"
  provides [ component.stay-in-scope ]
}

composition plain {
  target codex
  include [ plugin.greet-kit@^1 ]
  require greet-loop { minimum advisory }
}

composition scoped {
  target codex
  include [ plugin.greet-kit@^1, plugin.scope-kit@^1 ]
  require greet-loop { minimum advisory }
  require stay-in-scope { minimum advisory }
}
`;

let base: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-codex-real-"));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function writeExperiment(dir: string): Promise<string> {
  const fixture = join(dir, "fixture");
  await mkdir(fixture, { recursive: true });
  await writeFile(join(fixture, "greeting.txt"), "hello\n");
  await writeFile(
    join(fixture, "check.js"),
    'const text = require("node:fs").readFileSync("greeting.txt", "utf8");\nprocess.exit(text === "hello world\\n" ? 0 : 1);\n',
  );
  await writeFile(join(dir, "prompt.md"), "Make greeting.txt say `hello world`.\n");
  await writeFile(join(dir, "greet.harness"), HARNESS);
  const manifest = {
    schemaVersion: "harness-compare.v2",
    harness: "./greet.harness",
    tasks: [
      {
        id: "greet",
        fixture: "./fixture",
        prompt: "./prompt.md",
        expectedFiles: ["greeting.txt"],
        graders: [
          { kind: "scope", mode: "subset" },
          { kind: "command", id: "check", argv: ["node", "check.js"], timeoutMs: 20000 },
        ],
      },
    ],
    variants: [
      { id: "clean", composition: "plain" },
      { id: "curious", composition: "scoped" },
    ],
    baseline: "clean",
    runtime: {
      host: "codex",
      model: MODEL,
      tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
      allowedTools: [],
      disallowedTools: ["WebFetch", "WebSearch"],
      permissionMode: "default",
      maxTurns: 20,
      // A safety bound only: Codex in nested sandboxes on a machine running two suites at once
      // once took more than 45 s for this trial.
      timeoutMs: 150_000,
      network: "deny",
      validationCommands: [["node", "check.js"]],
    },
    trials: { count: 1, seed: 7, order: "sequential" },
    verdict: { policy: "heuristic-v1" },
    concurrency: 1,
  };
  const path = join(dir, "experiment.json");
  await writeFile(path, `${JSON.stringify(manifest, null, 2)}\n`);
  return path;
}

const readJson = async (path: string) => JSON.parse(await readFile(path, "utf8")) as unknown;

describeReal("the real Codex client against the loopback Responses server", () => {
  it("runs whole trials through runExperiment: files written by Codex, graded, every action audited, a violation fails its trial", async () => {
    const dir = join(base, "experiment");
    const manifestPath = await writeExperiment(dir);
    const loaded = await loadManifest(manifestPath, { loadCatalog: loadHarnessCatalog });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));

    const clean = await startResponsesLoopback({ apiKey: LOOPBACK_KEY, script: script() });
    const curious = await startResponsesLoopback({
      apiKey: LOOPBACK_KEY,
      // Not in the validation vocabulary; the sandbox has no network, and the port is closed.
      script: script([{ output: [execCommand("curl -sS http://127.0.0.1:9/")] }]),
    });
    const executorFor = (loop: ResponsesLoopback) =>
      new CodexExecutor({
        env: { PATH: process.env.PATH ?? "" },
        endpoint: { baseUrl: loop.url, apiKey: LOOPBACK_KEY },
      });
    const executors = { clean: executorFor(clean), curious: executorFor(curious) };
    const byVariant: Executor = {
      host: "codex",
      run: (input) => executors[input.variant as keyof typeof executors].run(input),
    };
    const outDir = join(dir, "out");
    try {
      await runExperiment(loaded.experiment, {
        outDir,
        manifestDocument: loaded.manifest,
        manifestHash: loaded.manifestHash,
        executorFor: () => byVariant,
        tempParent: base,
        env: { OPENAI_API_KEY: LOOPBACK_KEY },
      });
    } finally {
      await clean.close();
      await curious.close();
    }

    const trialDir = (variant: string) => join(outDir, variant, "greet", "trial-001");
    for (const variant of ["clean", "curious"]) {
      const receipt = runtimeReceiptSchema.parse(
        await readJson(join(trialDir(variant), "runtime-receipt.json")),
      );
      // The status first: when a trial broke, its error says why, where the fields below would
      // only say that something is missing. (The curious one ends agent_error: its violation.)
      expect(receipt.status, `${variant}: ${receipt.status}: ${receipt.error ?? "no error"}`).toBe(
        variant === "clean" ? "completed" : "agent_error",
      );
      expect(receipt.executor).toMatchObject({
        host: "codex",
        package: "@openai/codex-sdk",
        packageVersion: expect.stringMatching(/^\d+\.\d+\.\d+/),
        agentVersion: expect.stringMatching(/^\d+\.\d+\.\d+/),
      });
      expect(receipt.sessionId).toMatch(/\S/);
      expect(receipt.model).toEqual({ requested: MODEL, effective: [MODEL] });
      expect(receipt.tokens?.uncachedInput).toBeGreaterThan(0);
      expect(receipt.tokens?.cacheRead).toBeGreaterThan(0);
      expect(receipt.tokens?.output).toBeGreaterThan(0);
      expect(receipt.tokens?.reasoning).toBeGreaterThan(0);
      expect(receipt.costUsd).toBeNull();
      expect(receipt.finalText).toBe("greeting.txt now says hello world.");
      expect(receipt.settings.envVarNames).not.toContain("OPENAI_API_KEY");

      const metrics = trialMetricsSchema.parse(
        await readJson(join(trialDir(variant), "metrics.json")),
      );
      expect(metrics.changedFiles).toEqual(["greeting.txt"]);
      expect(metrics.graders.every((g) => g.passed)).toBe(true);
      const patch = await readFile(join(trialDir(variant), "patch.diff"), "utf8");
      expect(patch).toContain("+hello world");

      const trace = (await readFile(join(trialDir(variant), "trace.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string });
      expect(trace.map((e) => e.type)).toContain("turn.completed");
      for (const file of ["runtime-receipt.json", "trace.jsonl", "permission-decisions.json"]) {
        expect(await readFile(join(trialDir(variant), file), "utf8")).not.toContain(LOOPBACK_KEY);
      }
    }

    const cleanReceipt = runtimeReceiptSchema.parse(
      await readJson(join(trialDir("clean"), "runtime-receipt.json")),
    );
    expect(cleanReceipt).toMatchObject({ status: "completed", turns: 4, toolCalls: 3 });
    const cleanDecisions = permissionDecisionsSchema.parse(
      await readJson(join(trialDir("clean"), "permission-decisions.json")),
    ).decisions;
    expect(cleanDecisions.map((d) => [d.tool, d.decision, d.inputSummary])).toEqual([
      ["Read", "allow", 'file_path="greeting.txt"'],
      ["Edit", "allow", expect.stringContaining("greeting.txt")],
      ["Bash", "allow", 'command="node check.js"'],
    ]);
    const cleanMetrics = trialMetricsSchema.parse(
      await readJson(join(trialDir("clean"), "metrics.json")),
    );
    expect(cleanMetrics).toMatchObject({ outcome: "passed", turns: 4, permissionDenials: 0 });

    const curiousReceipt = runtimeReceiptSchema.parse(
      await readJson(join(trialDir("curious"), "runtime-receipt.json")),
    );
    expect(curiousReceipt).toMatchObject({ status: "agent_error", turns: 5, toolCalls: 4 });
    expect(curiousReceipt.error).toMatch(/^policy violation: 1 action/);
    expect(curiousReceipt.permissionDenials).toEqual([
      expect.objectContaining({
        tool: "Bash",
        decision: "deny",
        rule: "command-not-allowed",
        inputSummary: 'command="curl -sS http://127.0.0.1:9/"',
      }),
    ]);
    const curiousMetrics = trialMetricsSchema.parse(
      await readJson(join(trialDir("curious"), "metrics.json")),
    );
    // The files grade well, but the run broke the policy: the trial fails.
    expect(curiousMetrics).toMatchObject({
      outcome: "failed",
      receiptStatus: "agent_error",
      gradePassed: true,
      permissionDenials: 1,
    });
    expect(curiousMetrics.explanation).toContain("policy violation");
    const curiousTrace = (await readFile(join(trialDir("curious"), "trace.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; count?: number });
    expect(curiousTrace.find((e) => e.type === "policy_violations")?.count).toBe(1);
  }, 400_000);

  async function soloRun(executor: CodexExecutor) {
    const fixture = join(base, `solo-${Math.random().toString(36).slice(2)}`);
    await mkdir(fixture, { recursive: true });
    await writeFile(join(fixture, "greeting.txt"), "hello\n");
    const workspace = await createTrialWorkspace(fixture, { tempParent: base });
    try {
      const policy = createToolPolicy({
        trialRoot: workspace.root,
        allowedWrites: ["greeting.txt"],
        allowedCommands: [],
        tools: ["Read", "Edit", "Bash"],
      });
      return await executor.run({
        prompt: "Say hello.",
        preamble: "",
        cwd: workspace.root,
        policy,
        timeoutMs: 150_000,
        scratchDir: workspace.scratchDir,
        sandbox: await testSandbox(),
        runtime: {
          model: MODEL,
          tools: ["Read", "Edit", "Bash"],
          allowedTools: [],
          disallowedTools: [],
        },
        trialIndex: 1,
        variant: "v",
        task: "t",
      });
    } finally {
      await workspace.cleanup();
    }
  }

  it("reports auth_missing from the pre-flight when there are no credentials and no endpoint, without starting a thread", async () => {
    const receipt = await soloRun(new CodexExecutor({ env: { PATH: process.env.PATH ?? "" } }));
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
    expect(receipt.error).toContain("Not logged in");
    expect(receipt.trace.map((e) => e.type)).not.toContain("thread.started");
    expect(receipt.executor.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
  }, 200_000);

  it("reports network_unreachable after the first reconnect error when the endpoint's port is closed", async () => {
    // Find a free port, then close it again so nothing listens there.
    const probe = await startResponsesLoopback({ script: [] });
    const closedUrl = probe.url;
    await probe.close();
    const receipt = await soloRun(
      new CodexExecutor({
        env: { PATH: process.env.PATH ?? "" },
        endpoint: { baseUrl: closedUrl, apiKey: LOOPBACK_KEY },
      }),
    );
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "network_unreachable" });
    const reconnects = receipt.trace.filter(
      (e) => e.type === "error" && String(e.message).startsWith("Reconnecting"),
    );
    expect(reconnects).toHaveLength(1);
  }, 200_000);

  it("reports auth_missing when the endpoint refuses the key with 401", async () => {
    const loop = await startResponsesLoopback({ apiKey: LOOPBACK_KEY, script: script() });
    try {
      const receipt = await soloRun(
        new CodexExecutor({
          env: { PATH: process.env.PATH ?? "" },
          endpoint: { baseUrl: loop.url, apiKey: "some-other-key-1234" },
        }),
      );
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
      expect(receipt.error).toContain("401");
      expect(loop.requests.every((r) => r.status === 401 && r.credential === "bearer")).toBe(true);
    } finally {
      await loop.close();
    }
  }, 200_000);
});
