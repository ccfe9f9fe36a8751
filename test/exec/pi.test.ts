// The pi executor against a fake SDK whose session emits Pi's own event types.
import { mkdir, mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentSessionEvent } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import {
  PI_SYSTEM_PROMPT,
  type PiAuthStorage,
  PiExecutor,
  type PiExecutorOptions,
  type PiSdk,
  type PiSession,
} from "../../src/exec/pi/index.js";
import { runtimeReceiptSchema } from "../../src/exec/receipt.js";
import { SdkMissingError } from "../../src/exec/sdk/common.js";
import type { ExecutorRunInput } from "../../src/exec/types.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { testSandbox } from "../support/sandbox.js";

type MessageEnd = Extract<AgentSessionEvent, { type: "message_end" }>;
type AssistantMessage = Extract<MessageEnd["message"], { role: "assistant" }>;

const KEY = "sk-ant-api03-pi-fake-key-for-tests-0123456789";
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function trial(extra: Partial<ExecutorRunInput> = {}, model = "claude-sonnet-4-5") {
  const base = await realpath(await mkdtemp(join(tmpdir(), "hl-pi-")));
  dirs.push(base);
  const root = join(base, "root");
  const scratch = join(base, "scratch");
  await mkdir(root);
  await mkdir(scratch);
  const input: ExecutorRunInput = {
    prompt: "Which function parses durations?",
    preamble: "",
    cwd: root,
    policy: createToolPolicy({
      trialRoot: root,
      allowedWrites: [],
      allowedCommands: [],
      tools: [],
    }),
    timeoutMs: 30_000,
    scratchDir: scratch,
    sandbox: await testSandbox(),
    runtime: { model, tools: ["Read"], allowedTools: [], disallowedTools: [] },
    trialIndex: 1,
    variant: "pi-a",
    task: "read-task",
    ...extra,
  };
  return { root, scratch, input };
}

function assistant(overrides: Partial<AssistantMessage> = {}): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text: "parseDuration in src/index.js." }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: {
      input: 50,
      output: 12,
      cacheRead: 5,
      cacheWrite: 2,
      totalTokens: 69,
      cost: { input: 0.001, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.003 },
    },
    stopReason: "stop",
    timestamp: 1,
    ...overrides,
  };
}

function answer(message: AssistantMessage): AgentSessionEvent[] {
  return [
    { type: "agent_start" },
    { type: "turn_start" },
    { type: "message_start", message },
    {
      type: "message_update",
      message,
      assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "x", partial: message },
    },
    { type: "message_end", message },
    { type: "turn_end", message, toolResults: [] },
    { type: "agent_end", messages: [message] },
  ];
}

interface FakeBehaviour {
  /** Events emitted by prompt(); a function may wait for abort. */
  prompt: (session: FakeSession) => Promise<void>;
  registryModel?: unknown;
}

class FakeSession implements PiSession {
  readonly sessionId = "pi-session-1";
  listeners: ((event: unknown) => void)[] = [];
  prompts: string[] = [];
  aborted = false;
  disposed = false;
  private onAbort: (() => void)[] = [];
  constructor(private readonly behaviour: FakeBehaviour) {}
  subscribe(listener: (event: unknown) => void) {
    this.listeners.push(listener);
    return () => {};
  }
  emit(events: AgentSessionEvent[]) {
    for (const event of events) for (const listener of this.listeners) listener(event);
  }
  prompt(text: string) {
    this.prompts.push(text);
    return this.behaviour.prompt(this);
  }
  waitForAbort(): Promise<void> {
    return new Promise((resolve) => {
      if (this.aborted) resolve();
      else this.onAbort.push(resolve);
    });
  }
  async abort() {
    this.aborted = true;
    for (const resolve of this.onAbort.splice(0)) resolve();
  }
  dispose() {
    this.disposed = true;
  }
}

