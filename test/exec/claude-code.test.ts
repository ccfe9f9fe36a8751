// The claude-code executor against fake SDK modules that yield the SDK's own message types.
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SDKAssistantMessageError, SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import { afterEach, describe, expect, it } from "vitest";
import {
  ClaudeCodeExecutor,
  type ClaudeCodeExecutorOptions,
} from "../../src/exec/claude-code/index.js";
import { createExecutor } from "../../src/exec/factory.js";
import { PiExecutor } from "../../src/exec/pi/index.js";
import { runtimeReceiptSchema } from "../../src/exec/receipt.js";
import { promptWithPreamble, SdkMissingError } from "../../src/exec/sdk/common.js";
import type { ExecutorRunInput, RuntimeSettings } from "../../src/exec/types.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { createUnsandboxed } from "../../src/sandbox/index.js";
import {
  apiErrorResult,
  assistantMessage,
  fakeClaudeSdk,
  initMessage,
  modelUsage,
  type QueryCall,
  resultError,
  resultSuccess,
  SESSION_ID,
  simulateToolCall,
  toolResultMessage,
} from "../support/anthropic-sdk-fakes.js";
import { testSandbox } from "../support/sandbox.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const SECRET = "sk-ant-api03-fake-secret-for-tests-0123456789";

async function trial(
  runtime: Partial<RuntimeSettings> = {},
  extra: Partial<ExecutorRunInput> = {},
) {
  const base = await realpath(await mkdtemp(join(tmpdir(), "hl-claude-")));
  dirs.push(base);
  const root = join(base, "root");
  const scratch = join(base, "scratch");
  await mkdir(join(root, "src"), { recursive: true });
  await mkdir(scratch);
  await writeFile(join(root, "src", "index.js"), "export const x = 1;\n");
  const settings: RuntimeSettings = {
    model: "claude-sonnet-4-5",
    tools: ["Read", "Edit", "Write", "Bash"],
    allowedTools: [],
    disallowedTools: ["WebFetch", "WebSearch"],
    permissionMode: "default",
    maxTurns: 12,
    ...runtime,
  };
  const policy = createToolPolicy({
    trialRoot: root,
    allowedWrites: ["src/index.js"],
    allowedCommands: [["npm", "test"]],
    tools: settings.tools,
  });
  const input: ExecutorRunInput = {
    prompt: "Fix the bug.",
    preamble: "",
    cwd: root,
    policy,
    timeoutMs: 30_000,
    scratchDir: scratch,
    // The option mapping under --unsafe-no-sandbox; the contained mapping has tests of its own.
    sandbox: createUnsandboxed(),
    runtime: settings,
    trialIndex: 2,
    variant: "candidate",
    task: "fix-the-bug",
    ...extra,
  };
  return { root, scratch, policy, input };
}

const ENV = {
  PATH: "/usr/bin:/bin",
  ANTHROPIC_API_KEY: SECRET,
  ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
  GITHUB_TOKEN: "ghp_not_for_the_agent_000000000000",
  SOME_HARNESS_SETTING: "internal",
};

function executor(
  run: (call: QueryCall) => AsyncGenerator<SDKMessage | unknown, void>,
  options: Partial<ClaudeCodeExecutorOptions> = {},
) {
  const fake = fakeClaudeSdk(run);
  return {
    executor: new ClaudeCodeExecutor({ sdk: fake.sdk, env: ENV, ...options }),
    calls: fake.calls,
  };
}

async function* completedRun(): AsyncGenerator<SDKMessage, void> {
  yield initMessage();
  yield assistantMessage([{ type: "text", text: "Done." }]);
  yield resultSuccess();
}

