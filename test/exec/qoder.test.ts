// The qoder executor against fake SDK modules that yield the SDK's own message types.
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SDKMessage } from "@qoder-ai/qoder-agent-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { createExecutor } from "../../src/exec/factory.js";
import {
  MINIMAL_SYSTEM_PROMPT,
  QODER_NOT_CONTAINABLE,
  QoderExecutor,
  type QoderExecutorOptions,
  resolveQoderAuth,
} from "../../src/exec/qoder/index.js";
import { runtimeReceiptSchema } from "../../src/exec/receipt.js";
import { SdkMissingError } from "../../src/exec/sdk/common.js";
import type { ExecutorRunInput, RuntimeSettings } from "../../src/exec/types.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { createUnsandboxed } from "../../src/sandbox/index.js";
import { testSandbox } from "../support/sandbox.js";
import {
  assistantMessage,
  CLI_VERSION,
  fakeQoderSdk,
  initMessage,
  modelUsage,
  PROCESS_TRANSPORT,
  type QueryCall,
  resultError,
  resultSuccess,
  type Script,
  SESSION_ID,
  simulateToolCall,
  toolResultMessage,
  usage,
  waitsForAbort,
} from "./qoder-sdk-fakes.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const TOKEN = "pat_qoder_fake_secret_0123456789abcdef";
const ENV = { PATH: "/usr/bin:/bin", LANG: "C.UTF-8", QODER_PERSONAL_ACCESS_TOKEN: TOKEN };

async function trial(
  runtime: Partial<RuntimeSettings> = {},
  extra: Partial<ExecutorRunInput> = {},
) {
  const base = await realpath(await mkdtemp(join(tmpdir(), "hl-qoder-")));
  dirs.push(base);
  const root = join(base, "root");
  const scratch = join(base, "scratch");
  await mkdir(join(root, "src"), { recursive: true });
  await mkdir(join(root, "test"), { recursive: true });
  await mkdir(scratch);
  await writeFile(join(root, "src", "index.js"), "export const add = (a, b) => a - b;\n");
  await writeFile(join(root, "test", "index.test.js"), "// the failing test\n");
  const cli = join(base, "qodercli.js");
  await writeFile(cli, "// stands in for the Qoder CLI entry\n");
  const settings: RuntimeSettings = {
    model: "performance",
    tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
    allowedTools: [],
    disallowedTools: ["WebFetch", "WebSearch", "Task"],
    permissionMode: "default",
    maxTurns: 24,
    ...runtime,
  };
  const policy = createToolPolicy({
    trialRoot: root,
    allowedWrites: ["src/index.js"],
    allowedCommands: [["npm", "test"]],
    tools: settings.tools,
  });
  const input: ExecutorRunInput = {
    prompt: "Fix the add function.",
    preamble: "",
    cwd: root,
    policy,
    timeoutMs: 20_000,
    scratchDir: scratch,
    // Qoder runs only without the OS sandbox (it refuses one; see QODER_NOT_CONTAINABLE).
    sandbox: createUnsandboxed(),
    runtime: settings,
    trialIndex: 2,
    variant: "verified",
    task: "fix-the-bug",
    ...extra,
  };
  return { base, root, scratch, cli, policy, input };
}

function executor(script: Script, cli: string, options: Partial<QoderExecutorOptions> = {}) {
  const fake = fakeQoderSdk(script);
  const ex = new QoderExecutor({
    sdk: fake.sdk,
    env: ENV,
    pathToQoderCLIExecutable: cli,
    ...options,
  });
  return { ex, calls: fake.calls };
}

async function* completes(): AsyncGenerator<SDKMessage, void> {
  yield initMessage();
  yield assistantMessage([{ type: "text", text: "Done." }]);
  yield resultSuccess();
}

function parsed(receipt: unknown) {
  return runtimeReceiptSchema.parse(receipt);
}

describe("QoderExecutor containment", () => {
  it("refuses to run inside the OS sandbox, saying why and what to do, before starting anything", async () => {
    const { input, cli } = await trial();
    const { ex, calls } = executor(completes, cli);
    const receipt = await ex.run({ ...input, sandbox: await testSandbox() });
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
    expect(receipt.error).toBe(QODER_NOT_CONTAINABLE);
    expect(calls).toHaveLength(0);
  });
});