function fakePi(behaviour: FakeBehaviour) {
  const record = {
    sessionOptions: [] as Record<string, unknown>[],
    runtimeKeys: [] as [string, string][],
    fallback: [] as ((provider: string) => string | undefined)[],
    loaderOptions: [] as Record<string, unknown>[],
    settings: [] as unknown[],
    sessionManagerCwd: [] as (string | undefined)[],
    sessions: [] as FakeSession[],
  };
  const auth: PiAuthStorage = {
    setRuntimeApiKey: (provider, key) => record.runtimeKeys.push([provider, key]),
    setFallbackResolver: (resolver) => record.fallback.push(resolver),
  };
  const sdk: PiSdk = {
    VERSION: "0.73.1-fake",
    AuthStorage: { inMemory: () => auth },
    ModelRegistry: { inMemory: () => ({ find: () => behaviour.registryModel }) },
    SessionManager: {
      inMemory: (cwd?: string) => {
        record.sessionManagerCwd.push(cwd);
        return { kind: "session-manager" };
      },
    },
    SettingsManager: {
      inMemory: (settings?: Record<string, unknown>) => {
        record.settings.push(settings);
        return { kind: "settings" };
      },
    },
    DefaultResourceLoader: class {
      constructor(options: Record<string, unknown>) {
        record.loaderOptions.push(options);
      }
      async reload() {}
    },
    createAgentSession: async (options) => {
      record.sessionOptions.push(options);
      const session = new FakeSession(behaviour);
      record.sessions.push(session);
      return { session };
    },
  };
  return { sdk, record };
}

const answers = (message: AssistantMessage = assistant()): FakeBehaviour => ({
  prompt: async (session) => session.emit(answer(message)),
});

function pi(behaviour: FakeBehaviour, options: Partial<PiExecutorOptions> = {}) {
  const fake = fakePi(behaviour);
  const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" };
  return { executor: new PiExecutor({ sdk: fake.sdk, env, ...options }), record: fake.record };
}

describe("PiExecutor options", () => {
  it("builds an answer-only, isolated session: no tools, no extensions or context files, in-memory session and settings, key set explicitly", async () => {
    const { input, root, scratch } = await trial();
    const { executor, record } = pi(answers());
    await executor.run(input);
    const agentDir = join(scratch, "home", ".pi", "agent");
    expect(record.runtimeKeys).toEqual([["anthropic", KEY]]);
    expect(record.fallback).toHaveLength(1);
    expect(record.fallback[0]?.("anthropic")).toBeUndefined();
    expect(record.settings).toEqual([
      { compaction: { enabled: false }, retry: { enabled: false } },
    ]);
    expect(record.sessionManagerCwd).toEqual([root]);
    expect(record.loaderOptions).toEqual([
      {
        cwd: root,
        agentDir,
        settingsManager: { kind: "settings" },
        noExtensions: true,
        noSkills: true,
        noPromptTemplates: true,
        noThemes: true,
        noContextFiles: true,
        systemPrompt: PI_SYSTEM_PROMPT,
      },
    ]);
    const options = record.sessionOptions[0]!;
    expect(options).toMatchObject({
      cwd: root,
      agentDir,
      thinkingLevel: "off",
      noTools: "all",
      sessionManager: { kind: "session-manager" },
      settingsManager: { kind: "settings" },
      model: {
        id: "claude-sonnet-4-5",
        provider: "anthropic",
        api: "anthropic-messages",
        baseUrl: "http://127.0.0.1:9",
        headers: { "x-api-key": KEY, authorization: null },
      },
    });
    expect(record.sessions[0]?.prompts).toEqual(["Which function parses durations?"]);
    expect(record.sessions[0]?.disposed).toBe(true);
  });

  it("sends a bearer token as Authorization and removes the key header, when only ANTHROPIC_AUTH_TOKEN is given", async () => {
    const { input } = await trial();
    const { executor, record } = pi(answers(), { env: { ANTHROPIC_AUTH_TOKEN: KEY } });
    const receipt = await executor.run(input);
    expect(record.sessionOptions[0]?.model).toMatchObject({
      baseUrl: "https://api.anthropic.com",
      headers: { authorization: `Bearer ${KEY}`, "x-api-key": null },
    });
    expect(receipt.settings.envVarNames).toEqual(["ANTHROPIC_AUTH_TOKEN"]);
  });

  it("uses the registry's model (with its prices) when Pi knows it, overriding only endpoint and headers", async () => {
    const { input } = await trial();
    const known = {
      id: "claude-sonnet-4-5",
      name: "Claude Sonnet 4.5",
      api: "anthropic-messages",
      provider: "anthropic",
      baseUrl: "https://api.anthropic.com",
      reasoning: true,
      input: ["text", "image"],
      cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      contextWindow: 200_000,
      maxTokens: 64_000,
    };
    const { executor, record } = pi({ ...answers(), registryModel: known });
    const receipt = await executor.run(input);
    expect(record.sessionOptions[0]?.model).toMatchObject({
      name: "Claude Sonnet 4.5",
      maxTokens: 64_000,
      cost: known.cost,
      baseUrl: "http://127.0.0.1:9",
    });
    expect(receipt.costUsd).toBeCloseTo(0.003);
  });
});