describe("ClaudeCodeExecutor options", () => {
  it("passes the run's settings to query() exactly, with no settings, sessions or MCP servers of the user", async () => {
    const { input, root, scratch } = await trial({ allowedTools: ["Read"] });
    const { executor: ex, calls } = executor(completedRun);
    await ex.run(input);
    expect(calls).toHaveLength(1);
    const { prompt, options } = calls[0]!;
    expect(prompt).toBe("Fix the bug.");
    const { env, abortController, hooks, canUseTool, stderr, ...plain } = options;
    expect(plain).toEqual({
      cwd: root,
      model: "claude-sonnet-4-5",
      maxTurns: 12,
      tools: ["Read", "Edit", "Write", "Bash"],
      allowedTools: ["Read"],
      disallowedTools: ["WebFetch", "WebSearch"],
      permissionMode: "default",
      settingSources: [],
      strictMcpConfig: true,
      mcpServers: {},
      plugins: [],
      persistSession: false,
      skills: [],
      systemPrompt: { type: "preset", preset: "claude_code" },
    });
    expect(abortController).toBeInstanceOf(AbortController);
    expect(typeof canUseTool).toBe("function");
    expect(typeof stderr).toBe("function");
    expect(hooks?.PreToolUse).toHaveLength(1);
    expect(hooks?.PreToolUse?.[0]).toMatchObject({ onFailure: "block" });
    expect(Object.keys(hooks ?? {})).toEqual(["PreToolUse"]);

    const home = join(scratch, "home");
    expect(env).toEqual({
      PATH: "/usr/bin:/bin",
      ANTHROPIC_API_KEY: SECRET,
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, ".claude"),
      TMPDIR: join(scratch, "tmp"),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      DISABLE_TELEMETRY: "1",
      CLAUDE_CODE_MAX_RETRIES: "3",
      NO_UPDATE_NOTIFIER: "1",
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    });
  });

  it("leaves model and turn limit to Claude Code when the runtime names none, and honours a binary path and retry count", async () => {
    const { input } = await trial({ model: undefined, maxTurns: undefined });
    const { executor: ex, calls } = executor(completedRun, {
      pathToClaudeCodeExecutable: "/opt/claude/bin/claude",
      maxRetries: 0,
    });
    await ex.run(input);
    const options = calls[0]!.options;
    expect("model" in options).toBe(false);
    expect("maxTurns" in options).toBe(false);
    expect(options.pathToClaudeCodeExecutable).toBe("/opt/claude/bin/claude");
    expect(options.env?.CLAUDE_CODE_MAX_RETRIES).toBe("0");
  });

  it("puts a separately given preamble in front of the prompt once, and leaves a composed prompt alone", () => {
    expect(promptWithPreamble("Task.", "Be careful.\n")).toBe("Be careful.\n\n---\n\nTask.");
    expect(promptWithPreamble("Be careful.\n\n---\n\nTask.", "Be careful.\n")).toBe(
      "Be careful.\n\n---\n\nTask.",
    );
    expect(promptWithPreamble("Task.", "  \n")).toBe("Task.");
  });

  it("refuses an unknown permission mode or a policy for another root without starting Claude Code", async () => {
    const { input } = await trial({ permissionMode: "yolo" });
    const { executor: ex, calls } = executor(completedRun);
    const receipt = await ex.run(input);
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
    expect(receipt.error).toContain("yolo");

    const other = await trial();
    const mismatched = await ex.run({ ...other.input, cwd: join(other.root, "src") });
    expect(mismatched).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
    expect(calls).toHaveLength(0);
  });

  it("is what createExecutor returns for claude-code (and PiExecutor for pi)", () => {
    expect(createExecutor("claude-code")).toBeInstanceOf(ClaudeCodeExecutor);
    expect(createExecutor("pi")).toBeInstanceOf(PiExecutor);
  });
});

describe("ClaudeCodeExecutor contained (bubblewrap)", () => {
  it("starts Claude Code through the sandbox and gives it the endpoint proxy and a placeholder, never the key", async () => {
    const { input } = await trial({}, { sandbox: await testSandbox() });
    const { executor: ex, calls } = executor(completedRun);
    const receipt = await ex.run(input);
    expect(receipt.status).toBe("completed");
    const options = calls[0]!.options;
    expect(typeof options.spawnClaudeCodeProcess).toBe("function");
    expect(options.env).toMatchObject({
      ANTHROPIC_BASE_URL: "http://127.0.0.1:40117",
      ANTHROPIC_API_KEY: "harnesslab-sandboxed-credential",
    });
    expect(JSON.stringify(options.env)).not.toContain(SECRET);
    expect(receipt.trace[0]).toMatchObject({
      type: "harness.contained",
      endpoint: "http://127.0.0.1:9",
      viaEndpointProxy: true,
    });
  });

  it("refuses Bedrock or Vertex credentials, which cannot stay outside the sandbox, without starting Claude Code", async () => {
    const { input } = await trial({}, { sandbox: await testSandbox() });
    const { executor: ex, calls } = executor(completedRun, {
      env: { ...ENV, CLAUDE_CODE_USE_BEDROCK: "1" },
    });
    const receipt = await ex.run(input);
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
    expect(receipt.error).toMatch(/CLAUDE_CODE_USE_BEDROCK is set.*--unsafe-no-sandbox/);
    expect(calls).toHaveLength(0);
  });
});

