// CodexExecutor against a fake SDK module at its injectable seam. The fake emits events of the
// SDK's own types, writes a session rollout the way the CLI does, and a small shell script plays
// the Codex binary for the pre-flight (`--version`, `login status`).
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  CodexOptions,
  ThreadEvent,
  ThreadItem,
  ThreadOptions,
  TurnOptions,
  Usage,
} from "@openai/codex-sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CodexExecutor, type CodexSdkModule } from "../../src/exec/codex/index.js";
import {
  createExecutor,
  type ExecutorRunInput,
  type RuntimeReceipt,
  runtimeReceiptSchema,
} from "../../src/exec/index.js";
import { SdkMissingError } from "../../src/exec/sdk/common.js";
import { createToolPolicy, type ToolPolicy } from "../../src/policy/index.js";
import { createUnsandboxed } from "../../src/sandbox/index.js";
import { testSandbox } from "../support/sandbox.js";

const testSandboxInstance = await testSandbox();

// The real module fits the seam the executor declares (checked by the compiler).
type RealModuleFitsTheSeam = typeof import("@openai/codex-sdk") extends CodexSdkModule
  ? true
  : never;
const fits: RealModuleFitsTheSeam = true;

const TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"];
const THREAD = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001";
const SECRET = "sk-test-0123456789abcdefSECRET";

let base: string;
let root: string;
let scratch: string;
let policy: ToolPolicy;
let loggedOutBinary: string;
let loggedInBinary: string;