describe("PiExecutor receipts", () => {
  it("records a completed answer: usage, turns, session, versions, final text, no tool calls, no streaming deltas in the trace", async () => {
    const { input } = await trial();
    const { executor } = pi(answers(assistant({ responseModel: "claude-sonnet-4-5-20250929" })));
    const receipt = await executor.run(input);
    expect(runtimeReceiptSchema.parse(receipt)).toBeTruthy();
    expect(receipt).toMatchObject({
      executor: {
        host: "pi",
        kind: "pi-coding-agent-sdk",
        package: "@mariozechner/pi-coding-agent",
        agentVersion: "0.73.1-fake",
      },
      model: { requested: "claude-sonnet-4-5", effective: ["claude-sonnet-4-5-20250929"] },
      sessionId: "pi-session-1",
      status: "completed",
      finalText: "parseDuration in src/index.js.",
      tokens: { uncachedInput: 50, cacheRead: 5, cacheWrite: 2, output: 12, reasoning: null },
      // Pi prices the unknown fake model at zero: no cost is reported rather than an invented 0.
      costUsd: null,
      turns: 1,
      toolCalls: 0,
      permissionDenials: [],
      settings: { envVarNames: ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"] },
    });
    const types = receipt.trace.map((e) => e.type);
    expect(types).not.toContain("message_update");
    expect(types[0]).toBe("harness_note");
    expect(types).toContain("message_end");
  });

  it("masks the key wherever it shows up in the trace, the final text or the error", async () => {
    const { input } = await trial();
    const { executor } = pi(
      answers(
        assistant({
          content: [{ type: "text", text: `the key is ${KEY}` }],
          stopReason: "error",
          errorMessage: `401 invalid x-api-key ${KEY}`,
        }),
      ),
    );
    const receipt = await executor.run(input);
    expect(receipt.status).toBe("infra_error");
    expect(JSON.stringify(receipt)).not.toContain(KEY);
    expect(receipt.error).toContain("[REDACTED]");
  });
});

const failing = (message: Partial<AssistantMessage>): FakeBehaviour =>
  answers(assistant({ content: [], ...message }));

describe("PiExecutor classification", () => {
  it.each([
    {
      name: "a refused connection",
      behaviour: failing({ stopReason: "error", errorMessage: "Connection error." }),
      status: "infra_error",
      reason: "network_unreachable",
    },
    {
      name: "a rejected key",
      behaviour: failing({
        stopReason: "error",
        errorMessage: '401 {"type":"error","error":{"type":"authentication_error"}}',
      }),
      status: "infra_error",
      reason: "auth_missing",
    },
    {
      name: "a rate limit",
      behaviour: failing({ stopReason: "error", errorMessage: "429 rate_limit_error: slow down" }),
      status: "infra_error",
      reason: "rate_limited",
    },
    {
      name: "an empty credit balance",
      behaviour: failing({
        stopReason: "error",
        errorMessage: "400 Your credit balance is too low",
      }),
      status: "infra_error",
      reason: "quota_exhausted",
    },
    {
      name: "an unknown model",
      behaviour: failing({
        stopReason: "error",
        errorMessage: "404 not_found_error: model: claude-x",
      }),
      status: "infra_error",
      reason: "config_invalid",
    },
    {
      name: "a missing key found by Pi itself",
      behaviour: { prompt: () => Promise.reject(new Error("No API key found for anthropic.")) },
      status: "infra_error",
      reason: "auth_missing",
    },
    {
      name: "an answer cut at the token limit",
      behaviour: failing({ stopReason: "length" }),
      status: "limit_reached",
      reason: null,
    },
    {
      name: "a model error of its own",
      behaviour: failing({ stopReason: "error", errorMessage: "The model refused to answer." }),
      status: "agent_error",
      reason: null,
    },
    {
      name: "a session that never answers",
      behaviour: { prompt: async () => {} },
      status: "infra_error",
      reason: "protocol_mismatch",
    },
  ])("classifies $name as $status/$reason", async ({ behaviour, status, reason }) => {
    const { input } = await trial();
    const { executor } = pi(behaviour);
    const receipt = await executor.run(input);
    expect(runtimeReceiptSchema.safeParse(receipt).success).toBe(true);
    expect([receipt.status, receipt.infraReason]).toEqual([status, reason]);
  });

  it("reports no key as auth_missing without loading Pi, even when the harness's own environment has one", async () => {
    const { input } = await trial();
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = "harness-key-that-must-not-be-used";
    try {
      let loaded = false;
      const executor = new PiExecutor({
        env: {},
        loadSdk: async () => {
          loaded = true;
          return fakePi(answers()).sdk;
        },
      });
      const receipt = await executor.run(input);
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
      expect(loaded).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it("refuses a model of another provider and a missing SDK with typed reasons", async () => {
    const other = await trial({}, "openai/gpt-5");
    const { executor } = pi(answers());
    expect(await executor.run(other.input)).toMatchObject({
      status: "infra_error",
      infraReason: "config_invalid",
    });
    const { input } = await trial();
    const missing = new PiExecutor({
      env: { ANTHROPIC_API_KEY: KEY },
      loadSdk: () =>
        Promise.reject(new SdkMissingError("@mariozechner/pi-coding-agent", new Error("nope"))),
    });
    const receipt = await missing.run(input);
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "runtime_missing" });
    expect(receipt.error).toContain("npm install @mariozechner/pi-coding-agent");
  });
});

/** Waits for abort, then ends the answer the way Pi does. */
const untilAborted: FakeBehaviour = {
  prompt: async (session) => {
    await session.waitForAbort();
    session.emit(answer(assistant({ content: [], stopReason: "aborted" })));
  },
};

describe("PiExecutor deadlines", () => {
  it("aborts the session at the run's deadline and reports timeout", async () => {
    const { input } = await trial({ timeoutMs: 40 });
    const { executor, record } = pi(untilAborted);
    const receipt = await executor.run(input);
    expect(record.sessions[0]?.aborted).toBe(true);
    expect(receipt).toMatchObject({ status: "timeout", infraReason: null });
  });

  it("reports aborted when the caller's signal fires", async () => {
    const controller = new AbortController();
    const { input } = await trial({ signal: controller.signal });
    const { executor } = pi({
      prompt: async (session) => {
        setTimeout(() => controller.abort(), 10);
        await untilAborted.prompt(session);
      },
    });
    expect((await executor.run(input)).status).toBe("aborted");
  });

  it("stops waiting for a session that ignores the abort once the grace period is over", async () => {
    const { input } = await trial({ timeoutMs: 30 });
    const { executor } = pi({ prompt: () => new Promise(() => {}) }, { abortGraceMs: 30 });
    const receipt = await executor.run(input);
    expect(receipt.status).toBe("timeout");
    expect(receipt.trace.map((e) => e.type)).toContain("harness_abandoned");
  });
});