describe("ClaudeCodeExecutor receipts", () => {
  it("records a completed run: session, versions, models, tokens summed over every model, cost, turns, durations, tool calls, final text", async () => {
    const { input } = await trial();
    const { executor: ex } = executor(async function* () {
      yield initMessage({ claude_code_version: "2.1.999" });
      yield assistantMessage([
        { type: "text", text: "Looking." },
        { type: "tool_use", id: "t1", name: "Read", input: { file_path: "src/index.js" } },
        { type: "tool_use", id: "t2", name: "Read", input: { file_path: "package.json" } },
      ]);
      yield toolResultMessage("t1", "export const x = 1;");
      yield assistantMessage([{ type: "tool_use", id: "t3", name: "Edit", input: {} }], {
        model: "claude-haiku-4-5",
      });
      yield { type: "system", subtype: "status", status: null, uuid: "x", session_id: SESSION_ID };
      yield resultSuccess({
        num_turns: 4,
        duration_ms: 4321,
        duration_api_ms: 1200,
        total_cost_usd: 0.0456,
        result: "Fixed parseDuration.",
        modelUsage: {
          "claude-sonnet-4-5": modelUsage({
            inputTokens: 100,
            outputTokens: 40,
            thinkingTokens: 5,
          }),
          "claude-haiku-4-5": modelUsage({
            inputTokens: 7,
            outputTokens: 3,
            cacheReadInputTokens: 1,
            cacheCreationInputTokens: 2,
          }),
        },
      });
    });
    const receipt = await ex.run(input);
    expect(runtimeReceiptSchema.parse(receipt)).toBeTruthy();
    expect(receipt).toMatchObject({
      executor: {
        host: "claude-code",
        kind: "claude-agent-sdk",
        package: "@anthropic-ai/claude-agent-sdk",
        agentVersion: "2.1.999",
      },
      trial: { task: "fix-the-bug", variant: "candidate", index: 2 },
      model: {
        requested: "claude-sonnet-4-5",
        effective: ["claude-haiku-4-5", "claude-sonnet-4-5"],
      },
      sessionId: SESSION_ID,
      durations: { agentMs: 4321, apiMs: 1200 },
      status: "completed",
      infraReason: null,
      error: null,
      finalText: "Fixed parseDuration.",
      tokens: { uncachedInput: 107, cacheRead: 31, cacheWrite: 12, output: 43, reasoning: 5 },
      costUsd: 0.0456,
      credits: null,
      turns: 4,
      toolCalls: 3,
      permissionDenials: [],
    });
    expect(receipt.settings.envVarNames).toEqual([...receipt.settings.envVarNames].sort());
    expect(receipt.settings.envVarNames).toContain("ANTHROPIC_API_KEY");
    expect(receipt.settings.envVarNames).not.toContain("GITHUB_TOKEN");
    expect(receipt.trace.map((e) => e.type)).toEqual([
      "system",
      "assistant",
      "user",
      "assistant",
      "system",
      "result",
    ]);
  });

  it("falls back to the result's usage when it reports no per-model usage", async () => {
    const { input } = await trial();
    const { executor: ex } = executor(async function* () {
      yield initMessage();
      const result = resultSuccess({ modelUsage: {} });
      yield {
        ...result,
        usage: {
          ...result.usage,
          input_tokens: 9,
          output_tokens: 4,
          cache_read_input_tokens: 2,
          cache_creation_input_tokens: 1,
        },
      };
    });
    const receipt = await ex.run(input);
    expect(receipt.tokens).toEqual({
      uncachedInput: 9,
      cacheRead: 2,
      cacheWrite: 1,
      output: 4,
      reasoning: null,
    });
  });

  it("masks credentials in the trace, keeps an object referenced twice and marks only a true cycle", async () => {
    const { input } = await trial();
    const shared = { file: "src/index.js", lines: [1, 2] };
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const { executor: ex } = executor(async function* () {
      yield initMessage();
      yield assistantMessage([{ type: "text", text: `my key is ${SECRET}` }]);
      yield {
        type: "system",
        subtype: "custom_probe",
        first: shared,
        second: shared,
        cyclic,
        headers: { authorization: "Bearer abc.def.ghi" },
        uuid: "u",
        session_id: SESSION_ID,
      };
      yield resultSuccess({ result: `done with ${SECRET}` });
    });
    const receipt = await ex.run(input);
    const text = JSON.stringify(receipt);
    expect(text).not.toContain(SECRET);
    expect(receipt.finalText).toBe("done with [REDACTED]");
    const probe = receipt.trace.find((e) => e.subtype === "custom_probe") as Record<
      string,
      unknown
    >;
    expect(probe.first).toEqual(shared);
    expect(probe.second).toEqual(shared);
    expect(probe.cyclic).toEqual({ name: "loop", self: "[Circular]" });
    expect(probe.headers).toEqual({ authorization: "[REDACTED]" });
    const said = receipt.trace.find((e) => e.type === "assistant") as unknown as {
      message: { content: { text: string }[] };
    };
    expect(said.message.content[0]?.text).toBe("my key is [REDACTED]");
  });
});

