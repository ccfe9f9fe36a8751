// The real Claude Code client (the Agent SDK's bundled native binary) against the loopback
// Anthropic server: whole trials through the harness, offline, with a fake key. Nothing leaves
// 127.0.0.1: every run's endpoint is the loopback server or a closed local port, and the run
// without credentials fails before any request.
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
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
import {
  permissionDecisionsSchema,
  type RuntimeReceipt,
  runtimeReceiptSchema,
} from "../../src/exec/receipt.js";
import type { ExecutorRunInput } from "../../src/exec/types.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { attackModule, REPORT_MARK } from "../fixtures/attacks.js";
import {
  claudeCodeBinary,
  claudeCodeRuntime,
  IN_CI,
  realClientAvailable,
} from "../support/anthropic-real-clients.js";
import { pidsWorkingIn, testSandbox } from "../support/sandbox.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "fix-the-bug");
const FAKE_KEY = "sk-ant-loopback-fake-key-0123456789";
const binary = claudeCodeBinary();
const run = realClientAvailable("the Claude Code native binary", binary !== null);

/** A model that reads, fixes, runs the tests, tries the network (denied) and reports. */
const FIX_SCRIPT: AnthropicScriptTurn[] = [
  {
    content: [
      { type: "text", text: "Let me read the parser first." },
      { type: "tool_use", name: "Read", input: { file_path: "src/index.js" } },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "Edit",
        input: {
          file_path: "src/index.js",
          old_string: "const compact = text.trim();",
          new_string: 'const compact = text.replace(/\\s+/g, "");',
        },
      },
    ],
  },
  {
    content: [
      { type: "tool_use", name: "Bash", input: { command: "npm test", description: "Run tests" } },
    ],
  },
  {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: { command: "curl http://example.com", description: "Check the docs" },
      },
    ],
  },
  {
    content: [
      {
        type: "text",
        text: "parseDuration now ignores whitespace between parts; npm test passes.",
      },
    ],
  },
];

let base: string;
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "hl-claude-real-")));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

let trialCounter = 0;
async function directTrial(
  overrides: Partial<ExecutorRunInput["runtime"]> = {},
  timeoutMs = 30_000,
) {
  trialCounter += 1;
  const root = join(base, `direct-${trialCounter}`, "root");
  const scratchDir = join(base, `direct-${trialCounter}`, "scratch");
  await mkdir(root, { recursive: true });
  await mkdir(scratchDir);
  await writeFile(join(root, "notes.txt"), "hello\n");
  const runtime = {
    model: "claude-sonnet-4-5",
    tools: ["Read", "Edit", "Bash"],
    allowedTools: [],
    disallowedTools: ["WebFetch", "WebSearch"],
    permissionMode: "default",
    maxTurns: 6,
    ...overrides,
  };
  const policy = createToolPolicy({
    trialRoot: root,
    allowedWrites: [],
    allowedCommands: [],
    tools: runtime.tools,
  });
  const input: ExecutorRunInput = {
    prompt: "Read notes.txt.",
    preamble: "",
    cwd: root,
    policy,
    timeoutMs,
    scratchDir,
    sandbox: await testSandbox(),
    runtime,
    trialIndex: 1,
    variant: "v",
    task: "t",
  };
  return { input, policy };
}

function claude(env: Record<string, string>) {
  // Only the variables given here reach Claude Code (plus PATH): never the developer's own.
  return new ClaudeCodeExecutor({ env: { PATH: process.env.PATH ?? "", ...env }, maxRetries: 0 });
}