describe("QoderExecutor options", () => {
  it("maps the default profile to query() exactly: the CLI's own prompt, no settings, no MCP, an ephemeral session", async () => {
    const { input, cli, root, scratch } = await trial();
    const { ex, calls } = executor(completes, cli);
    parsed(await ex.run(input));
    expect(calls).toHaveLength(1);
    const { options, prompt } = calls[0]!;
    const home = join(scratch, "home");
    expect(prompt).toBe("Fix the add function.");
    expect(options).toEqual({
      cwd: root,
      env: {
        PATH: "/usr/bin:/bin",
        LANG: "C.UTF-8",
        HOME: home,
        USERPROFILE: home,
        QODER_CONFIG_DIR: join(home, ".qoder"),
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_CACHE_HOME: join(home, ".cache"),
        XDG_DATA_HOME: join(home, ".local", "share"),
        XDG_STATE_HOME: join(home, ".local", "state"),
        TMPDIR: join(scratch, "tmp"),
        OTEL_SDK_DISABLED: "true",
        DO_NOT_TRACK: "1",
        NO_UPDATE_NOTIFIER: "1",
        npm_config_update_notifier: "false",
        npm_config_fund: "false",
        npm_config_audit: "false",
      },
      auth: { type: "accessToken", accessToken: TOKEN },
      transport: PROCESS_TRANSPORT,
      pathToQoderCLIExecutable: cli,
      abortController: expect.any(AbortController),
      tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
      allowedTools: [],
      disallowedTools: ["WebFetch", "WebSearch", "Task"],
      permissionMode: "default",
      canUseTool: expect.any(Function),
      hooks: { PreToolUse: [{ hooks: [expect.any(Function)] }] },
      settingSources: [],
      mcpServers: {},
      strictMcpConfig: true,
      persistSession: false,
      stderr: expect.any(Function),
      model: "performance",
      maxTurns: 24,
      systemPrompt: { type: "preset", preset: "qodercli" },
    });
  });

  it("maps the minimal profile to exactly Read, Write, Edit and Bash with its own short system prompt and no skills or plugins", async () => {
    const { input, cli } = await trial({ profile: "qoder-minimal-v1", allowedTools: ["Read"] });
    const { ex, calls } = executor(completes, cli);
    const receipt = parsed(await ex.run(input));
    const { options } = calls[0]!;
    expect(options.tools).toEqual(["Read", "Write", "Edit", "Bash"]);
    expect(options.allowedTools).toEqual(["Read"]);
    expect(options.systemPrompt).toBe(MINIMAL_SYSTEM_PROMPT);
    expect(MINIMAL_SYSTEM_PROMPT.length).toBeLessThan(600);
    expect(options).toMatchObject({
      skills: [],
      plugins: [],
      mcpServers: {},
      strictMcpConfig: true,
      settingSources: [],
      persistSession: false,
    });
    // The receipt names the tools the agent was really given.
    expect(receipt.settings.tools).toEqual(["Read", "Write", "Edit", "Bash"]);
    expect(receipt.trace[0]).toMatchObject({
      type: "harness_options",
      profile: "qoder-minimal-v1",
      authMethod: "personal-access-token",
      tools: ["Read", "Write", "Edit", "Bash"],
      systemPrompt: { type: "custom" },
    });
  });

  it("leaves model and turn limit to the CLI when the runtime names none, and passes a proxy", async () => {
    const { input, cli } = await trial({ model: undefined, maxTurns: undefined });
    const { ex, calls } = executor(completes, cli, { proxy: "http://127.0.0.1:3128" });
    await ex.run(input);
    const { options } = calls[0]!;
    expect(options).not.toHaveProperty("model");
    expect(options).not.toHaveProperty("maxTurns");
    expect(options.proxy).toBe("http://127.0.0.1:3128");
  });

  it("puts a separately given preamble in front of the prompt once, and leaves a composed prompt alone", async () => {
    const preamble = "Harness revision hr_x\n- [verify] run the tests\n";
    const { input, cli } = await trial({}, { preamble });
    const { ex, calls } = executor(completes, cli);
    await ex.run(input);
    await ex.run({ ...input, prompt: `${preamble.trimEnd()}\n\n---\n\nFix it.` });
    expect(calls[0]!.prompt).toBe(`${preamble.trimEnd()}\n\n---\n\nFix the add function.`);
    expect(calls[1]!.prompt).toBe(`${preamble.trimEnd()}\n\n---\n\nFix it.`);
  });

  it("finds the Qoder CLI entry in @qoder-ai/qodercli when no path is given", async () => {
    const { input } = await trial();
    const fake = fakeQoderSdk(completes);
    const receipt = parsed(await new QoderExecutor({ sdk: fake.sdk, env: ENV }).run(input));
    const expected = createRequire(import.meta.url).resolve(
      "@qoder-ai/qodercli/bundle/qodercli.js",
    );
    expect(fake.calls[0]!.options.pathToQoderCLIExecutable).toBe(expected);
    expect(receipt.executor).toMatchObject({
      host: "qoder",
      kind: "qoder-agent-sdk",
      package: "@qoder-ai/qoder-agent-sdk",
      packageVersion: expect.stringMatching(/^\d+\.\d+\.\d+/),
      agentVersion: CLI_VERSION,
    });
  });

  it("refuses an unknown profile, a permission mode that skips the callback, and a policy for another root, without starting the CLI", async () => {
    const cases: [Partial<RuntimeSettings>, Partial<ExecutorRunInput>, RegExp][] = [
      [{ profile: "qoder-turbo-v9" }, {}, /not a qoder profile/],
      [{ permissionMode: "bypassPermissions" }, {}, /without the harness's permission callback/],
      [{ permissionMode: "yolo" }, {}, /without the harness's permission callback/],
      [{ permissionMode: "sometimes" }, {}, /is not one Qoder knows/],
      [{}, { cwd: "/somewhere/else" }, /different trial root/],
    ];
    for (const [runtime, extra, message] of cases) {
      const { input, cli } = await trial(runtime, extra);
      const { ex, calls } = executor(completes, cli);
      const receipt = parsed(await ex.run(input));
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: "config_invalid" });
      expect(receipt.error).toMatch(message);
      expect(calls).toHaveLength(0);
    }
  });

  it("is what createExecutor returns for qoder", () => {
    expect(createExecutor("qoder")).toBeInstanceOf(QoderExecutor);
  });
});