async function script(name: string, body: string): Promise<string> {
  const path = join(base, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-codex-fake-"));
  root = join(base, "trial");
  scratch = join(base, "scratch");
  await mkdir(join(root, "src"), { recursive: true });
  await mkdir(scratch);
  await writeFile(join(root, "src", "app.js"), "export const x = 1;\n");
  policy = createToolPolicy({
    trialRoot: root,
    allowedWrites: ["src/app.js"],
    allowedCommands: [["npm", "test"]],
    tools: TOOLS,
  });
  // Logged in when an auth.json was put in the isolated CODEX_HOME (like `codex login status`).
  const login = `
case "$1" in
  --version) echo "codex-cli 9.8.7" ;;
  login) env | sort > "$CODEX_HOME/preflight.env"
    if [ -f "$CODEX_HOME/auth.json" ] || [ -n "$FAKE_LOGGED_IN" ]; then echo "Logged in using ChatGPT"; exit 0; fi
    echo "WARNING: proceeding, even though we could not create PATH aliases" >&2
    echo "Not logged in" >&2; exit 1 ;;
esac`;
  loggedOutBinary = await script("codex", login);
  loggedInBinary = await script("codex-in", `FAKE_LOGGED_IN=1\n${login}`);
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

const usage = (over: Partial<Usage> = {}): Usage => ({
  input_tokens: 1000,
  cached_input_tokens: 200,
  cache_write_input_tokens: 50,
  output_tokens: 300,
  reasoning_output_tokens: 40,
  ...over,
});

const item = (event: "item.started" | "item.completed", it: ThreadItem): ThreadEvent => ({
  type: event,
  item: it,
});

/** Rollout lines as the CLI writes them (only the fields the executor reads, plus some noise). */
const rollout = {
  meta: () =>
    JSON.stringify({ type: "session_meta", payload: { id: THREAD, cli_version: "9.8.7" } }),
  context: (model: string) =>
    JSON.stringify({ type: "turn_context", payload: { model, approval_policy: "never" } }),
  response: () =>
    JSON.stringify({ type: "token_usage_record", payload: { usage: { input_tokens: 1 } } }),
  exec: (callId: string, args: Record<string, unknown>) =>
    JSON.stringify({
      type: "response_item",
      payload: {
        type: "function_call",
        name: "exec_command",
        call_id: callId,
        arguments: JSON.stringify(args),
      },
    }),
  fn: (callId: string, name: string, args: Record<string, unknown>) =>
    JSON.stringify({
      type: "response_item",
      payload: { type: "function_call", name, call_id: callId, arguments: JSON.stringify(args) },
    }),
  patch: (callId: string, input: string) =>
    JSON.stringify({
      type: "response_item",
      payload: { type: "custom_tool_call", name: "apply_patch", call_id: callId, input },
    }),
  ranCommand: (callId: string, script: string, cwd = root) =>
    JSON.stringify({
      type: "event_msg",
      payload: {
        type: "item_completed",
        item: {
          type: "CommandExecution",
          id: callId,
          command: ["/bin/bash", "-lc", script],
          cwd: `file://${cwd}`,
        },
      },
    }),
  changedFiles: (callId: string, changes: Record<string, { type: string }>) =>
    JSON.stringify({
      type: "event_msg",
      payload: { type: "item_completed", item: { type: "FileChange", id: callId, changes } },
    }),
  done: (ms: number) =>
    JSON.stringify({ type: "event_msg", payload: { type: "task_complete", duration_ms: ms } }),
};

interface Scenario {
  events?: ThreadEvent[];
  /** Written to $CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl before the events end. */
  rollout?: string[];
  /** After the events: wait for the abort signal (then throw like the SDK), or never end. */
  after?: "end" | "hang" | "stuck";
  throwAfter?: Error;
  constructorThrows?: Error;
  /** Called when the stream starts. */
  onStart?: () => void;
  onStuck?: () => void;
}

interface FakeCalls {
  options?: CodexOptions;
  thread?: ThreadOptions;
  input?: string;
  signal?: AbortSignal;
  constructed: number;
}

function fakeSdk(scenario: Scenario): { module: CodexSdkModule; calls: FakeCalls } {
  const calls: FakeCalls = { constructed: 0 };
  class FakeThread {
    async runStreamed(input: string, turnOptions: TurnOptions = {}) {
      calls.input = input;
      if (turnOptions.signal) calls.signal = turnOptions.signal;
      scenario.onStart?.();
      const signal = turnOptions.signal;
      const home = calls.options?.env?.CODEX_HOME ?? "";
      async function* events(): AsyncGenerator<ThreadEvent> {
        if (scenario.rollout) {
          const dir = join(home, "sessions", "2026", "01", "02");
          await mkdir(dir, { recursive: true });
          await writeFile(
            join(dir, `rollout-2026-01-02T03-04-05-${THREAD}.jsonl`),
            `${scenario.rollout.join("\n")}\n`,
          );
        }
        for (const event of scenario.events ?? []) {
          if (signal?.aborted) throw Object.assign(new Error("aborted"), { name: "AbortError" });
          yield event;
          await new Promise((r) => setImmediate(r));
        }
        if (scenario.after === "hang") {
          await new Promise<void>((resolve) => {
            if (signal?.aborted) resolve();
            signal?.addEventListener("abort", () => resolve(), { once: true });
          });
          throw Object.assign(new Error("The operation was aborted"), { name: "AbortError" });
        }
        if (scenario.after === "stuck") {
          // Abort only once the stream is stuck, so the test does not race the events.
          scenario.onStuck?.();
          await new Promise(() => {});
        }
        if (scenario.throwAfter) throw scenario.throwAfter;
      }
      return { events: events() };
    }
  }
  class FakeCodex {
    constructor(options: CodexOptions = {}) {
      calls.constructed += 1;
      calls.options = options;
      if (scenario.constructorThrows) throw scenario.constructorThrows;
    }
    startThread(options: ThreadOptions = {}) {
      calls.thread = options;
      return new FakeThread();
    }
  }
  return { module: { Codex: FakeCodex }, calls };
}

function runInput(overrides: Partial<ExecutorRunInput> = {}): ExecutorRunInput {
  return {
    prompt: "Fix src/app.js.",
    preamble: "",
    cwd: root,
    policy,
    timeoutMs: 20_000,
    scratchDir: scratch,
    // The option mapping under --unsafe-no-sandbox; the contained mapping has tests of its own.
    sandbox: createUnsandboxed(),
    runtime: {
      model: "gpt-5.5",
      tools: TOOLS,
      allowedTools: [],
      disallowedTools: ["WebSearch"],
      permissionMode: "default",
      maxTurns: 30,
    },
    trialIndex: 2,
    variant: "candidate",
    task: "fix",
    ...overrides,
  };
}

const started: ThreadEvent[] = [
  { type: "thread.started", thread_id: THREAD },
  { type: "turn.started" },
];
const finished = (text = "Done.", over: Partial<Usage> = {}): ThreadEvent[] => [
  item("item.completed", { id: "item_9", type: "agent_message", text }),
  { type: "turn.completed", usage: usage(over) },
];

async function run(
  scenario: Scenario,
  options: ConstructorParameters<typeof CodexExecutor>[0] = {},
  input: Partial<ExecutorRunInput> = {},
): Promise<{ receipt: RuntimeReceipt; calls: FakeCalls }> {
  const sdk = fakeSdk(scenario);
  const executor = new CodexExecutor({
    sdk: sdk.module,
    pathToExecutable: loggedOutBinary,
    env: { PATH: process.env.PATH ?? "", OPENAI_API_KEY: SECRET },
    ...options,
  });
  const receipt = await executor.run(runInput(input));
  runtimeReceiptSchema.parse(receipt);
  return { receipt, calls: sdk.calls };
}

const traceTypes = (receipt: RuntimeReceipt) => receipt.trace.map((e) => e.type);

describe("CodexExecutor option mapping", () => {
  it("passes the exact client and thread options, an allowlisted environment and an isolated CODEX_HOME", async () => {
    expect(fits).toBe(true);
    const { calls } = await run(
      { events: [...started, ...finished()], rollout: [rollout.meta()] },
      {
        env: {
          PATH: "/usr/bin:/bin",
          HOME: "/home/someone",
          OPENAI_API_KEY: SECRET,
          AWS_SECRET_ACCESS_KEY: "aws-secret-value-123",
          CODEX_HOME: "/home/someone/.codex",
        },
      },
    );
    const home = join(scratch, "home");
    expect(calls.options).toEqual({
      codexPathOverride: loggedOutBinary,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: home,
        CODEX_HOME: join(home, ".codex"),
        OPENAI_API_KEY: SECRET,
        CODEX_API_KEY: SECRET,
      },
    });
    expect(calls.thread).toEqual({
      model: "gpt-5.5",
      sandboxMode: "workspace-write",
      workingDirectory: root,
      skipGitRepoCheck: true,
      approvalPolicy: "never",
      networkAccessEnabled: false,
      webSearchMode: "disabled",
    });
    expect(calls.input).toBe("Fix src/app.js.");
    const config = await readFile(join(home, ".codex", "config.toml"), "utf8");
    expect(config).toBe(
      [
        'model = "gpt-5.5"',
        'approval_policy = "never"',
        'sandbox_mode = "workspace-write"',
        'web_search = "disabled"',
        "project_doc_max_bytes = 0",
        "check_for_update_on_startup = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[features]",
        "plugins = false",
        "",
        "[history]",
        'persistence = "none"',
        "",
        "[skills.bundled]",
        "enabled = false",
        "",
        "[sandbox_workspace_write]",
        "network_access = false",
        "exclude_tmpdir_env_var = true",
        "exclude_slash_tmp = true",
        "",
        "[shell_environment_policy]",
        'inherit = "core"',
        "",
      ].join("\n"),
    );
    // The pre-flight ran with the same isolated environment.
    const preflightEnv = await readFile(join(home, ".codex", "preflight.env"), "utf8");
    expect(preflightEnv).toContain(`CODEX_HOME=${join(home, ".codex")}`);
    expect(preflightEnv).not.toContain("AWS_SECRET_ACCESS_KEY");
  });

  it("configures a custom Responses endpoint as its own model provider with the key in a private variable", async () => {
    const { calls, receipt } = await run(
      { events: [...started, ...finished()] },
      {
        env: { PATH: "/bin" },
        endpoint: {
          baseUrl: "http://127.0.0.1:4321/v1",
          apiKey: "endpoint-key-98765",
          maxRetries: 0,
        },
      },
    );
    expect(calls.options?.env).toEqual({
      PATH: "/bin",
      HOME: join(scratch, "home"),
      CODEX_HOME: join(scratch, "home", ".codex"),
      HARNESSLAB_CODEX_ENDPOINT_KEY: "endpoint-key-98765",
    });
    const config = await readFile(join(scratch, "home", ".codex", "config.toml"), "utf8");
    expect(config).toContain('model_provider = "harnesslab"');
    expect(config).toContain(
      [
        "[model_providers.harnesslab]",
        'name = "harnesslab endpoint"',
        'base_url = "http://127.0.0.1:4321/v1"',
        'wire_api = "responses"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        'env_key = "HARNESSLAB_CODEX_ENDPOINT_KEY"',
      ].join("\n"),
    );
    expect(receipt.settings.envVarNames).toEqual([
      "CODEX_HOME",
      "HARNESSLAB_CODEX_ENDPOINT_KEY",
      "HOME",
      "PATH",
    ]);
    expect(JSON.stringify(receipt)).not.toContain("endpoint-key-98765");
  });

  it("takes the endpoint from OPENAI_BASE_URL and its key from OPENAI_API_KEY", async () => {
    const { calls } = await run(
      { events: [...started, ...finished()] },
      {
        env: {
          PATH: "/bin",
          OPENAI_BASE_URL: "https://gateway.example/v1",
          OPENAI_API_KEY: SECRET,
        },
      },
    );
    expect(calls.options?.env?.HARNESSLAB_CODEX_ENDPOINT_KEY).toBe(SECRET);
    const config = await readFile(join(scratch, "home", ".codex", "config.toml"), "utf8");
    expect(config).toContain('base_url = "https://gateway.example/v1"');
  });

  it("contained: starts Codex through a launcher into the sandbox, with the endpoint proxy as its provider and no key", async () => {
    const { calls, receipt } = await run(
      { events: [...started, ...finished()] },
      { env: { PATH: "/bin", OPENAI_API_KEY: SECRET } },
      { sandbox: testSandboxInstance },
    );
    expect(receipt.status).toBe("completed");
    expect(calls.options?.codexPathOverride).toMatch(/codex-launch-[^/]+\/codex$/);
    expect(calls.options?.env).toMatchObject({
      HARNESSLAB_CODEX_ENDPOINT_KEY: "harnesslab-sandboxed-credential",
    });
    expect(calls.options?.env?.OPENAI_API_KEY).toBeUndefined();
    expect(JSON.stringify(calls.options)).not.toContain(SECRET);
    const config = await readFile(join(scratch, "home", ".codex", "config.toml"), "utf8");
    expect(config).toContain('base_url = "http://127.0.0.1:40117/v1"');
    // The launcher is gone with the run.
    expect(existsSync(calls.options?.codexPathOverride ?? "")).toBe(false);
  });

  it("contained: refuses a codex login alone (its tokens would sit beside the agent's code)", async () => {
    const { receipt, calls } = await run(
      { events: [...started, ...finished()] },
      { env: { PATH: "/bin" }, pathToExecutable: loggedInBinary },
      { sandbox: testSandboxInstance },
    );
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
    expect(receipt.error).toMatch(/codex login.*--unsafe-no-sandbox/);
    expect(calls.constructed).toBe(0);
  });

  it("maps permission mode plan to the read-only sandbox and leaves the model to Codex when none is set", async () => {
    const { calls } = await run(
      { events: [...started, ...finished()] },
      {},
      { runtime: { tools: TOOLS, allowedTools: [], disallowedTools: [], permissionMode: "plan" } },
    );
    expect(calls.thread).toMatchObject({ sandboxMode: "read-only" });
    expect(calls.thread).not.toHaveProperty("model");
  });

  it("puts the preamble ahead of the prompt unless the prompt already starts with it", async () => {
    const first = await run(
      { events: [...started, ...finished()] },
      {},
      { preamble: "- run the tests\n", prompt: "Fix it." },
    );
    expect(first.calls.input).toBe("- run the tests\n\n---\n\nFix it.");
    const composed = "- run the tests\n\n---\n\nFix it.";
    const second = await run(
      { events: [...started, ...finished()] },
      {},
      { preamble: "- run the tests\n", prompt: composed },
    );
    expect(second.calls.input).toBe(composed);
  });

  it("refuses settings Codex cannot honour before starting anything", async () => {
    const cases: Partial<ExecutorRunInput>[] = [
      {
        runtime: {
          tools: TOOLS,
          allowedTools: [],
          disallowedTools: [],
          permissionMode: "bypassPermissions",
        },
      },
      {
        runtime: {
          tools: TOOLS,
          allowedTools: [],
          disallowedTools: [],
          profile: "qoder-minimal-v1",
        },
      },
      { cwd: join(base, "elsewhere") },
    ];
    for (const input of cases) {
      const { receipt, calls } = await run({ events: [...started, ...finished()] }, {}, input);
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
      expect(calls.constructed).toBe(0);
    }
    const badUrl = await run(
      { events: [...started, ...finished()] },
      { endpoint: { baseUrl: "127.0.0.1:9/v1" } },
    );
    expect(badUrl.receipt).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
  });

  it("is the codex host's executor in the factory", () => {
    const executor = createExecutor("codex");
    expect(executor).toBeInstanceOf(CodexExecutor);
    expect(executor.host).toBe("codex");
  });
});

describe("CodexExecutor receipts", () => {
  it("fills the receipt from the events and the session rollout", async () => {
    const { receipt } = await run({
      events: [
        ...started,
        item("item.completed", { id: "item_0", type: "reasoning", text: "thinking" }),
        item("item.completed", { id: "item_1", type: "agent_message", text: "Looking." }),
        ...finished("All fixed."),
      ],
      rollout: [
        rollout.meta(),
        rollout.context("gpt-5.5"),
        rollout.response(),
        rollout.response(),
        "{ not json",
        rollout.done(1234),
      ],
    });
    expect(receipt).toMatchObject({
      status: "completed",
      infraReason: null,
      error: null,
      executor: {
        host: "codex",
        kind: "codex-sdk",
        package: "@openai/codex-sdk",
        agentVersion: "9.8.7",
      },
      trial: { task: "fix", variant: "candidate", index: 2 },
      model: { requested: "gpt-5.5", effective: ["gpt-5.5"] },
      sessionId: THREAD,
      finalText: "All fixed.",
      // input_tokens includes the cached ones
      tokens: { uncachedInput: 800, cacheRead: 200, cacheWrite: 50, output: 300, reasoning: 40 },
      costUsd: null,
      credits: null,
      turns: 2,
      toolCalls: 0,
      durations: { agentMs: 1234, apiMs: null },
      permissionDenials: [],
    });
    expect(receipt.executor.packageVersion).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("audits every call from the rollout, those the event stream left out included, and fails the run on a violation", async () => {
    const outside = join(base, "outside.txt");
    const { receipt } = await run({
      events: [
        ...started,
        item("item.started", {
          id: "item_0",
          type: "command_execution",
          command: "/bin/bash -lc 'npm test'",
          aggregated_output: "",
          status: "in_progress",
        }),
        item("item.completed", {
          id: "item_1",
          type: "file_change",
          changes: [{ path: join(root, "src", "app.js"), kind: "update" }],
          status: "completed",
        }),
        ...finished(),
      ],
      rollout: [
        rollout.meta(),
        rollout.exec("c1", { cmd: "npm test" }),
        rollout.ranCommand("c1", "npm test"),
        rollout.exec("c2", { cmd: "sed -n '1,40p' app.js", workdir: "src" }),
        rollout.ranCommand("c2", "sed -n '1,40p' app.js", join(root, "src")),
        rollout.patch(
          "c3",
          "*** Begin Patch\n*** Update File: src/app.js\n@@\n-1\n+2\n*** End Patch\n",
        ),
        rollout.changedFiles("c3", { [join(root, "src", "app.js")]: { type: "update" } }),
        // Refused by the CLI: no item was streamed for these two.
        rollout.patch("c4", `*** Begin Patch\n*** Add File: ${outside}\n+x\n*** End Patch\n`),
        rollout.exec("c5", { cmd: "curl http://example.com" }),
        rollout.fn("c6", "write_stdin", { session_id: 1, chars: "" }),
        rollout.fn("c7", "update_plan", { plan: [] }),
        rollout.fn("c8", "docs__search", { q: "x" }),
      ],
    });
    expect(policy.decisions().map((d) => [d.tool, d.decision, d.rule])).toEqual([
      ["Bash", "allow", "allowed"],
      ["Read", "allow", "allowed"],
      ["Edit", "allow", "allowed"],
      ["Write", "deny", "path-outside-root"],
      ["Bash", "deny", "command-not-allowed"],
      ["docs__search", "deny", "unknown-tool"],
    ]);
    expect(receipt.status).toBe("agent_error");
    expect(receipt.error).toMatch(/^policy violation: 3 action\(s\)/);
    expect(receipt.toolCalls).toBe(6);
    expect(receipt.permissionDenials.map((d) => d.tool)).toEqual(["Write", "Bash", "docs__search"]);
    const note = receipt.trace.find((e) => e.type === "policy_violations");
    expect(note).toMatchObject({ count: 3 });
    expect(receipt.trace.filter((e) => e.type === "harness.audit")).toHaveLength(6);
  });

  it("does not ask the policy about auto-approved tools and counts a disallowed tool as a violation", async () => {
    const { receipt } = await run(
      {
        events: [...started, ...finished()],
        rollout: [
          rollout.exec("c1", { cmd: "npm test" }),
          rollout.exec("c2", { cmd: "cat src/app.js" }),
        ],
      },
      {},
      { runtime: { tools: TOOLS, allowedTools: ["Bash"], disallowedTools: ["Read"] } },
    );
    expect(policy.decisions().map((d) => [d.tool, d.decision])).toEqual([["Read", "allow"]]);
    expect(receipt.status).toBe("agent_error");
    expect(receipt.error).toContain("disallowed-tool: Read is among the run's disallowed tools");
    expect(receipt.trace.find((e) => e.type === "harness.audit")).toMatchObject({
      tool: "Bash",
      decision: "auto-approved",
    });
  });

  it("audits the streamed items when the CLI wrote no rollout", async () => {
    const { receipt } = await run({
      events: [
        ...started,
        item("item.completed", {
          id: "item_0",
          type: "command_execution",
          command: '/bin/bash -lc "cat src/app.js"',
          aggregated_output: "export const x = 1;\n",
          exit_code: 0,
          status: "completed",
        }),
        item("item.completed", {
          id: "item_1",
          type: "command_execution",
          command: "/bin/bash -lc 'rm -rf src'",
          aggregated_output: "",
          exit_code: 0,
          status: "completed",
        }),
        item("item.completed", {
          id: "item_2",
          type: "file_change",
          changes: [{ path: join(root, "README.md"), kind: "add" }],
          status: "completed",
        }),
        item("item.completed", { id: "item_3", type: "web_search", query: "answers" }),
        ...finished(),
      ],
    });
    expect(policy.decisions().map((d) => [d.tool, d.decision, d.rule])).toEqual([
      ["Read", "allow", "allowed"],
      ["Bash", "deny", "command-not-allowed"],
      ["Write", "deny", "write-not-allowed"],
      ["WebSearch", "deny", "unknown-tool"],
    ]);
    expect(receipt).toMatchObject({ status: "agent_error", toolCalls: 4, turns: null });
    expect(receipt.trace.find((e) => e.type === "harness.audit_source")).toMatchObject({
      rollout: false,
      auditedFromStream: 4,
    });
  });

  it("keeps a limit or error status and adds the violation to its message", async () => {
    const { receipt } = await run({
      events: [...started, { type: "turn.failed", error: { message: "context window exceeded" } }],
      rollout: [rollout.exec("c1", { cmd: "curl x" })],
    });
    expect(receipt.status).toBe("limit_reached");
    expect(receipt.error).toBe(
      "context window exceeded; policy violation: 1 action(s) of the agent broke the trial's policy (first: Bash, command-not-allowed: `curl x` is not in the command vocabulary (allowed: npm test))",
    );
  });

  it("masks secret values and credential-shaped strings everywhere in the receipt, and survives shared and cyclic event objects", async () => {
    const shared = { note: `key ${SECRET}` };
    const cyclic: Record<string, unknown> = { type: "agent_message", id: "item_c", text: "loop" };
    cyclic.self = cyclic;
    const { receipt } = await run({
      events: [
        ...started,
        item("item.completed", {
          id: "item_0",
          type: "command_execution",
          command: "/bin/bash -lc 'npm test'",
          aggregated_output: `token=${SECRET} Authorization: Bearer abcdefghijklmnop1234`,
          exit_code: 0,
          status: "completed",
        }),
        {
          type: "item.updated",
          item: { ...shared, id: "item_s1", type: "todo_list", items: [] },
        } as ThreadEvent,
        {
          type: "item.updated",
          item: { ...shared, id: "item_s2", type: "todo_list", items: [] },
        } as ThreadEvent,
        { type: "item.completed", item: cyclic } as unknown as ThreadEvent,
        ...finished(`the key is ${SECRET}`),
      ],
    });
    const text = JSON.stringify(receipt);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("abcdefghijklmnop1234");
    expect(receipt.finalText).toBe("the key is [REDACTED]");
    expect(text).toContain("[Circular]");
    expect(receipt.trace.filter((e) => JSON.stringify(e).includes("key [REDACTED]"))).toHaveLength(
      2,
    );
  });
});

describe("CodexExecutor classification", () => {
  const failures: [string, string, string | null][] = [
    [
      "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:1/v1/responses",
      "infra_error",
      "auth_missing",
    ],
    [
      "Missing environment variable: `HARNESSLAB_CODEX_ENDPOINT_KEY`.",
      "infra_error",
      "auth_missing",
    ],
    ["exceeded retry limit, last status: 429 Too Many Requests", "infra_error", "rate_limited"],
    ["Quota exceeded. Check your plan and billing details.", "infra_error", "quota_exhausted"],
    [
      "We’re currently experiencing high demand, which may cause temporary errors.",
      "infra_error",
      "rate_limited",
    ],
    [
      "stream disconnected before completion: error sending request",
      "infra_error",
      "network_unreachable",
    ],
    [
      "The model `gpt-9` does not exist or you do not have access to it.",
      "infra_error",
      "config_invalid",
    ],
    ["unexpected status 404 Not Found: no route", "infra_error", "protocol_mismatch"],
    ["Your input exceeds the context window of this model.", "limit_reached", null],
    ["the agent gave up", "agent_error", null],
  ];
  it.each(failures)("classifies turn.failed %j as %s/%s", async (message, status, reason) => {
    const { receipt } = await run({
      events: [...started, { type: "error", message }, { type: "turn.failed", error: { message } }],
      throwAfter: new Error(`Codex Exec exited with code 1: ${message}`),
    });
    expect(receipt).toMatchObject({ status, infraReason: reason, error: message });
    // The result recorded before the SDK threw is kept, and so is the throw.
    expect(traceTypes(receipt)).toEqual(expect.arrayContaining(["turn.failed", "harness.thrown"]));
  });

  it("classifies a CLI that exits before any event from its message", async () => {
    const config = await run({
      throwAfter: new Error(
        "Codex Exec exited with code 1: Error loading config.toml: invalid type",
      ),
    });
    expect(config.receipt).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
    const unknown = await run({ throwAfter: new Error("Codex Exec exited with signal SIGSEGV: ") });
    expect(unknown.receipt).toMatchObject({ status: "infra_error", infraReason: "spawn_failed" });
  });

  it("reports protocol_mismatch for unreadable events and for a stream that ends without finishing the turn", async () => {
    const garbled = await run({
      events: started,
      throwAfter: new Error("Failed to parse item: {oops"),
    });
    expect(garbled.receipt).toMatchObject({
      status: "infra_error",
      infraReason: "protocol_mismatch",
    });
    const cut = await run({ events: started });
    expect(cut.receipt).toMatchObject({ status: "infra_error", infraReason: "protocol_mismatch" });
  });

  it("reports binary_missing when the SDK cannot find the CLI or the binary path does not exist", async () => {
    const noCli = await run({
      constructorThrows: new Error(
        "Unable to locate Codex CLI binaries. Ensure @openai/codex is installed with optional dependencies.",
      ),
    });
    expect(noCli.receipt).toMatchObject({ status: "infra_error", infraReason: "binary_missing" });
    const noPath = await run({}, { pathToExecutable: join(base, "no-such-codex") });
    expect(noPath.receipt).toMatchObject({ status: "infra_error", infraReason: "binary_missing" });
    expect(noPath.calls.constructed).toBe(0);
  });

  it("reports spawn_failed when the binary cannot be executed", async () => {
    const path = join(base, "not-executable");
    await writeFile(path, "#!/bin/sh\necho hi\n");
    await chmod(path, 0o644);
    const { receipt } = await run({}, { pathToExecutable: path });
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "spawn_failed" });
  });

  it("reports runtime_missing, naming the package, when the SDK is not installed", async () => {
    const executor = new CodexExecutor({
      sdk: async () => {
        throw new SdkMissingError("@openai/codex-sdk", new Error("Cannot find package"));
      },
      pathToExecutable: loggedInBinary,
    });
    const receipt = await executor.run(runInput());
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "runtime_missing" });
    expect(receipt.error).toContain("npm install @openai/codex-sdk");
  });

  it("reports auth_missing from the pre-flight without starting a thread when nothing can authenticate", async () => {
    const { receipt, calls } = await run(
      { events: [...started, ...finished()] },
      { env: { PATH: "/bin" } },
    );
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
    expect(receipt.error).toContain('says "Not logged in"');
    expect(calls.constructed).toBe(0);
    expect(receipt.trace.find((e) => e.type === "harness.preflight")).toMatchObject({
      version: "9.8.7",
      loggedIn: false,
    });
  });

  it("runs when a login exists, an API key is set, or a login is copied in with loginFrom", async () => {
    const loggedIn = await run(
      { events: [...started, ...finished()] },
      { env: { PATH: "/bin" }, pathToExecutable: loggedInBinary },
    );
    expect(loggedIn.receipt.status).toBe("completed");
    const login = join(base, "user-codex-home");
    await mkdir(login);
    await writeFile(join(login, "auth.json"), '{"tokens":{}}\n');
    const copied = await run(
      { events: [...started, ...finished()] },
      { env: { PATH: "/bin" }, loginFrom: login },
    );
    expect(copied.receipt.status).toBe("completed");
    const missing = await run(
      { events: [...started, ...finished()] },
      { env: { PATH: "/bin" }, loginFrom: join(base, "nowhere") },
    );
    expect(missing.receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
  });

  it("ends a run whose only news is a network reconnect as network_unreachable at once", async () => {
    const { receipt, calls } = await run({
      events: [
        ...started,
        {
          type: "error",
          message: "Reconnecting... waiting for network (Connection failed: error sending request)",
        },
      ],
      after: "hang",
    });
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "network_unreachable" });
    expect(calls.signal?.aborted).toBe(true);
  });

  it("waits out a reconnect after an HTTP answer and classifies the turn's failure instead", async () => {
    const message = "unexpected status 401 Unauthorized: Incorrect API key provided";
    const { receipt } = await run({
      events: [
        ...started,
        { type: "error", message: `Reconnecting... 1/1 (${message})` },
        { type: "error", message },
        { type: "turn.failed", error: { message } },
      ],
    });
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
  });

  it("tolerates reconnects after progress up to reconnectLimit in a row", async () => {
    const reconnect: ThreadEvent = {
      type: "error",
      message: "Reconnecting... 2/5 (stream disconnected before completion: error sending request)",
    };
    const progress = item("item.completed", { id: "item_0", type: "reasoning", text: "…" });
    const recovered = await run(
      { events: [...started, progress, reconnect, reconnect, ...finished()] },
      { reconnectLimit: 3 },
    );
    expect(recovered.receipt.status).toBe("completed");
    const dead = await run(
      { events: [...started, progress, reconnect, reconnect, reconnect], after: "hang" },
      { reconnectLimit: 3 },
    );
    expect(dead.receipt).toMatchObject({
      status: "infra_error",
      infraReason: "network_unreachable",
    });
  });
});