describe.skipIf(!run)("the real Claude Code client through the harness (offline)", () => {
  it.runIf(IN_CI)("has the Claude Code native binary installed in CI", () => {
    expect(binary).not.toBeNull();
  });

  it("contains code the agent wrote and ran through its own allowed npm test: nothing written, read or reached outside, Claude Code's process out of its reach, and the key never inside", async () => {
    const dir = join(base, "attack");
    const home = join(dir, "home");
    const sentinel = join(dir, "sentinel");
    await mkdir(join(home, ".ssh"), { recursive: true });
    await writeFile(join(home, ".ssh", "id_rsa"), "canary-ssh-key\n");
    await mkdir(sentinel, { recursive: true });
    const root = join(dir, "root");
    const scratchDir = join(dir, "scratch");
    await cp(join(EXAMPLE, "fixture"), root, { recursive: true });
    await mkdir(scratchDir);
    const listener = createServer((socket) => {
      received += 1;
      socket.destroy();
    });
    let received = 0;
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const address = listener.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const token = `claude${Date.now().toString(36)}`;
    const attack = attackModule({
      token,
      home,
      fixture: join(EXAMPLE, "fixture"),
      out: join(dir, "out"),
      sentinel,
      dist: join(import.meta.dirname, "..", "..", "dist"),
      port,
      secretNames: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
      fifo: false,
    })
      // The fixture's tests import these: without them the module would never be evaluated.
      .concat('export const parseDuration = () => 0;\nexport const formatDuration = () => "";\n');
    const server = await startAnthropicLoopback({
      apiKey: FAKE_KEY,
      script: [
        // Claude Code writes over a file only after reading it.
        { content: [{ type: "tool_use", name: "Read", input: { file_path: "src/index.js" } }] },
        {
          content: [
            {
              type: "tool_use",
              name: "Write",
              input: { file_path: "src/index.js", content: attack },
            },
          ],
        },
        {
          content: [
            {
              type: "tool_use",
              name: "Bash",
              input: { command: "npm test", description: "Run tests" },
            },
          ],
        },
        { content: [{ type: "text", text: "done" }] },
      ],
    });
    try {
      const policy = createToolPolicy({
        trialRoot: root,
        allowedWrites: ["src/index.js"],
        allowedCommands: [["npm", "test"]],
        tools: ["Read", "Write", "Bash"],
      });
      const receipt = await claude({
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: FAKE_KEY,
      }).run({
        prompt: "Fix the parser.",
        preamble: "",
        cwd: root,
        policy,
        timeoutMs: 60_000,
        scratchDir,
        sandbox: await testSandbox(),
        runtime: {
          model: "claude-sonnet-4-5",
          tools: ["Read", "Write", "Bash"],
          allowedTools: [],
          disallowedTools: ["WebFetch", "WebSearch"],
          permissionMode: "default",
          maxTurns: 6,
        },
        trialIndex: 1,
        variant: "v",
        task: "t",
      });
      expect(receipt.status).toBe("completed");
      // Claude Code's sandbox, and every process in it, is gone by the time the executor returns:
      // nothing of the session may touch the trial while it is captured.
      expect(pidsWorkingIn([root, await realpath(root)])).toEqual([]);
      // What `npm test` printed came back to the model as the Bash tool's result.
      const output = server.requests.flatMap((r) => r.toolResults.map((t) => t.text)).join("\n");
      const line = output.split("\n").find((l) => l.includes(REPORT_MARK));
      expect(line, output).toBeDefined();
      const report = JSON.parse(
        line!.slice(line!.indexOf(REPORT_MARK) + REPORT_MARK.length),
      ) as Record<string, { ok: boolean; value?: unknown; code?: string }>;
      for (const attempt of [
        "write the user's home",
        "read the user's SSH key",
        "write the fixture",
        "write beside the trials",
        "write the harness's build",
        "write the system",
        "rewrite .git/config",
        "remount the system writable",
        "connect to the test's listener",
        "resolve and reach the internet",
        "take over the host's process",
      ])
        expect({ attempt, ok: report[attempt]?.ok }).toEqual({ attempt, ok: false });
      // The command ran beside Claude Code, not inside its sandbox: no process of Claude Code's
      // was in reach, so none of its environment either, and its own report stands.
      const scan = report["read every process's environment"]?.value as
        | { found: string[] }
        | undefined;
      expect(scan?.found).toEqual([]);
      expect(receipt.finalText).toBe("done");
      expect(receipt.trace.find((e) => e.type === "harness.contained")).toMatchObject({
        commandsInOwnSandbox: true,
      });
      // Yet every model request carried the real key: the proxy added it outside.
      expect(server.requests.every((r) => r.credential === "x-api-key")).toBe(true);
      expect(received).toBe(0);
      expect(await readdir(sentinel)).toEqual([]);
      expect(await readdir(join(home, ".ssh"))).toEqual(["id_rsa"]);
      expect(JSON.stringify(receipt)).not.toContain(FAKE_KEY);
    } finally {
      await server.close();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it("runs a whole comparison: real tool calls, every call decided by the policy, the denial recorded, the fix graded", async () => {
    const dir = join(base, "experiment");
    await mkdir(dir);
    await cp(join(EXAMPLE, "fixture"), join(dir, "fixture"), { recursive: true });
    await cp(join(EXAMPLE, "prompt.md"), join(dir, "prompt.md"));
    await cp(join(EXAMPLE, "fix-the-bug.harness"), join(dir, "fix-the-bug.harness"));
    const manifest = {
      schemaVersion: "harness-compare.v2",
      harness: "./fix-the-bug.harness",
      tasks: [
        {
          id: "fix-the-bug",
          fixture: "./fixture",
          prompt: "./prompt.md",
          expectedFiles: ["src/index.js"],
          graders: [
            { kind: "scope", mode: "subset" },
            { kind: "command", id: "npm-test", argv: ["npm", "test"], timeoutMs: 30000 },
          ],
        },
      ],
      variants: [
        { id: "baseline", composition: "baseline-claude" },
        { id: "verified", composition: "verified-claude" },
      ],
      baseline: "baseline",
      runtime: claudeCodeRuntime({
        timeoutMs: 50000,
        validationCommands: [
          ["npm", "test"],
          ["git", "status", "--short"],
        ],
      }),
      trials: { count: 1, seed: 7, order: "sequential" },
      verdict: { policy: "heuristic-v1" },
      concurrency: 1,
    };
    await writeFile(join(dir, "experiment.json"), JSON.stringify(manifest, null, 2));
    const loaded = await loadManifest(join(dir, "experiment.json"), {
      loadCatalog: loadHarnessCatalog,
    });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const tempParent = join(base, "trials");
    await mkdir(tempParent);
    const server: AnthropicLoopback = await startAnthropicLoopback({
      script: FIX_SCRIPT,
      apiKey: FAKE_KEY,
    });
    try {
      const outDir = join(base, "out");
      const { verdict } = await runExperiment(loaded.experiment, {
        outDir,
        manifestDocument: loaded.manifest,
        manifestHash: loaded.manifestHash,
        executorFor: () => claude({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: FAKE_KEY }),
        tempParent,
        env: { ...process.env, ANTHROPIC_API_KEY: FAKE_KEY },
      });

      expect(verdict.trials.map((t) => [t.variant, t.outcome, t.score])).toEqual([
        ["baseline", "passed", 100],
        ["verified", "passed", 100],
      ]);
      for (const trial of verdict.trials) {
        const dirOf = join(outDir, trial.artifactDir);
        const read = (name: string) => readFile(join(dirOf, name), "utf8");

        const receipt: RuntimeReceipt = runtimeReceiptSchema.parse(
          JSON.parse(await read("runtime-receipt.json")),
        );
        expect(receipt).toMatchObject({
          executor: { host: "claude-code", kind: "claude-agent-sdk" },
          status: "completed",
          infraReason: null,
          turns: 5,
          toolCalls: 4,
          finalText: "parseDuration now ignores whitespace between parts; npm test passes.",
          model: { requested: "claude-sonnet-4-5", effective: ["claude-sonnet-4-5"] },
        });
        expect(receipt.executor.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
        expect(receipt.sessionId).not.toBeNull();
        expect(receipt.tokens?.uncachedInput).toBeGreaterThan(0);
        expect(receipt.tokens?.output).toBeGreaterThan(0);
        expect(receipt.tokens?.cacheRead).toBeGreaterThan(0);
        expect(receipt.permissionDenials).toMatchObject([
          { tool: "Bash", decision: "deny", rule: "command-not-allowed" },
        ]);

        const decisions = permissionDecisionsSchema.parse(
          JSON.parse(await read("permission-decisions.json")),
        ).decisions;
        // The in-cwd Read is decided and recorded too (Claude Code would not ask canUseTool),
        // and no call is recorded twice.
        expect(decisions.map((d) => [d.seq, d.tool, d.decision, d.inputSummary])).toEqual([
          [1, "Read", "allow", 'file_path="<trial-root>/src/index.js"'],
          [2, "Edit", "allow", expect.stringContaining("<trial-root>/src/index.js")],
          [3, "Bash", "allow", 'command="npm test"'],
          [4, "Bash", "deny", 'command="curl http://example.com"'],
        ]);

        const trace = (await read("trace.jsonl"))
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        // Claude Code ran in the trial's sandbox, its credential kept outside.
        expect(trace[0]).toMatchObject({
          type: "harness.contained",
          sandbox: expect.stringMatching(/^bubblewrap /),
          viaEndpointProxy: true,
        });
        expect(trace[1]).toMatchObject({ type: "system", subtype: "init" });
        expect(trace.at(-1)).toMatchObject({
          type: "result",
          subtype: "success",
          permission_denials: [
            { tool_name: "Bash", tool_input: { command: "curl http://example.com" } },
          ],
        });
        expect(trace).toContainEqual(
          expect.objectContaining({ type: "harness_permission", tool: "Bash", decision: "deny" }),
        );

        expect(await read("patch.diff")).toContain('+  const compact = text.replace(/\\s+/g, "");');
        const metrics = JSON.parse(await read("metrics.json"));
        expect(metrics).toMatchObject({
          changedFiles: ["src/index.js"],
          turns: 5,
          permissionDenials: 1,
        });
        const validation = JSON.parse(await read("validation.json"));
        expect(
          validation.grades.map((g: { grader: string; passed: boolean }) => [g.grader, g.passed]),
        ).toEqual([
          ["scope", true],
          ["npm-test", true],
        ]);
      }

      // The model saw the harness's refusal as the tool result of the denied call.
      const requests = server.requests;
      expect(requests.every((r) => r.method === "POST" && r.path === "/v1/messages")).toBe(true);
      expect(requests.every((r) => r.status === 200 && r.credential === "x-api-key")).toBe(true);
      expect(requests.flatMap((r) => r.toolResults.map((t) => t.text))).toContainEqual(
        expect.stringContaining("Denied by the harness permission policy (command-not-allowed)"),
      );

      for (const file of await filesUnder(outDir)) {
        const text = await readFile(file, "utf8");
        expect(text, file).not.toContain(FAKE_KEY);
        expect(text, file).not.toContain(tempParent);
      }
    } finally {
      await server.close();
    }
  });

  // Linux only: on macOS Claude Code could find a developer's keychain login and go online.
  it.runIf(process.platform === "linux")(
    "reports no credentials and no endpoint as infra_error/auth_missing",
    async () => {
      const { input } = await directTrial();
      const receipt = await claude({}).run(input);
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
      expect(receipt.error).toMatch(/log/i);
    },
  );

  it("reports a closed local port as infra_error/network_unreachable", async () => {
    const port = await closedPort();
    const { input } = await directTrial();
    const receipt = await claude({
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
      ANTHROPIC_API_KEY: FAKE_KEY,
    }).run(input);
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "network_unreachable" });
    // Claude Code names the base URL it was given, the harness's proxy; the receipt says which
    // endpoint really failed and why.
    expect(receipt.error).toContain(
      `harnesslab forwards the host's model requests to http://127.0.0.1:${port}`,
    );
    expect(receipt.error).toContain("ECONNREFUSED");
  });

  it.each([
    {
      name: "a rejected key",
      error: undefined,
      key: "wrong-key-0123456789",
      reason: "auth_missing",
    },
    {
      name: "a rate limit",
      error: { status: 429, type: "rate_limit_error", message: "Too many requests" },
      key: FAKE_KEY,
      reason: "rate_limited",
    },
    {
      name: "an empty credit balance",
      error: {
        status: 400,
        type: "invalid_request_error",
        message: "Your credit balance is too low to access the Anthropic API.",
      },
      key: FAKE_KEY,
      reason: "quota_exhausted",
    },
  ])("classifies $name answered by the endpoint as $reason", async ({ error, key, reason }) => {
    const server = await startAnthropicLoopback({
      apiKey: FAKE_KEY,
      script: error ? [{ error }] : [{ content: [{ type: "text", text: "hi" }] }],
    });
    try {
      const { input } = await directTrial();
      const receipt = await claude({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: key }).run(
        input,
      );
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: reason });
      expect(JSON.stringify(receipt)).not.toContain(key);
    } finally {
      await server.close();
    }
  });

  it("reports the turn limit as limit_reached", async () => {
    const server = await startAnthropicLoopback({
      script: [
        { content: [{ type: "tool_use", name: "Read", input: { file_path: "notes.txt" } }] },
        { content: [{ type: "text", text: "never reached" }] },
      ],
    });
    try {
      const { input, policy } = await directTrial({ maxTurns: 1 });
      const receipt = await claude({
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: FAKE_KEY,
      }).run(input);
      expect(receipt).toMatchObject({ status: "limit_reached", infraReason: null });
      expect(policy.decisions().map((d) => d.tool)).toEqual(["Read"]);
    } finally {
      await server.close();
    }
  });

  it("aborts a run that outlives its budget and reports timeout", async () => {
    const server = await startAnthropicLoopback({
      script: [{ content: [{ type: "text", text: "too late" }], delayMs: 60_000 }],
    });
    try {
      // Long enough for Claude Code to start on a loaded machine; the reply takes far longer.
      const { input } = await directTrial({}, 10_000);
      const receipt = await claude({
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: FAKE_KEY,
      }).run(input);
      expect(receipt).toMatchObject({ status: "timeout", infraReason: null });
      // A run that reached the model has a session, whatever the machine's speed.
      if (server.requests.some((request) => request.kind === "turn"))
        expect(receipt.sessionId).not.toBeNull();
    } finally {
      await server.close();
    }
  });
});