describe("QoderExecutor authentication", () => {
  it("ends at once as auth_missing when no credential is configured, without loading the SDK", async () => {
    const { input, cli } = await trial();
    let loaded = false;
    const ex = new QoderExecutor({
      env: { PATH: "/usr/bin" },
      pathToQoderCLIExecutable: cli,
      loadSdk: async () => {
        loaded = true;
        throw new Error("must not load");
      },
    });
    const receipt = parsed(await ex.run(input));
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
    expect(receipt.error).toContain("QODER_PERSONAL_ACCESS_TOKEN");
    expect(loaded).toBe(false);
  });

  it("reads a token variable only from the executor's env, never from the harness's process.env", async () => {
    const { input, cli } = await trial();
    const saved = process.env.QODER_PERSONAL_ACCESS_TOKEN;
    process.env.QODER_PERSONAL_ACCESS_TOKEN = "pat_from_the_harness_environment_000";
    try {
      const { ex, calls } = executor(completes, cli, { env: { PATH: "/usr/bin" } });
      const receipt = parsed(await ex.run(input));
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
      expect(calls).toHaveLength(0);
    } finally {
      if (saved === undefined) delete process.env.QODER_PERSONAL_ACCESS_TOKEN;
      else process.env.QODER_PERSONAL_ACCESS_TOKEN = saved;
    }
  });

  it("passes the token to the SDK as a value, keeps it out of the CLI's environment, and masks it everywhere", async () => {
    const { input, cli } = await trial();
    async function* leaky(): AsyncGenerator<SDKMessage, void> {
      yield initMessage();
      yield assistantMessage([{ type: "text", text: `my token is ${TOKEN}` }]);
      yield resultSuccess({ result: `token ${TOKEN}` });
    }
    const { ex, calls } = executor(leaky, cli, {
      auth: { personalAccessTokenEnv: "MY_QODER_PAT" },
      env: { PATH: "/usr/bin", MY_QODER_PAT: TOKEN },
    });
    const receipt = parsed(await ex.run(input));
    const options = calls[0]!.options;
    expect(options.auth).toEqual({ type: "accessToken", accessToken: TOKEN });
    expect(Object.values(options.env ?? {})).not.toContain(TOKEN);
    expect(receipt.settings.envVarNames).not.toContain("MY_QODER_PAT");
    expect(JSON.stringify(receipt)).not.toContain(TOKEN);
    expect(receipt.finalText).toBe("token [REDACTED]");
  });

  it("resolves every configured form from the given env", () => {
    const env = {
      QODER_PERSONAL_ACCESS_TOKEN: "pat-a",
      QODER_SERVICE_ACCOUNT_KEY: "sa-b",
      X: "pat-c",
    };
    const summary = (
      auth: Parameters<typeof resolveQoderAuth>[0],
      from: NodeJS.ProcessEnv = env,
    ) => {
      const r = resolveQoderAuth(auth, from);
      return r.ok ? { kind: r.kind, sdkAuth: r.sdkAuth, envVar: r.envVar } : { fails: r.reason };
    };
    expect(summary(undefined)).toEqual({
      kind: "personal-access-token",
      sdkAuth: { type: "accessToken", accessToken: "pat-a" },
      envVar: "QODER_PERSONAL_ACCESS_TOKEN",
    });
    expect(summary(undefined, { QODER_SERVICE_ACCOUNT_KEY: "sa-b" })).toMatchObject({
      kind: "service-account",
      sdkAuth: { type: "serviceAccount", serviceAccountKey: "sa-b" },
    });
    expect(summary(undefined, {})).toEqual({ fails: "auth_missing" });
    expect(summary("qodercli-login")).toEqual({
      kind: "qodercli-login",
      sdkAuth: { type: "qodercli" },
      envVar: null,
    });
    expect(summary("service-account")).toMatchObject({ envVar: "QODER_SERVICE_ACCOUNT_KEY" });
    expect(summary({ personalAccessTokenEnv: "X" })).toMatchObject({
      sdkAuth: { type: "accessToken", accessToken: "pat-c" },
      envVar: "X",
    });
    expect(summary({ serviceAccountEnv: "MISSING" })).toEqual({ fails: "auth_missing" });
    // An SDK auth object's { envVar } is resolved here, from env, so the SDK never reads process.env.
    expect(summary({ type: "accessToken", accessToken: { envVar: "X" } })).toMatchObject({
      kind: "sdk-auth",
      sdkAuth: { type: "accessToken", accessToken: "pat-c" },
    });
    expect(summary({ type: "serviceAccount", serviceAccountKey: { envVar: "NOPE" } })).toEqual({
      fails: "auth_missing",
    });
    expect(summary({ type: "accessToken", accessToken: "literal-token" })).toMatchObject({
      kind: "sdk-auth",
    });
    expect(summary({ nonsense: true } as never)).toEqual({ fails: "config_invalid" });
  });

  it("points the CLI at the given config directory for a qodercli login, and at the isolated one otherwise", async () => {
    const { input, cli, scratch } = await trial();
    const first = executor(completes, cli, { auth: "qodercli-login" });
    await first.ex.run(input);
    expect(first.calls[0]!.options.env?.QODER_CONFIG_DIR).toBe(join(scratch, "home", ".qoder"));
    const second = executor(completes, cli, {
      auth: "qodercli-login",
      qodercliConfigDir: "/home/someone/.qoder",
    });
    await second.ex.run(input);
    expect(second.calls[0]!.options.env?.QODER_CONFIG_DIR).toBe("/home/someone/.qoder");
    expect(second.calls[0]!.options.auth).toEqual({ type: "qodercli" });
  });
});