describe("ClaudeCodeExecutor permission gate", () => {
  it("puts every call to the policy through the PreToolUse hook and records it once even when canUseTool asks again", async () => {
    const { input, policy } = await trial();
    const answers: unknown[] = [];
    const { executor: ex } = executor(async function* ({ options }) {
      yield initMessage();
      yield assistantMessage([
        { type: "tool_use", id: "t1", name: "Read", input: { file_path: "src/index.js" } },
      ]);
      // Claude Code does not ask canUseTool for a read inside cwd: only the hook sees it.
      answers.push(
        await simulateToolCall(options, {
          name: "Read",
          input: { file_path: "src/index.js" },
          id: "t1",
          asksCanUseTool: false,
        }),
      );
      yield assistantMessage([
        { type: "tool_use", id: "t2", name: "Edit", input: { file_path: "src/index.js" } },
      ]);
      answers.push(
        await simulateToolCall(options, {
          name: "Edit",
          input: { file_path: "src/index.js", old_string: "1", new_string: "2" },
          id: "t2",
        }),
      );
      yield assistantMessage([{ type: "tool_use", id: "t3", name: "Bash", input: {} }]);
      answers.push(
        await simulateToolCall(options, {
          name: "Bash",
          input: { command: "npm test" },
          id: "t3",
        }),
      );
      yield resultSuccess();
    });
    const receipt = await ex.run(input);
    expect(receipt.status).toBe("completed");
    expect(policy.decisions().map((d) => [d.seq, d.tool, d.decision])).toEqual([
      [1, "Read", "allow"],
      [2, "Edit", "allow"],
      [3, "Bash", "allow"],
    ]);
    expect(answers).toEqual([
      { hook: { hookSpecificOutput: { hookEventName: "PreToolUse" } }, permission: null },
      {
        hook: { hookSpecificOutput: { hookEventName: "PreToolUse" } },
        permission: {
          behavior: "allow",
          updatedInput: { file_path: "src/index.js", old_string: "1", new_string: "2" },
        },
      },
      {
        hook: { hookSpecificOutput: { hookEventName: "PreToolUse" } },
        permission: { behavior: "allow", updatedInput: { command: "npm test" } },
      },
    ]);
    const gateEvents = receipt.trace.filter((e) => e.type === "harness_permission");
    expect(gateEvents.map((e) => [e.via, e.tool, e.seq, e.reused])).toEqual([
      ["hook", "Read", 1, false],
      ["hook", "Edit", 2, false],
      ["canUseTool", "Edit", 2, true],
      ["hook", "Bash", 3, false],
      ["canUseTool", "Bash", 3, true],
    ]);
  });

  it("denies what the policy refuses with its reason, and the denial reaches the receipt and the trace", async () => {
    const { input } = await trial();
    let hookAnswer: unknown;
    const { executor: ex } = executor(async function* ({ options }) {
      yield initMessage();
      yield assistantMessage([
        { type: "tool_use", id: "t9", name: "Bash", input: { command: "curl http://example.com" } },
      ]);
      hookAnswer = (
        await simulateToolCall(options, {
          name: "Bash",
          input: { command: "curl http://example.com" },
          id: "t9",
        })
      ).hook;
      yield resultSuccess({
        permission_denials: [
          {
            tool_name: "Bash",
            tool_use_id: "t9",
            tool_input: { command: "curl http://example.com" },
          },
        ],
      });
    });
    const receipt = await ex.run(input);
    expect(hookAnswer).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining(
          "Denied by the harness permission policy (command-not-allowed)",
        ),
      },
    });
    expect(receipt.permissionDenials).toMatchObject([
      { seq: 1, tool: "Bash", decision: "deny", rule: "command-not-allowed" },
    ]);
    expect(receipt.toolCalls).toBe(1);
    expect(receipt.trace.find((e) => e.type === "harness_permission")).toMatchObject({
      decision: "deny",
      toolUseId: "t9",
    });
  });

  it("lets canUseTool decide a call no hook saw, and decide again when the input changed", async () => {
    const { input, policy } = await trial();
    const { executor: ex } = executor(async function* ({ options }) {
      yield initMessage();
      const signal = new AbortController().signal;
      const first = await options.canUseTool?.(
        "Write",
        { file_path: "notes.txt", content: "x" },
        {
          signal,
          toolUseID: "w1",
          requestId: "r1",
        },
      );
      await simulateToolCall(options, {
        name: "Edit",
        input: { file_path: "src/index.js" },
        id: "e1",
        asksCanUseTool: false,
      });
      const changed = await options.canUseTool?.(
        "Edit",
        { file_path: "/etc/passwd" },
        {
          signal,
          toolUseID: "e1",
          requestId: "r2",
        },
      );
      yield {
        type: "system",
        subtype: "answers",
        first,
        changed,
        uuid: "u",
        session_id: SESSION_ID,
      };
      yield resultSuccess();
    });
    const receipt = await ex.run(input);
    expect(policy.decisions().map((d) => [d.tool, d.decision, d.rule])).toEqual([
      ["Write", "deny", "write-not-allowed"],
      ["Edit", "allow", "allowed"],
      ["Edit", "deny", "path-outside-root"],
    ]);
    const answers = receipt.trace.find((e) => e.subtype === "answers");
    expect(answers).toMatchObject({
      first: { behavior: "deny" },
      changed: { behavior: "deny" },
    });
  });
});

