// The `codex` host: drives the Codex CLI through `@openai/codex-sdk`. Codex has no permission
// callback, so the run is confined by Codex's own sandbox (workspace-write, no network, no
// approvals) and every call the model made is audited against the trial's policy when the run
// ends, from the CLI's session rollout; a violation fails the trial (see docs/hosts/codex.md).
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { PolicyDecision } from "../../policy/index.js";
import { shellQuote } from "../../shared/index.js";
import type { InfraReason, ReceiptStatus, RuntimeReceipt } from "../receipt.js";
import { secretValuesFromEnv } from "../redact.js";
import { errorMessage, stoppedOutcome } from "../sdk/classify.js";
import {
  addTokens,
  buildAgentEnv,
  isolatedHome,
  loadOptionalSdk,
  policyRootMismatch,
  promptWithPreamble,
  ReceiptBuilder,
  type RunDeadline,
  runDeadline,
  SdkMissingError,
  scratchTmpDir,
} from "../sdk/common.js";
import { CREDENTIAL_PLACEHOLDER, containHost } from "../sdk/contained.js";
import { setupFailure } from "../setup/contract.js";
import type { Executor, ExecutorRunInput } from "../types.js";
import {
  type AuditCall,
  auditCalls,
  isToolCallItem,
  rolloutAuditCalls,
  serverNamed,
} from "./audit.js";
import { locateCodexBinary, preflight } from "./binary.js";
import { classifyCodexFailure, reconnectKind } from "./classify.js";
import { codexConfig, ENDPOINT_KEY_VARIABLE, toToml } from "./config.js";
import { readRollout } from "./rollout.js";
import type {
  CodexClientOptions,
  CodexSdkModule,
  CodexThreadEvent,
  CodexThreadItem,
  CodexThreadLike,
  CodexThreadOptions,
} from "./sdk-types.js";
import { type CodexSetupRun, prepareCodexSetup } from "./setup.js";

export const CODEX_SDK_PACKAGE = "@openai/codex-sdk";

/** Credential and endpoint variables the Codex CLI may see (when set in the source env). */
const CODEX_ENV_VARIABLES = ["OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"] as const;

/** A custom OpenAI Responses-compatible endpoint (a proxy, a gateway, a loopback test server). */
export interface CodexEndpoint {
  /** Base URL including the API version path, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /**
   * Sent as `Authorization: Bearer …`. Default: OPENAI_API_KEY or CODEX_API_KEY from the source
   * environment; with neither, requests carry no key (a local server that needs none).
   */
  apiKey?: string;
  /** Codex's own retries per request and per stream before it reports an error. Default 2. */
  maxRetries?: number;
}

export interface CodexExecutorOptions {
  /** The SDK module, or a loader for it. Default: `import("@openai/codex-sdk")` on first use. */
  sdk?: CodexSdkModule | (() => Promise<CodexSdkModule>);
  /** The Codex binary; default: the one the installed SDK runs. */
  pathToExecutable?: string;
  /** Where credential and endpoint variables are read from. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Model endpoint; default: OPENAI_BASE_URL from `env` when set, else OpenAI itself. */
  endpoint?: CodexEndpoint;
  /**
   * A CODEX_HOME (e.g. `~/.codex`) whose `auth.json` is copied into the run's isolated home, to
   * use an existing `codex login` (ChatGPT sign-in). Nothing else of it is read.
   */
  loginFrom?: string;
  /** Strings masked in the receipt; default: credential values of `env` and the endpoint key. */
  secretValues?: readonly string[];
  /**
   * `Reconnecting...` errors after a network failure that end the run as `network_unreachable`
   * once the agent has made progress. Before any progress the first one ends it. Default 3.
   */
  reconnectLimit?: number;
  /** After the run is aborted, how long to wait for the CLI to exit. Default 5000 ms. */
  abortGraceMs?: number;
}