describe("QoderExecutor receipts", () => {
  it("records a completed run: session, versions, models, tokens over every model, credits, turns, durations, tool calls, final text", async () => {
    const { input, cli } = await trial();
    async function* run({ options }: QueryCall): AsyncGenerator<SDKMessage, void> {
      yield initMessage();
      // One assistant message split in two parts (same id, same usage), with one tool call.
      const part = { id: "msg-1", usage: { input_tokens: 10, output_tokens: 5 } };
      yield assistantMessage([{ type: "text", text: "Reading." }], part);
      yield assistantMessage(
        [{ type: "tool_use", id: "tu-1", name: "Read", input: { file_path: "src/index.js" } }],
        part,
      );
      await simulateToolCall(options, "tu-1", "Read", { file_path: "src/index.js" });
      yield toolResultMessage("tu-1", "export const add = …");
      yield assistantMessage([{ type: "text", text: "Fixed it." }], { model: "qoder-lite" });
      yield resultSuccess({
        num_turns: 3,
        duration_ms: 4200,
        duration_api_ms: 3100,
        result: "Fixed the subtraction in add().",
        total_cost_usd: 0,
        total_credits: 12.5,
        modelUsage: {
          "qoder-performance-model": modelUsage({
            inputTokens: 100,
            outputTokens: 40,
            cacheReadInputTokens: 7,
            cacheCreationInputTokens: 3,
            credits: 10,
          }),
          "qoder-lite": modelUsage({ inputTokens: 20, outputTokens: 2, credits: 2.5 }),
        },
      });
    }
    const { ex } = executor(run, cli);
    const receipt = parsed(await ex.run(input));
    expect(receipt).toMatchObject({
      status: "completed",
      infraReason: null,
      error: null,
      sessionId: SESSION_ID,
      executor: { agentVersion: CLI_VERSION },
      model: { requested: "performance", effective: ["qoder-lite", "qoder-performance-model"] },
      tokens: { uncachedInput: 120, cacheRead: 7, cacheWrite: 3, output: 42, reasoning: null },
      credits: 12.5,
      // Zero dollars next to a credit bill is not a price.
      costUsd: null,
      turns: 3,
      durations: { agentMs: 4200, apiMs: 3100 },
      toolCalls: 1,
      finalText: "Fixed the subtraction in add().",
      trial: { task: "fix-the-bug", variant: "verified", index: 2 },
      settings: { permissionMode: "default", maxTurns: 24, timeoutMs: 20_000, agent: null },
    });
    expect(receipt.settings.envVarNames).toContain("HOME");
    expect(receipt.settings.envVarNames).not.toContain("QODER_PERSONAL_ACCESS_TOKEN");
    expect(receipt.trace.map((e) => e.type)).toEqual([
      "harness_options",
      "system:init",
      "assistant",
      "assistant",
      "harness_permission",
      "harness_permission",
      "user",
      "assistant",
      "result:success",
    ]);
  });

  it("sums per-model credits when no session total is reported, reports a real dollar cost, and leaves both null when absent", async () => {
    const { input, cli } = await trial();
    const withModels = executor(async function* () {
      yield initMessage();
      yield resultSuccess({
        total_cost_usd: 0.42,
        modelUsage: {
          m: modelUsage({ inputTokens: 1, credits: 1.25 }),
          n: modelUsage({ credits: 2 }),
        },
      });
    }, cli);
    expect(parsed(await withModels.ex.run(input))).toMatchObject({ credits: 3.25, costUsd: 0.42 });

    const bare = executor(async function* () {
      yield initMessage();
      yield resultSuccess({
        total_cost_usd: 0,
        usage: usage({ input_tokens: 9, output_tokens: 4 }),
      });
    }, cli);
    expect(parsed(await bare.ex.run(input))).toMatchObject({
      credits: null,
      costUsd: 0,
      tokens: { uncachedInput: 9, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: null },
    });
  });

  it("counts tokens from the assistant messages (once per message id) when the run ends without a result", async () => {
    const { input, cli } = await trial();
    const { ex } = executor(async function* () {
      yield initMessage();
      const part = { id: "msg-9", usage: { input_tokens: 30, output_tokens: 8 } };
      yield assistantMessage([{ type: "text", text: "Half" }], part);
      yield assistantMessage([{ type: "text", text: "way" }], part);
      throw Object.assign(new Error("Qoder CLI process exited with code 1"), {
        name: "QoderCliProcessError",
        code: "QODER_CLI_PROCESS_ERROR",
        stderr: "Error: connect ECONNREFUSED 127.0.0.1:9",
      });
    }, cli);
    const receipt = parsed(await ex.run(input));
    expect(receipt).toMatchObject({
      status: "infra_error",
      infraReason: "network_unreachable",
      tokens: { uncachedInput: 30, output: 8 },
      finalText: "way",
    });
  });

  it("masks credentials in the trace, keeps an object referenced twice and marks only a true cycle", async () => {
    const { input, cli } = await trial();
    const shared = { note: "same object twice" };
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const { ex } = executor(async function* () {
      yield initMessage();
      const message = assistantMessage([{ type: "text", text: `Authorization: Bearer ${TOKEN}` }]);
      yield {
        ...message,
        extra: { first: shared, second: shared, cyclic, apiKey: "k-123456789" },
      } as unknown as SDKMessage;
      yield resultSuccess();
    }, cli);
    const receipt = parsed(await ex.run(input));
    const event = receipt.trace.find((e) => e.type === "assistant") as Record<string, unknown>;
    expect(event.extra).toEqual({
      first: { note: "same object twice" },
      second: { note: "same object twice" },
      cyclic: { name: "loop", self: "[Circular]" },
      apiKey: "[REDACTED]",
    });
    expect(JSON.stringify(receipt)).not.toContain(TOKEN);
    expect(JSON.stringify(event)).toContain("[REDACTED]");
  });
});