type Scenario = {
  name: string;
  messages: () => AsyncGenerator<SDKMessage | unknown, void>;
  status: string;
  infraReason: string | null;
  error?: RegExp;
};

function erroredRun(
  error: SDKAssistantMessageError,
  text: string,
  status: number | null,
  init = initMessage(),
): () => AsyncGenerator<SDKMessage, void> {
  return async function* () {
    yield init;
    yield assistantMessage([{ type: "text", text }], { model: "<synthetic>", error });
    yield apiErrorResult(text, status);
    throw new Error(`Claude Code returned an error result: ${text}`);
  };
}

function thrown(error: Error, afterInit = false): () => AsyncGenerator<SDKMessage, void> {
  return async function* () {
    if (afterInit) yield initMessage();
    throw error;
  };
}

function withCode(message: string, code: string, ctor: ErrorConstructor = Error): Error {
  return Object.assign(new ctor(message), { code });
}

const SCENARIOS: Scenario[] = [
  {
    name: "no credential at all (Not logged in)",
    messages: erroredRun(
      "authentication_failed",
      "Not logged in · Please run /login",
      null,
      initMessage({ apiKeySource: "none" }),
    ),
    status: "infra_error",
    infraReason: "auth_missing",
    error: /Not logged in/,
  },
  {
    name: "a rejected key (401)",
    messages: erroredRun("authentication_failed", "Invalid API key · Fix external API key", 401),
    status: "infra_error",
    infraReason: "auth_missing",
  },
  {
    name: "a refused connection",
    messages: erroredRun(
      "server_error",
      "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)",
      null,
    ),
    status: "infra_error",
    infraReason: "network_unreachable",
  },
  {
    name: "an unresolvable host",
    messages: erroredRun("server_error", "API Error: Can't reach the API server (ENOTFOUND)", null),
    status: "infra_error",
    infraReason: "network_unreachable",
  },
  {
    name: "a failing endpoint (500)",
    messages: erroredRun("server_error", "API Error: 500 Internal server error.", 500),
    status: "infra_error",
    infraReason: "network_unreachable",
  },
  {
    name: "a rate limit (429)",
    messages: erroredRun("rate_limit", "API Error: Request rejected (429)", 429),
    status: "infra_error",
    infraReason: "rate_limited",
  },
  {
    name: "an overloaded service (529)",
    messages: erroredRun("server_error", "API Error: 529 Overloaded.", 529),
    status: "infra_error",
    infraReason: "rate_limited",
  },
  {
    name: "an exhausted credit balance",
    messages: erroredRun("billing_error", "Credit balance is too low", 400),
    status: "infra_error",
    infraReason: "quota_exhausted",
  },
  {
    name: "a model the endpoint does not know",
    messages: erroredRun("model_not_found", "There's an issue with the selected model", 404),
    status: "infra_error",
    infraReason: "config_invalid",
  },
  {
    name: "a settings file Claude Code cannot start with",
    messages: async function* () {
      yield resultError("error_during_execution", {
        startup_failure_reason: "config_file_invalid",
        errors: ["invalid settings"],
      });
    },
    status: "infra_error",
    infraReason: "config_invalid",
  },
  {
    name: "a machine without the shell Claude Code needs",
    messages: async function* () {
      yield resultError("error_during_execution", { startup_failure_reason: "shell_tool_missing" });
    },
    status: "infra_error",
    infraReason: "runtime_missing",
  },
  {
    name: "a missing native binary",
    messages: thrown(
      withCode("Claude Code native binary not found at /x/claude.", "ENOENT", ReferenceError),
    ),
    status: "infra_error",
    infraReason: "binary_missing",
  },
  {
    name: "a binary that cannot be launched",
    messages: thrown(
      withCode("Claude Code native binary at /x exists but failed to launch.", "EACCES"),
    ),
    status: "infra_error",
    infraReason: "spawn_failed",
  },
  {
    name: "a process that dies before the session starts",
    messages: thrown(new Error("Claude Code process exited with code 1")),
    status: "infra_error",
    infraReason: "spawn_failed",
  },
  {
    name: "a stream that ends without a result",
    messages: async function* () {
      yield initMessage();
      yield assistantMessage([{ type: "text", text: "half" }]);
    },
    status: "infra_error",
    infraReason: "protocol_mismatch",
  },
  {
    name: "a message that is not an object with a type",
    messages: async function* () {
      yield initMessage();
      yield "garbage";
      yield assistantMessage([{ type: "text", text: "x" }]);
    },
    status: "infra_error",
    infraReason: "protocol_mismatch",
  },
  {
    name: "a result subtype this version does not know",
    messages: async function* () {
      yield initMessage();
      yield { ...resultSuccess(), subtype: "success_v2" };
    },
    status: "infra_error",
    infraReason: "protocol_mismatch",
  },
  {
    name: "the turn limit",
    messages: async function* () {
      yield initMessage();
      yield resultError("error_max_turns", {
        terminal_reason: "max_turns",
        errors: ["Reached maximum number of turns (1)"],
      });
      throw new Error("Claude Code returned an error result: Reached maximum number of turns (1)");
    },
    status: "limit_reached",
    infraReason: null,
    error: /maximum number of turns/,
  },
  {
    name: "the budget limit",
    messages: async function* () {
      yield initMessage();
      yield resultError("error_max_budget_usd", { terminal_reason: "budget_exhausted" });
    },
    status: "limit_reached",
    infraReason: null,
  },
  {
    name: "an error of the agent's own run",
    messages: async function* () {
      yield initMessage();
      yield resultError("error_during_execution", { errors: ["tool loop failed"] });
    },
    status: "agent_error",
    infraReason: null,
    error: /tool loop failed/,
  },
];