describe("CodexExecutor limits, timeouts and aborts", () => {
  it("aborts the CLI and reports timeout when the run outlives its budget", async () => {
    const { receipt, calls } = await run(
      { events: started, after: "hang" },
      {},
      { timeoutMs: 1500 },
    );
    expect(receipt).toMatchObject({
      status: "timeout",
      error: "the agent did not finish within 1500 ms",
    });
    expect(calls.signal?.aborted).toBe(true);
  });

  it("counts the pre-flight against the run's budget", async () => {
    const slow = await script(
      "codex-slow",
      'case "$1" in --version) echo "codex-cli 1.0.0" ;; *) sleep 5 ;; esac',
    );
    const { receipt, calls } = await run(
      { events: [...started, ...finished()] },
      { pathToExecutable: slow },
      { timeoutMs: 200 },
    );
    expect(receipt.status).toBe("timeout");
    expect(receipt.error).toContain("pre-flight");
    expect(calls.constructed).toBe(0);
  });

  it("stops waiting for a CLI that ignores the abort after abortGraceMs", async () => {
    const controller = new AbortController();
    const { receipt } = await run(
      { events: started, after: "stuck", onStuck: () => controller.abort() },
      { abortGraceMs: 50 },
      { signal: controller.signal },
    );
    expect(receipt.status).toBe("aborted");
    expect(traceTypes(receipt)).toContain("harness.stuck");
  });

  it("reports aborted when the caller aborts, and does not start when already aborted", async () => {
    const controller = new AbortController();
    const sdk = fakeSdk({ events: started, after: "hang" });
    const executor = new CodexExecutor({
      sdk: sdk.module,
      pathToExecutable: loggedInBinary,
      env: { PATH: "/bin" },
    });
    const pending = executor.run(runInput({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    expect((await pending).status).toBe("aborted");

    const early = fakeSdk({ events: started });
    const before = await new CodexExecutor({
      sdk: early.module,
      pathToExecutable: loggedInBinary,
    }).run(runInput({ signal: AbortSignal.abort() }));
    expect(before.status).toBe("aborted");
    expect(early.calls.constructed).toBe(0);
  });

  it("caps tool calls at maxTurns and reports limit_reached", async () => {
    const command = (id: string): ThreadEvent =>
      item("item.started", {
        id,
        type: "command_execution",
        command: "/bin/bash -lc 'npm test'",
        aggregated_output: "",
        status: "in_progress",
      });
    const { receipt, calls } = await run(
      {
        events: [...started, command("a"), command("b"), command("c"), ...finished()],
        after: "hang",
      },
      {},
      { runtime: { tools: TOOLS, allowedTools: [], disallowedTools: [], maxTurns: 2 } },
    );
    expect(receipt.status).toBe("limit_reached");
    expect(receipt.error).toContain("maxTurns 2");
    expect(calls.signal?.aborted).toBe(true);
  });
});