describe("QoderExecutor permission callback", () => {
  it("puts every call to the policy through the PreToolUse hook and records it once when canUseTool asks again", async () => {
    const { input, cli, root, policy } = await trial();
    async function* run({ options }: QueryCall): AsyncGenerator<SDKMessage, void> {
      yield initMessage();
      yield assistantMessage([
        {
          type: "tool_use",
          id: "tu-w",
          name: "Write",
          input: { file_path: "src/index.js", content: "fixed\n" },
        },
      ]);
      const call = await simulateToolCall(options, "tu-w", "Write", {
        file_path: "src/index.js",
        content: "export const add = (a, b) => a + b;\n",
      });
      expect(call.hook?.hookSpecificOutput).toEqual({ hookEventName: "PreToolUse" });
      expect(call.permission).toEqual({
        behavior: "allow",
        updatedInput: {
          file_path: join(root, "src", "index.js"),
          content: "export const add = (a, b) => a + b;\n",
        },
        permissionScope: "once",
      });
      yield toolResultMessage("tu-w", "written");
      yield resultSuccess();
    }
    const { ex } = executor(run, cli);
    const receipt = parsed(await ex.run(input));
    expect(receipt.status).toBe("completed");
    expect(await readFile(join(root, "src", "index.js"), "utf8")).toBe(
      "export const add = (a, b) => a + b;\n",
    );
    expect(policy.decisions()).toEqual([
      expect.objectContaining({ seq: 1, tool: "Write", decision: "allow", rule: "allowed" }),
    ]);
    const gateEvents = receipt.trace.filter((e) => e.type === "harness_permission");
    expect(gateEvents).toEqual([
      expect.objectContaining({ via: "hook", toolUseId: "tu-w", decision: "allow", reused: false }),
      expect.objectContaining({
        via: "canUseTool",
        toolUseId: "tu-w",
        decision: "allow",
        reused: true,
      }),
    ]);
    expect(receipt.trace.some((e) => e.type === "harness_unchecked_tool_call")).toBe(false);
  });

  it("denies what the policy refuses with its reason; the file stays untouched and the denial reaches the receipt", async () => {
    const { input, cli, root } = await trial();
    async function* run({ options }: QueryCall): AsyncGenerator<SDKMessage, void> {
      yield initMessage();
      const testFile = { file_path: "test/index.test.js", content: "// deleted the test\n" };
      yield assistantMessage([{ type: "tool_use", id: "tu-t", name: "Write", input: testFile }]);
      const write = await simulateToolCall(options, "tu-t", "Write", testFile);
      expect(write.ran).toBe(false);
      expect(write.hook?.hookSpecificOutput).toMatchObject({
        permissionDecision: "deny",
        permissionDecisionReason: expect.stringContaining("(write-not-allowed)"),
      });
      yield toolResultMessage("tu-t", "denied", true);
      const curl = { command: "curl https://example.com" };
      yield assistantMessage([{ type: "tool_use", id: "tu-c", name: "Bash", input: curl }]);
      const bash = await simulateToolCall(options, "tu-c", "Bash", curl, { skipHook: true });
      expect(bash.permission).toEqual({
        behavior: "deny",
        message: expect.stringContaining("(command-not-allowed)"),
      });
      yield toolResultMessage("tu-c", "denied", true);
      yield resultSuccess({ result: "Could not do it." });
    }
    const { ex } = executor(run, cli);
    const receipt = parsed(await ex.run(input));
    expect(await readFile(join(root, "test", "index.test.js"), "utf8")).toBe(
      "// the failing test\n",
    );
    expect(receipt.toolCalls).toBe(2);
    expect(receipt.permissionDenials).toEqual([
      expect.objectContaining({ tool: "Write", decision: "deny", rule: "write-not-allowed" }),
      expect.objectContaining({ tool: "Bash", decision: "deny", rule: "command-not-allowed" }),
    ]);
  });

  it("decides again when canUseTool sees a changed input for the same call", async () => {
    const { input, cli, policy } = await trial();
    async function* run({ options }: QueryCall): AsyncGenerator<SDKMessage, void> {
      yield initMessage();
      const hook = options.hooks!.PreToolUse![0]!.hooks[0]!;
      await hook(
        {
          hook_event_name: "PreToolUse",
          session_id: SESSION_ID,
          transcript_path: "",
          cwd: "",
          tool_name: "Read",
          tool_input: { file_path: "src/index.js" },
          tool_use_id: "tu-r",
        },
        "tu-r",
        { signal: new AbortController().signal },
      );
      const answer = await options.canUseTool!(
        "Read",
        { file_path: "../outside.txt" },
        { signal: new AbortController().signal, toolUseID: "tu-r" },
      );
      expect(answer.behavior).toBe("deny");
      yield resultSuccess();
    }
    const { ex } = executor(run, cli);
    await ex.run(input);
    expect(policy.decisions().map((d) => [d.decision, d.rule])).toEqual([
      ["allow", "allowed"],
      ["deny", "path-outside-root"],
    ]);
  });

  it("flags a tool call the CLI answered without ever asking the policy", async () => {
    const { input, cli } = await trial();
    const { ex } = executor(async function* () {
      yield initMessage();
      yield assistantMessage([
        { type: "tool_use", id: "tu-x", name: "Read", input: { file_path: "src/index.js" } },
      ]);
      yield toolResultMessage("tu-x", "contents");
      yield resultSuccess();
    }, cli);
    const receipt = parsed(await ex.run(input));
    expect(receipt.trace).toContainEqual({
      type: "harness_unchecked_tool_call",
      toolUseId: "tu-x",
    });
  });
});