describe("ClaudeCodeExecutor classification", () => {
  it.each(SCENARIOS)("classifies $name as $status/$infraReason", async (scenario) => {
    const { input } = await trial();
    const { executor: ex } = executor(scenario.messages);
    const receipt = await ex.run(input);
    expect(runtimeReceiptSchema.safeParse(receipt).success).toBe(true);
    expect([receipt.status, receipt.infraReason]).toEqual([scenario.status, scenario.infraReason]);
    if (scenario.error) expect(receipt.error).toMatch(scenario.error);
  });

  it("keeps the error result (turns, cost, session) when the SDK throws after yielding it", async () => {
    const { input } = await trial();
    const { executor: ex } = executor(
      erroredRun("rate_limit", "API Error: Request rejected (429)", 429),
    );
    const receipt = await ex.run(input);
    expect(receipt).toMatchObject({
      status: "infra_error",
      infraReason: "rate_limited",
      turns: 1,
      sessionId: SESSION_ID,
      error: "API Error: Request rejected (429)",
      finalText: "",
    });
    expect(receipt.model.effective).toEqual([]);
    expect(receipt.trace.at(-1)).toMatchObject({
      type: "sdk_error_after_result",
      message: expect.stringContaining("returned an error result"),
    });
  });

  it("reports a missing SDK package as runtime_missing, naming the package", async () => {
    const { input } = await trial();
    const ex = new ClaudeCodeExecutor({
      env: ENV,
      loadSdk: () =>
        Promise.reject(
          new SdkMissingError("@anthropic-ai/claude-agent-sdk", new Error("not found")),
        ),
    });
    const receipt = await ex.run(input);
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "runtime_missing" });
    expect(receipt.error).toContain("npm install @anthropic-ai/claude-agent-sdk");
  });
});

