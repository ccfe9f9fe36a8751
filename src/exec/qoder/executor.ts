import { access } from "node:fs/promises";
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
  protocolMismatch,
  type RunOutcome,
  type StopCause,
  stoppedOutcome,
} from "../sdk/classify.js";
import {
  addMessageUsage,
  ClaudeLikeRun,
  consumeQuery,
  stderrRecorder,
} from "../sdk/claude-like.js";
import { tracePermissionDecisions } from "../sdk/claude-like-permissions.js";
import {
  buildAgentEnv,
  collectSecretValues,
  isolatedHome,
  isRecord,
  loadHostSdk,
  policyRootMismatch,
  promptWithPreamble,
  ReceiptBuilder,
  runDeadline,
  scratchTmpDir,
} from "../sdk/common.js";
import type { Executor, ExecutorRunInput } from "../types.js";
import { resolveQoderAuth } from "./auth.js";
import { outcomeFromResult, outcomeFromThrown, type QoderEvidence } from "./classify.js";
import {
  QODER_CLI_ENTRY,
  QODER_CLI_PACKAGE,
  QODER_PROFILES,
  QODER_SDK_PACKAGE,
  type QoderExecutorOptions,
  type QoderProfile,
} from "./contract.js";
import {
  buildQueryOptions,
  CALLBACK_BYPASSING_MODES,
  describeOptions,
  isQoderProfile,
  profileTools,
  QODER_HOST_VARIABLES,
  QODER_PERMISSION_MODES,
  qoderEnvOverrides,
} from "./options.js";
import { createQoderPermissionGate } from "./permissions.js";

const RESULT_SUBTYPES = new Set([
  "success",
  "error_during_execution",
  "error_max_turns",
  "error_max_budget_usd",
]);
/** Enough of the CLI's stderr to classify a crash by; the trace keeps the events themselves. */
const STDERR_TAIL_CHARS = 64 * 1024;

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

/**
 * What the message stream has shown so far. Besides what Claude's stream also reports, Qoder's
 * names its CLI version, retries with their error codes, bills credits, and repeats a split
 * message's tool calls and usage, so calls and usage are counted per id.
 */
class QoderRun extends ClaudeLikeRun<SDKResultMessage> {
  evidence: QoderEvidence = {};
  /** Tool calls the model made, by tool_use id. */
  readonly toolUseIds = new Set<string>();
  /** Tool calls the CLI reported a result for (they ran, or were refused). */
  readonly answeredToolUseIds = new Set<string>();
  /** Per assistant message id, its usage: the CLI repeats it on every part of a split message. */
  private readonly assistantUsage = new Map<string, Record<string, unknown>>();

  constructor(builder: ReceiptBuilder) {
    super(builder, { resultSubtypes: RESULT_SUBTYPES, thinkingTokens: false });
  }

  handle(message: unknown): void {
    const typed = this.accept(message) as SDKMessage | null;
    if (typed === null) return;
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
    const content = this.takeAssistant(message, this.evidence);
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
    if (!this.takeResult(result)) return;
    const builder = this.builder;
    let modelCredits: number | null = null;
    for (const usage of isRecord(result.modelUsage) ? Object.values(result.modelUsage) : []) {
      if (typeof usage.credits === "number" && Number.isFinite(usage.credits)) {
        modelCredits = (modelCredits ?? 0) + usage.credits;
      }
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
  }

  /** Token counts from the assistant messages, for a run that ended without a result. */
  tokensFromAssistantMessages(): void {
    for (const usage of this.assistantUsage.values()) addMessageUsage(this.builder, usage);
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
/**
 * Why the qoder host does not run inside the sandbox: its process runs the agent's approved
 * commands itself, and it talks to Qoder's service with no endpoint setting of its own, so its
 * traffic cannot be narrowed to one endpoint and its credential would sit beside the agent's code.
 */
export const QODER_NOT_CONTAINABLE =
  "the qoder host cannot run inside the OS sandbox: Qoder accepts no model endpoint of the harness's, so its network cannot be narrowed to one endpoint and its credential cannot be kept from the agent's commands; run it with --unsafe-no-sandbox (the verdict then says so first)";

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
    const tmpDir = await scratchTmpDir(input.scratchDir);
    const configDir =
      auth.ok && auth.kind === "qodercli-login" && this.options.qodercliConfigDir !== undefined
        ? this.options.qodercliConfigDir
        : join(home, ".qoder");
    const env = buildAgentEnv(
      QODER_HOST_VARIABLES,
      { ...qoderEnvOverrides(home, configDir, tmpDir), ...this.options.extraEnv },
      source,
    );
    const secretValues = collectSecretValues(
      secretValuesFromEnv(source),
      secretValuesFromEnv(env),
      auth.ok ? auth.secrets : [],
      this.options.secretValues ?? [],
    );
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

    const rootMismatch = policyRootMismatch(input);
    if (rootMismatch !== null) return configInvalid(rootMismatch);
    if (input.sandbox.kind !== "none") return configInvalid(QODER_NOT_CONTAINABLE);
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

    const loaded = await loadHostSdk(this.options, QODER_SDK_PACKAGE);
    if (!loaded.ok) {
      return builder.finish("infra_error", { infraReason: "runtime_missing", error: loaded.error });
    }
    const sdk = loaded.sdk;

    const deadline = runDeadline(input);
    const gate = createQoderPermissionGate(input.policy, tracePermissionDecisions(builder));
    const stderr = stderrRecorder(builder, STDERR_TAIL_CHARS);
    const options = buildQueryOptions({
      input,
      profile,
      env,
      auth: auth.sdkAuth,
      transport: sdk.ProcessTransport.default,
      pathToQoderCLIExecutable: cli.path,
      abortController: deadline.controller,
      gate,
      stderr: stderr.write,
      ...(this.options.proxy === undefined ? {} : { proxy: this.options.proxy }),
    });
    builder.event("harness_options", describeOptions(options, profile, auth.kind));

    const state = new QoderRun(builder);
    const thrown = await consumeQuery({
      query: () => sdk.query({ prompt: promptWithPreamble(input.prompt, input.preamble), options }),
      run: state,
      deadline,
      abortGraceMs: this.options.abortGraceMs ?? 10_000,
      builder,
    });
    if (state.result === null) state.tokensFromAssistantMessages();
    // Every call the CLI answered must have been put to the policy; one that was not ran unchecked.
    const decided = gate.decidedToolUseIds();
    for (const id of [...state.answeredToolUseIds].sort()) {
      if (state.toolUseIds.has(id) && !decided.has(id)) {
        builder.event("harness_unchecked_tool_call", { toolUseId: id });
      }
    }

    state.evidence.stderr = stderr.tail();
    return builder.finishWith(this.outcome(state, thrown, deadline.why(), input.timeoutMs));
  }

  private outcome(
    state: QoderRun,
    thrown: { error: unknown } | null,
    stopped: StopCause | null,
    timeoutMs: number,
  ): RunOutcome {
    if (state.result) {
      const outcome = outcomeFromResult(state.result, state.evidence);
      // A result the abort itself produced says less than the abort.
      if (stopped && outcome.status !== "completed") return stoppedOutcome(stopped, timeoutMs);
      return outcome;
    }
    if (stopped) return stoppedOutcome(stopped, timeoutMs);
    if (thrown) return outcomeFromThrown(thrown.error, state.sawInit, state.evidence);
    if (state.protocolProblem) return protocolMismatch(state.protocolProblem);
    return protocolMismatch("the SDK's message stream ended without a result message");
  }
}