function cliProcessError(stderr: string) {
  return Object.assign(new Error("Qoder CLI process exited with code 1"), {
    name: "QoderCliProcessError",
    code: "QODER_CLI_PROCESS_ERROR",
    exitCode: 1,
    stderr,
  });
}

function throwing(error: unknown, afterInit = false): Script {
  return async function* () {
    if (afterInit) yield initMessage();
    throw error;
  };
}

function messages(...items: SDKMessage[]): Script {
  return async function* () {
    yield* items;
  };
}

describe("QoderExecutor classification", () => {
  const cases: [string, Script, { status: string; infraReason?: string | null }][] = [
    [
      "the SDK's auth_not_configured error",
      throwing(
        Object.assign(new Error("The auth option is required"), {
          name: "AuthNotConfiguredError",
          code: "auth_not_configured",
        }),
      ),
      { status: "infra_error", infraReason: "auth_missing" },
    ],
    [
      "AuthAccessTokenEnvVarError",
      throwing(
        Object.assign(new Error('The auth access token environment variable "X" is not set'), {
          name: "AuthAccessTokenEnvVarError",
          code: "auth_access_token_env_var_not_configured",
        }),
      ),
      { status: "infra_error", infraReason: "auth_missing" },
    ],
    [
      "a missing qodercli login (an error result, not a throw)",
      messages(
        resultError("error_during_execution", [
          'No qodercli login found. Run "qodercli login" first.',
        ]),
      ),
      { status: "infra_error", infraReason: "auth_missing" },
    ],
    [
      "an assistant authentication_failed error",
      messages(
        initMessage(),
        assistantMessage([{ type: "text", text: "Invalid API key" }], {
          error: "authentication_failed",
        }),
        resultSuccess({ is_error: true, result: "Invalid API key", terminal_reason: "api_error" }),
      ),
      { status: "infra_error", infraReason: "auth_missing" },
    ],
    [
      "a CLI that dies at DNS (NetworkAttemptError)",
      throwing(
        cliProcessError(
          "An unexpected critical error occurred:\nNetworkAttemptError: Network attempt failed at dns",
        ),
      ),
      { status: "infra_error", infraReason: "network_unreachable" },
    ],
    [
      "a CLI that dies for a reason stderr does not name",
      throwing(cliProcessError("Segmentation fault")),
      { status: "infra_error", infraReason: "spawn_failed" },
    ],
    [
      "a CLI rejecting the token",
      throwing(cliProcessError("Error: 401 Unauthorized: invalid personal access token")),
      { status: "infra_error", infraReason: "auth_missing" },
    ],
    [
      "the worker runtime not found",
      throwing(
        Object.assign(new Error("Qoder worker runtime not found"), {
          name: "QoderWorkerRuntimeError",
          code: "QODER_WORKER_RUNTIME_ERROR",
        }),
      ),
      { status: "infra_error", infraReason: "runtime_missing" },
    ],
    [
      "a wire protocol mismatch",
      throwing(
        Object.assign(new Error("protocol 2.0.0 vs 1.0.0"), {
          name: "ProtocolVersionMismatchError",
        }),
      ),
      { status: "infra_error", infraReason: "protocol_mismatch" },
    ],
    [
      "a stream that ends without a result",
      messages(initMessage()),
      { status: "infra_error", infraReason: "protocol_mismatch" },
    ],
    [
      "a message that is not an SDK message",
      async function* () {
        yield "garbage" as unknown as SDKMessage;
      },
      { status: "infra_error", infraReason: "protocol_mismatch" },
    ],
    [
      "API retries on 429 that end in an error result",
      messages(
        initMessage(),
        {
          type: "system",
          subtype: "api_retry",
          attempt: 3,
          max_retries: 3,
          retry_delay_ms: 1000,
          error_status: 429,
          error: "rate_limit",
          uuid: "u-r",
          session_id: SESSION_ID,
        },
        resultSuccess({ is_error: true, result: "API Error", terminal_reason: "api_error" }),
      ),
      { status: "infra_error", infraReason: "rate_limited" },
    ],
    [
      "an assistant billing_error",
      messages(
        initMessage(),
        assistantMessage([{ type: "text", text: "Your plan is out of credits" }], {
          error: "billing_error",
        }),
        resultSuccess({ is_error: true, result: "Your plan is out of credits" }),
      ),
      { status: "infra_error", infraReason: "quota_exhausted" },
    ],
    [
      "quota wording in an error result",
      messages(
        initMessage(),
        resultError("error_during_execution", [
          "Insufficient credits: quota exceeded for this month",
        ]),
      ),
      { status: "infra_error", infraReason: "quota_exhausted" },
    ],
    [
      "the turn limit",
      messages(
        initMessage(),
        resultError("error_max_turns", [], { num_turns: 24, terminal_reason: "max_turns" }),
      ),
      { status: "limit_reached", infraReason: null },
    ],
    [
      "an execution error of the agent's own",
      messages(initMessage(), resultError("error_during_execution", ["Tool loop detected"])),
      { status: "agent_error", infraReason: null },
    ],
    [
      "an unknown throw after the CLI came up",
      throwing(new Error("something odd"), true),
      { status: "agent_error", infraReason: null },
    ],
    [
      "an unknown throw before the CLI came up",
      throwing(new Error("something odd")),
      { status: "infra_error", infraReason: "spawn_failed" },
    ],
  ];

  for (const [name, script, expected] of cases) {
    it(`classifies ${name}`, async () => {
      const { input, cli } = await trial();
      const receipt = parsed(await executor(script, cli).ex.run(input));
      expect(receipt).toMatchObject(expected);
    });
  }

  it("keeps the error result (turns, session) when the SDK throws after yielding it", async () => {
    const { input, cli } = await trial();
    const { ex } = executor(async function* () {
      yield initMessage();
      yield resultError("error_max_turns", [], { num_turns: 24, terminal_reason: "max_turns" });
      throw cliProcessError("exited after the result");
    }, cli);
    const receipt = parsed(await ex.run(input));
    expect(receipt).toMatchObject({ status: "limit_reached", turns: 24, sessionId: SESSION_ID });
    expect(receipt.trace.at(-1)).toMatchObject({ type: "sdk_error_after_result" });
  });

  it("names the stderr line that explains a dead CLI in the error", async () => {
    const { input, cli } = await trial();
    const stderr =
      "An unexpected critical error occurred:\nNetworkAttemptError: Network attempt failed at dns\n    at r3A.execute (qodercli.js:2:1)";
    const receipt = parsed(await executor(throwing(cliProcessError(stderr)), cli).ex.run(input));
    expect(receipt.error).toBe(
      "Qoder CLI process exited with code 1: NetworkAttemptError: Network attempt failed at dns",
    );
  });

  it("reports a missing CLI as binary_missing and a missing SDK package as runtime_missing", async () => {
    const { input, base } = await trial();
    const noCli = executor(completes, join(base, "nowhere", "qodercli.js"));
    expect(parsed(await noCli.ex.run(input))).toMatchObject({
      status: "infra_error",
      infraReason: "binary_missing",
    });
    expect(noCli.calls).toHaveLength(0);

    const { cli } = await trial();
    const noSdk = new QoderExecutor({
      env: ENV,
      pathToQoderCLIExecutable: cli,
      loadSdk: () =>
        Promise.reject(new SdkMissingError("@qoder-ai/qoder-agent-sdk", new Error("not found"))),
    });
    const receipt = parsed(await noSdk.run(input));
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "runtime_missing" });
    expect(receipt.error).toContain("npm install @qoder-ai/qoder-agent-sdk");
  });
});