type EarlyStop = { status: ReceiptStatus; infraReason?: InfraReason; error: string };

interface Violation {
  seq: number;
  item: string;
  tool: string;
  rule: string;
  reason: string;
}

/** Rollout item types that the event stream also reports as items. */
const REPORTED_ACTIONS = new Set(["CommandExecution", "FileChange", "McpToolCall", "WebSearch"]);

const SUPPORTED_PERMISSION_MODES = new Set(["default", "plan"]);

export class CodexExecutor implements Executor {
  readonly host = "codex" as const;

  constructor(private readonly options: CodexExecutorOptions = {}) {}

  private async loadSdk(): Promise<CodexSdkModule> {
    const given = this.options.sdk;
    if (typeof given === "function") return given();
    if (given) return given;
    return loadOptionalSdk<CodexSdkModule>(CODEX_SDK_PACKAGE);
  }

  async run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
    if (this.host !== "codex") throw new Error("CodexExecutor runs the codex host only");
    const startedMs = performance.now();
    const source = this.options.env ?? process.env;
    const endpoint =
      this.options.endpoint ??
      (source.OPENAI_BASE_URL ? { baseUrl: source.OPENAI_BASE_URL } : undefined);
    const sourceKey = source.OPENAI_API_KEY || source.CODEX_API_KEY || undefined;
    const endpointKey = endpoint ? (endpoint.apiKey ?? sourceKey) : undefined;
    const secretValues = this.options.secretValues ?? [
      ...secretValuesFromEnv(source),
      ...(endpointKey ? [endpointKey] : []),
    ];

    const home = join(input.scratchDir, "home");
    const codexHome = join(home, ".codex");
    const overrides: Record<string, string> = { HOME: home, CODEX_HOME: codexHome };
    // `codex exec` authenticates with CODEX_API_KEY; an OPENAI_API_KEY alone stands in for it.
    if (!endpoint && !source.CODEX_API_KEY && source.OPENAI_API_KEY) {
      overrides.CODEX_API_KEY = source.OPENAI_API_KEY;
    }
    if (endpointKey) overrides[ENDPOINT_KEY_VARIABLE] = endpointKey;
    const env = buildAgentEnv(CODEX_ENV_VARIABLES, overrides, source);

    const builder = new ReceiptBuilder({
      host: "codex",
      kind: "codex-sdk",
      packageName: CODEX_SDK_PACKAGE,
      agentVersion: null,
      input,
      envVarNames: Object.keys(env),
      startedMs,
      secretValues,
    });
    const fail = (status: ReceiptStatus, error: string, infraReason?: InfraReason) => {
      builder.event("harness.stopped", { status, infraReason: infraReason ?? null, error });
      return builder.finish(status, { error, ...(infraReason ? { infraReason } : {}) });
    };

    // Settings the executor cannot honour are refused before anything starts.
    const rootMismatch = policyRootMismatch(input);
    if (rootMismatch !== null) return fail("infra_error", rootMismatch, "config_invalid");
    const mode = input.runtime.permissionMode ?? "default";
    if (!SUPPORTED_PERMISSION_MODES.has(mode)) {
      return fail(
        "infra_error",
        `permission mode ${JSON.stringify(mode)} has no Codex equivalent (supported: default, plan)`,
        "config_invalid",
      );
    }
    if (input.runtime.profile !== undefined) {
      return fail(
        "infra_error",
        `the codex host has no runtime profile ${JSON.stringify(input.runtime.profile)}`,
        "config_invalid",
      );
    }
    if (endpoint && !/^https?:\/\/[^/\s]+/.test(endpoint.baseUrl)) {
      return fail(
        "infra_error",
        `the endpoint base URL ${JSON.stringify(endpoint.baseUrl)} is not an http(s) URL`,
        "config_invalid",
      );
    }
    if (input.signal?.aborted) return fail("aborted", "aborted before the agent started");