class FakeAbortError extends Error {}

/** A fake that waits until its abort controller fires, then throws like the SDK does. */
async function* waitsForAbort({ options }: QueryCall): AsyncGenerator<SDKMessage, void> {
  yield initMessage();
  const signal = options.abortController?.signal;
  await new Promise<void>((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  throw new FakeAbortError("Claude Code process aborted by user");
}

describe("ClaudeCodeExecutor deadlines", () => {
  it("aborts the SDK at the run's deadline and reports timeout", async () => {
    const { input } = await trial({}, { timeoutMs: 50 });
    const { executor: ex, calls } = executor(waitsForAbort);
    const receipt = await ex.run(input);
    expect(calls[0]?.options.abortController?.signal.aborted).toBe(true);
    expect(receipt).toMatchObject({ status: "timeout", infraReason: null, sessionId: SESSION_ID });
    expect(receipt.error).toContain("50 ms");
  });

  it("reports aborted when the caller's signal fires, and never starts when it already has", async () => {
    const controller = new AbortController();
    const { input } = await trial({}, { signal: controller.signal });
    const { executor: ex, calls } = executor(async function* (call) {
      setTimeout(() => controller.abort(), 10);
      yield* waitsForAbort(call);
    });
    expect((await ex.run(input)).status).toBe("aborted");
    expect(calls).toHaveLength(1);
    const again = await ex.run(input);
    expect(again).toMatchObject({ status: "aborted", error: "aborted before the agent started" });
    expect(calls).toHaveLength(1);
  });

  it("stops waiting for an SDK that ignores the abort once the grace period is over", async () => {
    const { input } = await trial({}, { timeoutMs: 30 });
    const { executor: ex } = executor(
      async function* () {
        yield initMessage();
        await new Promise(() => {});
      },
      { abortGraceMs: 30 },
    );
    const receipt = await ex.run(input);
    expect(receipt.status).toBe("timeout");
    expect(receipt.trace.map((e) => e.type)).toContain("harness_abandoned");
  });

  it("keeps a result that arrived before the deadline fired", async () => {
    const { input } = await trial({}, { timeoutMs: 40 });
    const { executor: ex } = executor(async function* (call) {
      yield initMessage();
      yield resultSuccess();
      yield* waitsForAbort(call);
    });
    const receipt = await ex.run(input);
    expect(receipt.status).toBe("completed");
  });
});