describe("QoderExecutor deadlines", () => {
  it("aborts the SDK at the run's deadline and reports timeout", async () => {
    const { input, cli } = await trial({}, { timeoutMs: 50 });
    const receipt = parsed(await executor(waitsForAbort, cli).ex.run(input));
    expect(receipt).toMatchObject({ status: "timeout", infraReason: null });
    expect(receipt.error).toContain("50 ms");
  });

  it("reports aborted when the caller's signal fires, and never starts when it already has", async () => {
    const { input, cli } = await trial();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const running = executor(waitsForAbort, cli);
    expect(parsed(await running.ex.run({ ...input, signal: controller.signal })).status).toBe(
      "aborted",
    );

    const idle = executor(completes, cli);
    const receipt = parsed(await idle.ex.run({ ...input, signal: AbortSignal.abort() }));
    expect(receipt.status).toBe("aborted");
    expect(idle.calls).toHaveLength(0);
  });

  it("stops waiting for an SDK that ignores the abort once the grace period is over", async () => {
    const { input, cli } = await trial({}, { timeoutMs: 30 });
    const { ex } = executor(
      async function* () {
        yield initMessage();
        await new Promise(() => {});
      },
      cli,
      { abortGraceMs: 20 },
    );
    const receipt = parsed(await ex.run(input));
    expect(receipt.status).toBe("timeout");
    expect(receipt.trace.some((e) => e.type === "harness_abandoned")).toBe(true);
  });

  it("keeps a result that arrived before the deadline fired", async () => {
    const { input, cli } = await trial({}, { timeoutMs: 40 });
    const { ex } = executor(async function* () {
      yield initMessage();
      yield resultSuccess({ result: "quick" });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }, cli);
    const receipt = parsed(await ex.run(input));
    expect(receipt).toMatchObject({ status: "completed", finalText: "quick" });
  });
});