    // One deadline for the whole run, pre-flight included.
    const deadline = runDeadline(input);
    try {
      return await this.start(input, builder, fail, deadline, {
        env,
        endpoint,
        endpointKey,
        mode,
        codexHome,
      });
    } catch (error) {
      // A harness-side step (creating the isolated home, writing the config) broke.
      return fail(
        "infra_error",
        `the codex executor failed: ${errorMessage(error)}`,
        "spawn_failed",
      );
    } finally {
      deadline.dispose();
    }
  }

  private async start(
    input: ExecutorRunInput,
    builder: ReceiptBuilder,
    fail: (status: ReceiptStatus, error: string, infraReason?: InfraReason) => RuntimeReceipt,
    deadline: RunDeadline,
    run: {
      env: Record<string, string>;
      endpoint: CodexEndpoint | undefined;
      endpointKey: string | undefined;
      mode: string;
      codexHome: string;
    },
  ): Promise<RuntimeReceipt> {
    const { env, endpoint, endpointKey, mode, codexHome } = run;
    await isolatedHome(input.scratchDir, ".codex");
    let sdk: CodexSdkModule;
    try {
      sdk = await this.loadSdk();
    } catch (error) {
      const missing = error instanceof SdkMissingError;
      return fail("infra_error", errorMessage(error), missing ? "runtime_missing" : "spawn_failed");
    }

    const located = this.options.pathToExecutable
      ? { ok: true as const, path: this.options.pathToExecutable }
      : locateCodexBinary();
    if (!located.ok) return fail("infra_error", located.error, "binary_missing");

    if (this.options.loginFrom !== undefined) {
      try {
        await copyFile(join(this.options.loginFrom, "auth.json"), join(codexHome, "auth.json"));
      } catch (error) {
        return fail(
          "infra_error",
          `cannot copy the Codex login from ${this.options.loginFrom}/auth.json: ${errorMessage(error)}`,
          "auth_missing",
        );
      }
    }

    const checked = await preflight(
      located.path,
      env,
      input.scratchDir,
      deadline.controller.signal,
    );
    const stopped = deadline.why();
    if (stopped === "timeout") {
      return fail("timeout", `the run exceeded its ${input.timeoutMs} ms budget in the pre-flight`);
    }
    if (stopped === "aborted") return fail("aborted", "the run was aborted in the pre-flight");
    if (!checked.ok) return fail("infra_error", checked.error, checked.infraReason);
    builder.agentVersion = checked.version;
    builder.event("harness.preflight", {
      version: checked.version,
      loggedIn: checked.loggedIn,
      login: checked.loginText,
      apiKey: Boolean(env.CODEX_API_KEY || env.OPENAI_API_KEY),
      endpoint: endpoint ? endpoint.baseUrl : null,
    });
    if (!checked.loggedIn && !env.CODEX_API_KEY && !env.OPENAI_API_KEY && !endpoint) {
      return fail(
        "infra_error",
        `Codex has no credentials: \`codex login status\` says "${checked.loginText || "not logged in"}" in the isolated CODEX_HOME and neither OPENAI_API_KEY nor CODEX_API_KEY is set (or pass loginFrom / an endpoint)`,
        "auth_missing",
      );
    }

    let setup: CodexSetupRun | undefined;
    if ((input.setup ?? []).length > 0) {
      try {
        setup = await prepareCodexSetup({
          setup: input.setup ?? [],
          sandbox: input.sandbox,
          cwd: input.cwd,
          scratchDir: input.scratchDir,
          signal: deadline.controller.signal,
          codexHome,
          contained: input.sandbox.kind !== "none",
          privateDir: dirname(input.scratchDir),
          commandsReachLoopback: false,
        });
      } catch (error) {
        return fail(
          "infra_error",
          `cannot prepare the variant's setup for Codex: ${errorMessage(error)}`,
          "setup_failed",
        );
      }
      const ready = setup;
      builder.setupReports = () => ready.reports();
      const fatal = setup.fatalBeforeStart();
      if (fatal.length > 0) {
        await setup.close();
        return fail("infra_error", setupFailure(fatal), "setup_failed");
      }
    }
    try {
      return await this.startContained(input, builder, fail, deadline, {
        ...run,
        sdk,
        binary: located.path,
        setup,
      });
    } finally {
      await setup?.close();
    }
  }

  private async startContained(
    input: ExecutorRunInput,
    builder: ReceiptBuilder,
    fail: (status: ReceiptStatus, error: string, infraReason?: InfraReason) => RuntimeReceipt,
    deadline: RunDeadline,
    run: {
      env: Record<string, string>;
      endpoint: CodexEndpoint | undefined;
      endpointKey: string | undefined;
      mode: string;
      codexHome: string;
      sdk: CodexSdkModule;
      binary: string;
      setup: CodexSetupRun | undefined;
    },
  ): Promise<RuntimeReceipt> {
    const { env, endpoint, endpointKey, mode, codexHome, sdk, setup } = run;
    const contained = await this.contain(input, run.binary, {
      env,
      endpoint,
      endpointKey,
      setup,
    });
    if (!contained.ok) return fail("infra_error", contained.error, contained.infraReason);
    try {
      const sandboxMode = mode === "plan" ? "read-only" : "workspace-write";
      const runEndpoint = contained.endpoint ?? endpoint;
      const config = codexConfig({
        ...(input.runtime.model === undefined ? {} : { model: input.runtime.model }),
        sandboxMode,
        ...(runEndpoint
          ? {
              endpoint: {
                baseUrl: runEndpoint.baseUrl,
                withKey: endpointKey !== undefined || contained.endpoint?.withKey === true,
                maxRetries: endpoint?.maxRetries ?? 2,
              },
            }
          : {}),
        ...(input.forge
          ? {
              forge: {
                ...(input.forge.mcp
                  ? { mcp: { server: input.forge.mcp.server, url: input.forge.endpoint.url } }
                  : {}),
                env: input.forge.env,
                commandsReachLoopback: false,
              },
            }
          : {}),
        ...(setup === undefined ? {} : { setupMcpServers: setup.mcpServers }),
      });
      await writeFile(join(codexHome, "config.toml"), toToml(config));
      const receipt = await this.startThread(sdk, input, builder, deadline, {
        sandboxMode,
        codexHome,
        clientOptions: contained.clientOptions ?? {
          env,
          ...(this.options.pathToExecutable
            ? { codexPathOverride: this.options.pathToExecutable }
            : {}),
        },
      });
      // A run that ended on its own without a component its requirement says it must have tested
      // another setup than the one it names.
      const unloaded =
        receipt.status === "completed" || receipt.status === "agent_error"
          ? (setup?.fatalAfterRun() ?? [])
          : [];
      return unloaded.length > 0
        ? fail("infra_error", setupFailure(unloaded), "setup_failed")
        : receipt;
    } finally {
      await contained.close();
    }
  }

  /**
   * Runs Codex inside the trial's sandbox (bubblewrap): its process, and the sandbox Codex
   * itself makes for each command, nested inside ours. Codex reaches its model API only through
   * the endpoint proxy, which adds the key outside; a `codex login` (ChatGPT sign-in) cannot be
   * proxied so, and is refused. Under --unsafe-no-sandbox nothing changes.
   */
  private async contain(
    input: ExecutorRunInput,
    binary: string,
    run: {
      env: Record<string, string>;
      endpoint: CodexEndpoint | undefined;
      endpointKey: string | undefined;
      setup: CodexSetupRun | undefined;
    },
  ): Promise<
    | {
        ok: true;
        endpoint?: { baseUrl: string; withKey: boolean };
        clientOptions?: CodexClientOptions;
        close: () => Promise<void>;
      }
    | { ok: false; error: string; infraReason: InfraReason }
  > {
    if (input.sandbox.kind === "none") return { ok: true, close: async () => {} };
    const key =
      run.endpointKey ??
      (run.endpoint ? undefined : run.env.CODEX_API_KEY || run.env.OPENAI_API_KEY);
    if (!run.endpoint && key === undefined)
      return {
        ok: false,
        infraReason: "config_invalid",
        error:
          "a `codex login` (ChatGPT sign-in) cannot be used inside the sandbox: its tokens would be readable by the agent's commands; set OPENAI_API_KEY or CODEX_API_KEY, or run with --unsafe-no-sandbox",
      };
    const vendor = dirname(dirname(binary));
    const host = await containHost({
      sandbox: input.sandbox,
      cwd: input.cwd,
      scratchDir: input.scratchDir,
      installPaths: [vendor, ...(run.setup?.readOnlyPaths ?? [])],
      endpoint: {
        upstream: run.endpoint?.baseUrl ?? "https://api.openai.com/v1",
        credentialHeaders: key === undefined ? {} : { authorization: `Bearer ${key}` },
      },
      timeoutMs: input.timeoutMs,
      allowNestedSandbox: true,
      // A forge task's program: Codex's commands inherit its PATH.
      ...(input.forge?.programDir === undefined ? {} : { programDirs: [input.forge.programDir] }),
      grants: [
        // Only the forge MCP server is Codex's own endpoint; a tool of the setup gets the gateway
        // in its own sandbox.
        ...(input.forge?.access === "mcp" && input.forge.endpoint.grant
          ? [input.forge.endpoint.grant]
          : []),
        ...(run.setup?.grants ?? []),
      ],
      ...(run.setup?.observeRequestBody
        ? { observeRequestBody: run.setup.observeRequestBody }
        : {}),
    });
    try {
      const env: Record<string, string> = { ...run.env };
      for (const name of ["OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"]) delete env[name];
      if (key !== undefined) env[ENDPOINT_KEY_VARIABLE] = CREDENTIAL_PLACEHOLDER;
      // Codex refuses to set up its helper links under TMPDIR (default /tmp) when CODEX_HOME lies
      // there, and without them its own sandbox cannot start a command: a TMPDIR of its own.
      env.TMPDIR = await scratchTmpDir(input.scratchDir);
      const line = host.commandLine([binary], env);
      // The SDK takes a program, not a command line: a launcher outside every sandbox runs it.
      const launcherDir = await mkdtemp(join(dirname(input.scratchDir), "codex-launch-"));
      const launcher = join(launcherDir, "codex");
      await writeFile(launcher, `#!/bin/sh\nexec ${line.argv.map(shellQuote).join(" ")} "$@"\n`, {
        mode: 0o700,
      });
      return {
        ok: true,
        endpoint: { baseUrl: host.baseUrl, withKey: key !== undefined },
        clientOptions: {
          env: { ...line.env, PATH: `${join(vendor, "codex-path")}:${line.env.PATH ?? ""}` },
          codexPathOverride: launcher,
        },
        close: async () => {
          await host.close();
          await rm(launcherDir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      await host.close();
      throw error;
    }
  }

  private async startThread(
    sdk: CodexSdkModule,
    input: ExecutorRunInput,
    builder: ReceiptBuilder,
    deadline: RunDeadline,
    run: {
      sandboxMode: "read-only" | "workspace-write";
      codexHome: string;
      clientOptions: CodexClientOptions;
    },
  ): Promise<RuntimeReceipt> {
    const { sandboxMode, codexHome, clientOptions } = run;
    const env = clientOptions.env ?? {};
    // Repeated on the command line (-c), which outranks any system or project config file.
    const threadOptions: CodexThreadOptions = {
      ...(input.runtime.model === undefined ? {} : { model: input.runtime.model }),
      sandboxMode,
      workingDirectory: input.cwd,
      skipGitRepoCheck: true,
      approvalPolicy: "never",
      // Codex's commands share the harness's sandbox with Codex's model endpoint (which adds the
      // key): they get no network, so no forge arm whose commands reach the forge runs on Codex.
      networkAccessEnabled: false,
      webSearchMode: "disabled",
    };
    builder.event("harness.options", {
      client: {
        ...clientOptions,
        env: Object.keys(env).sort(),
        ...(clientOptions.codexPathOverride === undefined
          ? {}
          : { codexPathOverride: "<launcher>" }),
      },
      contained: input.sandbox.kind !== "none",
      thread: threadOptions,
      configToml: await readFile(join(codexHome, "config.toml"), "utf8"),
    });

    let thread: CodexThreadLike;
    try {
      thread = new sdk.Codex(clientOptions).startThread(threadOptions);
    } catch (error) {
      // Nothing ran yet: whatever broke is the environment's (e.g. the SDK finds no binary).
      const failure = classifyCodexFailure(errorMessage(error));
      const reason = failure.status === "infra_error" ? failure.infraReason : "spawn_failed";
      builder.event("harness.stopped", {
        status: "infra_error",
        infraReason: reason,
        error: errorMessage(error),
      });
      return builder.finish("infra_error", { error: errorMessage(error), infraReason: reason });
    }

    return this.stream(thread, input, builder, deadline, {
      prompt: promptWithPreamble(input.prompt, input.preamble),
      codexHome,
    });
  }

  private async stream(
    thread: CodexThreadLike,
    input: ExecutorRunInput,
    builder: ReceiptBuilder,
    deadline: RunDeadline,
    run: { prompt: string; codexHome: string },
  ): Promise<RuntimeReceipt> {
    const reconnectLimit = this.options.reconnectLimit ?? 3;
    // Tool items in the order the stream reported them (the audit's fallback source).
    const streamedItems: CodexThreadItem[] = [];
    const seenItems = new Set<string>();
    // Mutated from the event handler; kept in one object so the checks below see its updates.
    const state: {
      early: EarlyStop | null;
      progress: boolean;
      networkReconnects: number;
      turnFailure: string | null;
      streamError: string | null;
      turnCompleted: boolean;
      events: number;
    } = {
      early: null,
      progress: false,
      networkReconnects: 0,
      turnFailure: null,
      streamError: null,
      turnCompleted: false,
      events: 0,
    };
    let thrown: unknown = null;

    const stopEarly = (stop: EarlyStop) => {
      state.early ??= stop;
      deadline.controller.abort(new Error(stop.error));
    };

    const track = (item: CodexThreadItem) => {
      if (!isToolCallItem(item) || seenItems.has(item.id)) return;
      seenItems.add(item.id);
      streamedItems.push(item);
      const maxTurns = input.runtime.maxTurns;
      if (maxTurns !== undefined && streamedItems.length > maxTurns) {
        stopEarly({
          status: "limit_reached",
          error: `the agent started tool call ${streamedItems.length} with maxTurns ${maxTurns} (Codex has no turn limit; the harness caps its tool calls)`,
        });
      }
    };

    const handle = (event: CodexThreadEvent) => {
      state.events += 1;
      builder.event(event.type, event);
      switch (event.type) {
        case "thread.started":
          builder.sessionId = event.thread_id;
          break;
        case "turn.completed": {
          state.turnCompleted = true;
          const usage = event.usage;
          const cached = usage.cached_input_tokens ?? 0;
          // OpenAI counts cached tokens inside input_tokens.
          addTokens(builder.tokens, "uncachedInput", Math.max(0, usage.input_tokens - cached));
          addTokens(builder.tokens, "cacheRead", usage.cached_input_tokens);
          addTokens(builder.tokens, "cacheWrite", usage.cache_write_input_tokens);
          addTokens(builder.tokens, "output", usage.output_tokens);
          addTokens(builder.tokens, "reasoning", usage.reasoning_output_tokens);
          break;
        }
        case "turn.failed":
          state.turnFailure = event.error?.message ?? "the turn failed";
          break;
        case "error": {
          const kind = reconnectKind(event.message);
          if (kind === "network") {
            state.networkReconnects += 1;
            // Codex keeps reconnecting for minutes; the first failure before any progress, or a
            // run of them later, means the endpoint cannot be reached.
            if (!state.progress || state.networkReconnects >= reconnectLimit) {
              stopEarly({
                status: "infra_error",
                infraReason: "network_unreachable",
                error: `the model endpoint cannot be reached: ${event.message}`,
              });
            }
          } else if (kind === "none") {
            state.streamError = event.message;
          }
          break;
        }
        case "item.started":
        case "item.updated":
        case "item.completed": {
          const item = event.item;
          if (item.type !== "error") {
            state.progress = true;
            state.networkReconnects = 0;
          }
          if (event.type === "item.completed" && item.type === "agent_message") {
            builder.finalText = item.text;
          }
          track(item);
          break;
        }
      }
    };

    const grace = this.options.abortGraceMs ?? 5_000;
    const afterAbort = () =>
      new Promise<"stuck">((resolve) => {
        const arm = () => setTimeout(() => resolve("stuck"), grace).unref();
        if (deadline.controller.signal.aborted) arm();
        else deadline.controller.signal.addEventListener("abort", arm, { once: true });
      });
    const stuck = afterAbort();

    let iterator: AsyncGenerator<CodexThreadEvent> | undefined;
    try {
      const streamed = await thread.runStreamed(run.prompt, {
        signal: deadline.controller.signal,
      });
      iterator = streamed.events;
      for (;;) {
        const next = await Promise.race([iterator.next(), stuck]);
        if (next === "stuck") {
          builder.event("harness.stuck", { afterAbortMs: grace });
          break;
        }
        if (next.done) break;
        handle(next.value);
        if (state.early) break;
      }
    } catch (error) {
      thrown = error;
    }
    // Closing the generator makes the SDK kill the CLI; wait (boundedly) so that nothing the
    // agent started still runs when the harness reads the workspace.
    if (iterator) {
      const closed = iterator.return(undefined).catch(() => undefined);
      await Promise.race([closed, new Promise((r) => setTimeout(r, grace).unref())]);
    }
    const why = deadline.why();

    const violations = await this.audit(input, builder, run.codexHome, streamedItems);

    let status: ReceiptStatus;
    let infraReason: InfraReason | undefined;
    let error: string | undefined;
    const stop = state.early;
    if (stop) {
      ({ status, error } = stop);
      infraReason = stop.infraReason;
    } else if (why !== null) {
      ({ status, error } = stoppedOutcome(why, input.timeoutMs));
    } else if (state.turnFailure !== null || state.streamError !== null) {
      error = state.turnFailure ?? state.streamError ?? "";
      const failure = classifyCodexFailure(error);
      status = failure.status;
      if (failure.status === "infra_error") infraReason = failure.infraReason;
    } else if (thrown !== null) {
      error = errorMessage(thrown);
      const failure = classifyCodexFailure(error);
      if (failure.status === "infra_error") {
        status = "infra_error";
        infraReason = failure.infraReason;
      } else if (state.events === 0) {
        // The CLI died before saying anything: the environment, not the agent.
        status = "infra_error";
        infraReason = "spawn_failed";
      } else {
        status = failure.status;
      }
    } else if (!state.turnCompleted) {
      status = "infra_error";
      infraReason = "protocol_mismatch";
      error = "the Codex event stream ended without completing or failing the turn";
    } else {
      status = "completed";
    }
    if (thrown !== null && error !== errorMessage(thrown)) {
      builder.event("harness.thrown", { error: errorMessage(thrown) });
    }

    if (violations.length > 0) {
      builder.event("policy_violations", { count: violations.length, violations });
      const first = violations[0]!;
      const note = `policy violation: ${violations.length} action(s) of the agent broke the trial's policy (first: ${first.tool}, ${first.rule}: ${first.reason})`;
      if (status === "completed") {
        status = "agent_error";
        error = note;
      } else if (status !== "infra_error" && status !== "aborted") {
        error = error === undefined ? note : `${error}; ${note}`;
      }
    }
    if (status !== "completed") {
      builder.event("harness.stopped", { status, infraReason: infraReason ?? null, error });
    }
    return builder.finishWith({ status, infraReason, error });
  }

  /**
   * Puts every action of the run to the policy, in call order: from the session rollout when the
   * CLI wrote one (it holds the calls the event stream leaves out), else from the streamed items.
   * Also takes the model responses, models and duration the rollout reports.
   */
  private async audit(
    input: ExecutorRunInput,
    builder: ReceiptBuilder,
    codexHome: string,
    streamedItems: readonly CodexThreadItem[],
  ): Promise<Violation[]> {
    const violations: Violation[] = [];
    const ask = async (call: AuditCall, item: string, source: "rollout" | "stream") => {
      // Auto-approved tools are not put to the policy, as a permission callback would not be
      // asked about them (manifests keep this list empty).
      if (input.runtime.allowedTools.includes(call.tool)) {
        builder.event("harness.audit", {
          source,
          item,
          tool: call.tool,
          decision: "auto-approved",
        });
        return;
      }
      const decision: PolicyDecision = await input.policy.decide(call.tool, call.input);
      builder.event("harness.audit", {
        source,
        item,
        tool: call.tool,
        seq: decision.seq,
        decision: decision.decision,
        rule: decision.rule,
        reason: decision.reason,
      });
      if (decision.decision === "deny") {
        violations.push({
          seq: decision.seq,
          item,
          tool: call.tool,
          rule: decision.rule,
          reason: decision.reason,
        });
      } else if (input.runtime.disallowedTools.includes(call.tool)) {
        violations.push({
          seq: decision.seq,
          item,
          tool: call.tool,
          rule: "disallowed-tool",
          reason: `${call.tool} is among the run's disallowed tools`,
        });
      }
    };

    const rollout = await readRollout(codexHome, builder.sessionId);
    let fromStream: readonly CodexThreadItem[] = streamedItems;
    let toolCalls = 0;
    if (rollout) {
      builder.turns = rollout.modelResponses;
      for (const model of rollout.models) builder.effectiveModels.add(model);
      if (rollout.durationMs !== null) builder.agentMs = rollout.durationMs;
      const servers = [
        ...(input.setup ?? []).filter((c) => c.mechanism === "mcp-server").map((c) => c.id),
        ...(input.forge?.mcp ? [input.forge.mcp.server] : []),
      ];
      for (const call of rollout.calls) {
        const { counted, calls } = rolloutAuditCalls(call, input.cwd);
        if (counted) toolCalls += 1;
        for (const question of calls)
          await ask(
            { ...question, tool: serverNamed(question.tool, servers) },
            call.callId,
            "rollout",
          );
      }
      // Items the stream reported beyond what the rollout recorded (a CLI killed mid-write).
      const reported = rollout.calls.filter(
        (c) => c.reported !== undefined && REPORTED_ACTIONS.has(c.reported.type),
      ).length;
      fromStream = streamedItems.slice(reported);
    }
    builder.event("harness.audit_source", {
      rollout: rollout !== null,
      rolloutCalls: rollout?.calls.length ?? 0,
      streamedItems: streamedItems.length,
      auditedFromStream: fromStream.length,
    });
    for (const item of fromStream) {
      toolCalls += 1;
      for (const question of auditCalls(item, input.cwd)) await ask(question, item.id, "stream");
    }
    builder.toolCalls = toolCalls;
    return violations;
  }
}
