import { access, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type {
  SDKAssistantMessage,
  SDKMessage,
  SDKResultMessage,
  SDKUserMessage,
} from "@qoder-ai/qoder-agent-sdk";
import type { RuntimeReceipt } from "../receipt.js";
import { secretValuesFromEnv } from "../redact.js";
import {
  addTokens,
  buildAgentEnv,
  isolatedHome,
  loadOptionalSdk,
  ReceiptBuilder,
  runDeadline,
} from "../sdk/common.js";
import type { Executor, ExecutorRunInput } from "../types.js";
import { resolveQoderAuth } from "./auth.js";
import {
  errorMessage,
  outcomeFromResult,
  outcomeFromThrown,
  type QoderEvidence,
  type QoderOutcome,
} from "./classify.js";
import {
  QODER_CLI_ENTRY,
  QODER_CLI_PACKAGE,
  QODER_PROFILES,
  QODER_SDK_PACKAGE,
  type QoderExecutorOptions,
  type QoderProfile,
  type QoderSdk,
} from "./contract.js";
import {
  buildQueryOptions,
  CALLBACK_BYPASSING_MODES,
  describeOptions,
  isQoderProfile,
  profileTools,
  promptWithPreamble,
  QODER_HOST_VARIABLES,
  QODER_PERMISSION_MODES,
  qoderEnvOverrides,
} from "./options.js";
import { createQoderPermissionGate } from "./permissions.js";

const KNOWN_RESULT_SUBTYPES = new Set([
  "success",
  "error_during_execution",
  "error_max_turns",
  "error_max_budget_usd",
]);
const STDERR_EVENT_LIMIT = 200;
/** Enough of the CLI's stderr to classify a crash by; the trace keeps the events themselves. */
const STDERR_TAIL_CHARS = 64 * 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The installed Qoder CLI entry and its version, or null when the package is not installed. */
function locateQoderCli(): { path: string; version: string | null } | null {
  const require = createRequire(import.meta.url);
  let path: string;
  try {
    path = require.resolve(QODER_CLI_ENTRY);
  } catch {
    return null;
  }
  let version: string | null = null;
  try {
    const pkg = require(`${QODER_CLI_PACKAGE}/package.json`) as { version?: unknown };
    if (typeof pkg.version === "string") version = pkg.version;
  } catch {
    // the entry exists; its version is then taken from the CLI's init message
  }
  return { path, version };
}

/** Resolves with the iterator's next item, or "abandoned" once `signal` has been aborted for `graceMs`. */
function nextOrAbandon<T>(
  iterator: AsyncIterator<T>,
  signal: AbortSignal,
  graceMs: number,
): Promise<IteratorResult<T> | "abandoned"> {
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      timer = setTimeout(() => resolve("abandoned"), graceMs);
    };
    const settle = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    iterator.next().then(
      (item) => {
        settle();
        resolve(item);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}

/** What the message stream has shown so far. */
class QoderRun {
  sawInit = false;
  result: SDKResultMessage | null = null;
  evidence: QoderEvidence = {};
  lastAssistantText = "";
  protocolProblem: string | null = null;
  /** Tool calls the model made, by tool_use id. */
  readonly toolUseIds = new Set<string>();
  /** Tool calls the CLI reported a result for (they ran, or were refused). */
  readonly answeredToolUseIds = new Set<string>();
  /** Per assistant message id, its usage: the CLI repeats it on every part of a split message. */
  private readonly assistantUsage = new Map<string, Record<string, unknown>>();

  constructor(private readonly builder: ReceiptBuilder) {}

  handle(message: unknown): void {
    if (!isRecord(message) || typeof message.type !== "string") {
      this.protocolProblem ??= `the SDK yielded a message that is not an object with a type (${typeof message})`;
      this.builder.event("unrecognized_message", { value: message });
      return;
    }
    const typed = message as SDKMessage;
    const subtype = "subtype" in typed && typeof typed.subtype === "string" ? typed.subtype : null;
    this.builder.event(subtype === null ? typed.type : `${typed.type}:${subtype}`, typed);
    switch (typed.type) {
      case "system":
        if (typed.subtype === "init") {
          this.sawInit = true;
          this.builder.sessionId = typed.session_id;
          if (typeof typed.qodercli_version === "string") {
            this.builder.agentVersion = typed.qodercli_version;
          }
        } else if (typed.subtype === "api_retry") {
          this.evidence.retryError = typed.error;
          this.evidence.retryStatus = typed.error_status;
        }
        return;
      case "assistant":
        this.onAssistant(typed);
        return;
      case "user":
        this.onUser(typed);
        return;
      case "result":
        this.onResult(typed);
        return;
      default:
        // Status, hook, task and other notices are kept in the trace only.
        return;
    }
  }

  private onAssistant(message: SDKAssistantMessage): void {
    const content = Array.isArray(message.message?.content) ? message.message.content : [];
    const text = content
      .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
      .join("")
      .trim();
    if (message.error !== undefined) {
      this.evidence.assistantError = message.error;
      this.evidence.assistantText = text;
    } else if (text !== "") {
      this.lastAssistantText = text;
    }
    const model = message.message?.model;
    if (typeof model === "string" && model !== "" && message.isApiErrorMessage !== true) {
      this.builder.effectiveModels.add(model);
    }
    for (const block of content) {
      if (block.type !== "tool_use") continue;
      const id = typeof block.id === "string" ? block.id : `unnamed-${this.toolUseIds.size + 1}`;
      if (!this.toolUseIds.has(id)) {
        this.toolUseIds.add(id);
        this.builder.toolCalls += 1;
      }
    }
    const id = message.message?.id ?? message.uuid;
    const usage = message.message?.usage;
    if (typeof id === "string" && isRecord(usage)) this.assistantUsage.set(id, usage);
  }

  private onUser(message: SDKUserMessage): void {
    const content = message.message?.content;
    if (!Array.isArray(content)) return;
    for (const block of content) {
      if (block.type === "tool_result" && typeof block.tool_use_id === "string") {
        this.answeredToolUseIds.add(block.tool_use_id);
      }
    }
  }

  private onResult(result: SDKResultMessage): void {
    if (!KNOWN_RESULT_SUBTYPES.has(result.subtype)) {
      this.protocolProblem ??= `unknown result subtype ${JSON.stringify(result.subtype)}`;
      return;
    }
    this.result = result;
    const builder = this.builder;
    if (typeof result.session_id === "string") builder.sessionId ??= result.session_id;
    if (typeof result.num_turns === "number") builder.turns = result.num_turns;
    if (typeof result.duration_ms === "number") builder.agentMs = result.duration_ms;
    if (typeof result.duration_api_ms === "number") builder.apiMs = result.duration_api_ms;

    const perModel = isRecord(result.modelUsage) ? Object.entries(result.modelUsage) : [];
    let modelCredits: number | null = null;
    for (const [model, usage] of perModel) {
      builder.effectiveModels.add(model);
      addTokens(builder.tokens, "uncachedInput", usage.inputTokens);
      addTokens(builder.tokens, "cacheRead", usage.cacheReadInputTokens);
      addTokens(builder.tokens, "cacheWrite", usage.cacheCreationInputTokens);
      addTokens(builder.tokens, "output", usage.outputTokens);
      if (typeof usage.credits === "number" && Number.isFinite(usage.credits)) {
        modelCredits = (modelCredits ?? 0) + usage.credits;
      }
    }
    if (perModel.length === 0 && isRecord(result.usage)) {
      const usage = result.usage;
      addTokens(builder.tokens, "uncachedInput", usage.input_tokens);
      addTokens(builder.tokens, "cacheRead", usage.cache_read_input_tokens);
      addTokens(builder.tokens, "cacheWrite", usage.cache_creation_input_tokens);
      addTokens(builder.tokens, "output", usage.output_tokens);
    }

    // Qoder bills in credits; the session total is authoritative, the per-model sum a fallback.
    if (typeof result.total_credits === "number" && Number.isFinite(result.total_credits)) {
      builder.credits = result.total_credits;
    } else if (modelCredits !== null) {
      builder.credits = modelCredits;
    }
    // A dollar figure of zero next to a credit bill is not a price: report USD only when it says something.
    const usd = result.total_cost_usd;
    if (typeof usd === "number" && Number.isFinite(usd) && (usd > 0 || builder.credits === null)) {
      builder.costUsd = usd;
    }

    if (result.subtype === "success" && !result.is_error) builder.finalText = result.result;
    else builder.finalText = this.lastAssistantText;
  }

  /** Token counts from the assistant messages, for a run that ended without a result. */
  tokensFromAssistantMessages(): void {
    for (const usage of this.assistantUsage.values()) {
      addTokens(this.builder.tokens, "uncachedInput", usage.input_tokens);
      addTokens(this.builder.tokens, "cacheRead", usage.cache_read_input_tokens);
      addTokens(this.builder.tokens, "cacheWrite", usage.cache_creation_input_tokens);
      addTokens(this.builder.tokens, "output", usage.output_tokens);
    }
    if (this.builder.finalText === "") this.builder.finalText = this.lastAssistantText;
  }
}

/**
 * The `qoder` host: the real Qoder agent through `@qoder-ai/qoder-agent-sdk`, with the Qoder CLI
 * from `@qoder-ai/qodercli` as a child process (the SDK's process transport; its worker runtime
 * is not used). Every tool call is put to the trial's policy (PreToolUse hook, canUseTool as a
 * second line); the run sees an isolated home and config directory, no setting sources, no MCP
 * servers and an allowlisted environment. Authentication is mandatory: without a credential the
 * run ends at once as `infra_error`/`auth_missing`.
 */
export class QoderExecutor implements Executor {
  readonly host = "qoder" as const;

  constructor(private readonly options: QoderExecutorOptions = {}) {}

  async run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
    if (this.host !== "qoder") throw new Error("QoderExecutor runs only the qoder host");
    const started = performance.now();
    const source = this.options.env ?? process.env;
    const requestedProfile = input.runtime.profile ?? QODER_PROFILES[0];
    const profile: QoderProfile | null = isQoderProfile(requestedProfile) ? requestedProfile : null;
    const auth = resolveQoderAuth(this.options.auth, source);

    const home = await isolatedHome(input.scratchDir, ".qoder");
    const tmpDir = join(input.scratchDir, "tmp");
    await mkdir(tmpDir, { recursive: true });
    const configDir =
      auth.ok && auth.kind === "qodercli-login" && this.options.qodercliConfigDir !== undefined
        ? this.options.qodercliConfigDir
        : join(home, ".qoder");
    const env = buildAgentEnv(
      QODER_HOST_VARIABLES,
      { ...qoderEnvOverrides(home, configDir, tmpDir), ...this.options.extraEnv },
      source,
    );
    const secretValues = [
      ...new Set([
        ...secretValuesFromEnv(source),
        ...secretValuesFromEnv(env),
        ...(auth.ok ? auth.secrets : []),
        ...(this.options.secretValues ?? []),
      ]),
    ].sort((a, b) => b.length - a.length);
    const cli =
      this.options.pathToQoderCLIExecutable === undefined
        ? locateQoderCli()
        : { path: this.options.pathToQoderCLIExecutable, version: null };
    const builder = new ReceiptBuilder({
      host: "qoder",
      kind: "qoder-agent-sdk",
      packageName: QODER_SDK_PACKAGE,
      agentVersion: cli?.version ?? null,
      // The receipt names the tools the agent was really given (the minimal profile has its own).
      input:
        profile === null
          ? input
          : {
              ...input,
              runtime: { ...input.runtime, tools: profileTools(profile, input.runtime.tools) },
            },
      envVarNames: Object.keys(env),
      startedMs: started,
      secretValues,
    });
    const configInvalid = (error: string) =>
      builder.finish("infra_error", { infraReason: "config_invalid", error });

    if (input.policy.config.trialRoot !== input.cwd) {
      return configInvalid("the policy was created for a different trial root than the run's cwd");
    }
    if (profile === null) {
      return configInvalid(
        `runtime profile ${JSON.stringify(requestedProfile)} is not a qoder profile (${QODER_PROFILES.join(", ")})`,
      );
    }
    const mode = input.runtime.permissionMode ?? "default";
    if (!(QODER_PERMISSION_MODES as readonly string[]).includes(mode)) {
      return configInvalid(
        `permission mode ${JSON.stringify(mode)} is not one Qoder knows (${QODER_PERMISSION_MODES.join(", ")})`,
      );
    }
    if ((CALLBACK_BYPASSING_MODES as readonly string[]).includes(mode)) {
      return configInvalid(
        `permission mode ${JSON.stringify(mode)} would run tools without the harness's permission callback`,
      );
    }
    if (input.signal?.aborted) {
      return builder.finish("aborted", { error: "aborted before the agent started" });
    }
    if (!auth.ok) {
      builder.event("harness_auth", { outcome: "not_configured", message: auth.error });
      return builder.finish("infra_error", { infraReason: auth.reason, error: auth.error });
    }
    if (cli === null) {
      return builder.finish("infra_error", {
        infraReason: "binary_missing",
        error: `the Qoder CLI is not installed: install ${QODER_CLI_PACKAGE} next to harnesslab (npm install ${QODER_CLI_PACKAGE}) or pass pathToQoderCLIExecutable`,
      });
    }
    try {
      await access(cli.path);
    } catch {
      return builder.finish("infra_error", {
        infraReason: "binary_missing",
        error: `the Qoder CLI entry ${cli.path} does not exist`,
      });
    }

    let sdk: QoderSdk;
    try {
      sdk =
        this.options.sdk ??
        (await (this.options.loadSdk ?? (() => loadOptionalSdk<QoderSdk>(QODER_SDK_PACKAGE)))());
    } catch (error) {
      return builder.finish("infra_error", {
        infraReason: "runtime_missing",
        error: errorMessage(error),
      });
    }

    const deadline = runDeadline(input);
    const gate = createQoderPermissionGate(input.policy, (event) =>
      builder.event("harness_permission", {
        via: event.via,
        tool: event.toolName,
        toolUseId: event.toolUseId,
        seq: event.decision.seq,
        decision: event.decision.decision,
        rule: event.decision.rule,
        reason: event.decision.reason,
        reused: event.reused,
      }),
    );
    let stderrEvents = 0;
    let stderrTail = "";
    const options = buildQueryOptions({
      input,
      profile,
      env,
      auth: auth.sdkAuth,
      transport: sdk.ProcessTransport.default,
      pathToQoderCLIExecutable: cli.path,
      abortController: deadline.controller,
      gate,
      stderr: (data) => {
        // The SDK hands stderr over line by line, without the line breaks.
        stderrTail = `${stderrTail}${data}${data.endsWith("\n") ? "" : "\n"}`.slice(
          -STDERR_TAIL_CHARS,
        );
        stderrEvents += 1;
        if (stderrEvents <= STDERR_EVENT_LIMIT) builder.event("stderr", { text: data });
      },
      ...(this.options.proxy === undefined ? {} : { proxy: this.options.proxy }),
    });
    builder.event("harness_options", describeOptions(options, profile, auth.kind));

    const state = new QoderRun(builder);
    let thrown: { error: unknown } | null = null;
    let abandoned = false;
    let iterator: AsyncIterator<unknown> | undefined;
    try {
      const stream = sdk.query({
        prompt: promptWithPreamble(input.prompt, input.preamble),
        options,
      });
      iterator = stream[Symbol.asyncIterator]();
      for (;;) {
        const next = await nextOrAbandon(
          iterator,
          deadline.controller.signal,
          this.options.abortGraceMs ?? 10_000,
        );
        if (next === "abandoned") {
          abandoned = true;
          break;
        }
        if (next.done) break;
        state.handle(next.value);
      }
    } catch (error) {
      thrown = { error };
    } finally {
      deadline.dispose();
    }
    if (abandoned) {
      builder.event("harness_abandoned", {
        reason: "the SDK did not stop within the grace period after the abort",
      });
      iterator?.return?.().catch(() => {});
    }
    if (thrown && state.result) {
      builder.event("sdk_error_after_result", { message: errorMessage(thrown.error) });
    }
    if (state.result === null) state.tokensFromAssistantMessages();
    // Every call the CLI answered must have been put to the policy; one that was not ran unchecked.
    const decided = gate.decidedToolUseIds();
    for (const id of [...state.answeredToolUseIds].sort()) {
      if (state.toolUseIds.has(id) && !decided.has(id)) {
        builder.event("harness_unchecked_tool_call", { toolUseId: id });
      }
    }

    state.evidence.stderr = stderrTail;
    const outcome = this.outcome(state, thrown, deadline.why(), input.timeoutMs);
    return builder.finish(outcome.status, {
      ...(outcome.infraReason ? { infraReason: outcome.infraReason } : {}),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    });
  }

  private outcome(
    state: QoderRun,
    thrown: { error: unknown } | null,
    stopped: "timeout" | "aborted" | null,
    timeoutMs: number,
  ): QoderOutcome {
    const stoppedOutcome = (): QoderOutcome =>
      stopped === "timeout"
        ? { status: "timeout", error: `the agent did not finish within ${timeoutMs} ms` }
        : { status: "aborted", error: "the run was aborted" };
    if (state.result) {
      const outcome = outcomeFromResult(state.result, state.evidence);
      // A result the abort itself produced says less than the abort.
      if (stopped && outcome.status !== "completed") return stoppedOutcome();
      return outcome;
    }
    if (stopped) return stoppedOutcome();
    if (thrown) return outcomeFromThrown(thrown.error, state.sawInit, state.evidence);
    if (state.protocolProblem) {
      return {
        status: "infra_error",
        infraReason: "protocol_mismatch",
        error: state.protocolProblem,
      };
    }
    return {
      status: "infra_error",
      infraReason: "protocol_mismatch",
      error: "the SDK's message stream ended without a result message",
    };
  }
}
