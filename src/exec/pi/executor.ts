import { join } from "node:path";
import type { AgentSessionEvent } from "@mariozechner/pi-coding-agent";
import type { InfraReason, ReceiptStatus, RuntimeReceipt } from "../receipt.js";
import { secretValuesFromEnv } from "../redact.js";
import { errorMessage, stoppedOutcome } from "../sdk/classify.js";
import {
  addTokens,
  collectSecretValues,
  isolatedHome,
  loadHostSdk,
  policyRootMismatch,
  ReceiptBuilder,
  runDeadline,
  type SdkSource,
} from "../sdk/common.js";
import { type HostSetupReport, setupFailure } from "../setup/contract.js";
import type { Executor, ExecutorRunInput } from "../types.js";
import { piInfraReason } from "./classify.js";
import type { PiSdk, PiSession } from "./contract.js";
import { buildModel, parsePiModel, resolveCredential } from "./model.js";
import { type PiSetup, piSetupFatal, preparePiSetup } from "./setup.js";

export const PI_PACKAGE = "@mariozechner/pi-coding-agent";

/** Variables the Pi executor reads from its environment source; it never reads any other. */
const PI_HOST_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
] as const;

/** Pi's system prompt here: it has no tools, so it must not pretend to have looked at anything. */
export const PI_SYSTEM_PROMPT =
  "You are answering a question about a software repository. You have no tools: you cannot read files, run commands or change anything. Answer from the information in the user's message only, and say so when it is not enough.";

export interface PiExecutorOptions extends SdkSource<PiSdk> {
  /** Where the credential and endpoint variables are read from (default: `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for Pi to wind down after an abort (default 5 s). */
  abortGraceMs?: number;
  /** Extra strings to mask in the receipt. */
  secretValues?: readonly string[];
}

/** The text of an assistant message's text blocks. */
function assistantText(message: { content?: unknown }): string {
  if (!Array.isArray(message.content)) return "";
  return message.content
    .map((block: { type?: string; text?: string }) =>
      block?.type === "text" && typeof block.text === "string" ? block.text : "",
    )
    .join("");
}

interface LastAssistant {
  stopReason: string;
  errorMessage: string | null;
  text: string;
}

/**
 * The `pi` host: Pi's in-process coding-agent SDK, answer-only. It runs with `noTools: "all"`,
 * so it reads and changes nothing and the composition reaches it only as prompt text: the
 * preamble (advisory), and an instructions component appended to its system prompt (wired, see
 * ./setup.ts); it suits read tasks whose prompt carries what is needed. Credentials
 * come only from the executor's allowlisted environment source and are set explicitly, so Pi's
 * own fallback to the harness's `process.env` is never consulted.
 */
/** Ends a run whose setup Pi did not load before the model is asked anything. */
class SetupNotLoaded extends Error {}

export class PiExecutor implements Executor {
  readonly host = "pi" as const;

  constructor(private readonly options: PiExecutorOptions = {}) {}

  async run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
    if (this.host !== "pi") throw new Error("PiExecutor runs only pi");
    const started = performance.now();
    const source = this.options.env ?? process.env;
    const used = PI_HOST_VARIABLES.filter((name) => Boolean(source[name]));
    const picked = Object.fromEntries(used.map((name) => [name, source[name]]));
    const secretValues = collectSecretValues(
      secretValuesFromEnv(source),
      secretValuesFromEnv(picked),
      this.options.secretValues ?? [],
    );
    const builder = new ReceiptBuilder({
      host: "pi",
      kind: "pi-coding-agent-sdk",
      packageName: PI_PACKAGE,
      agentVersion: null,
      input,
      envVarNames: [...used],
      startedMs: started,
      secretValues,
    });
    const finish = (status: ReceiptStatus, infraReason?: InfraReason, error?: string) =>
      builder.finishWith({ status, infraReason, error });

    const rootMismatch = policyRootMismatch(input);
    if (rootMismatch !== null) return finish("infra_error", "config_invalid", rootMismatch);
    const parsed = parsePiModel(input.runtime.model);
    if (!parsed.ok) return finish("infra_error", "config_invalid", parsed.error);
    const credential = resolveCredential(source);
    if (credential === null) {
      return finish(
        "infra_error",
        "auth_missing",
        "no ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN in the executor's environment (Pi runs in-process and is never allowed to read the harness's own environment)",
      );
    }
    if (input.signal?.aborted)
      return finish("aborted", undefined, "aborted before the agent started");

    const loaded = await loadHostSdk(this.options, PI_PACKAGE);
    if (!loaded.ok) return finish("infra_error", "runtime_missing", loaded.error);
    const sdk = loaded.sdk;
    builder.agentVersion = typeof sdk.VERSION === "string" ? sdk.VERSION : null;
    builder.event("harness_note", {
      text: `answer-only: no tools are given to Pi (noTools "all"); requested tools ${JSON.stringify(input.runtime.tools)} are advisory`,
    });

    let setup: PiSetup | undefined;
    if ((input.setup ?? []).length > 0) {
      const prepared = await preparePiSetup(input.setup ?? []);
      setup = prepared;
      builder.setupReports = () => prepared.book.all();
      const fatal = prepared.book.fatal();
      if (fatal.length > 0) return finish("infra_error", "setup_failed", setupFailure(fatal));
    }

    const deadline = runDeadline(input);
    let session: PiSession | undefined;
    let setupFatal: HostSetupReport[] = [];
    let last: LastAssistant | null = null;
    let pricedCost = 0;
    let priced = false;
    let thrown: { error: unknown } | null = null;
    let abandoned = false;
    try {
      const home = await isolatedHome(input.scratchDir, join(".pi", "agent"));
      const agentDir = join(home, ".pi", "agent");
      const authStorage = sdk.AuthStorage.inMemory();
      // A runtime key outranks every other source, and the resolver answers nothing, so Pi's
      // fallbacks to process.env and to its own config files are never reached.
      authStorage.setRuntimeApiKey(parsed.provider, credential.value);
      authStorage.setFallbackResolver(() => undefined);
      const modelRegistry = sdk.ModelRegistry.inMemory(authStorage);
      const built = buildModel(
        modelRegistry.find(parsed.provider, parsed.id),
        parsed.id,
        source.ANTHROPIC_BASE_URL || undefined,
        credential,
      );
      priced = built.priced;
      const settingsManager = sdk.SettingsManager.inMemory({
        compaction: { enabled: false },
        retry: { enabled: false },
      });
      const resourceLoader = new sdk.DefaultResourceLoader({
        cwd: input.cwd,
        agentDir,
        settingsManager,
        noExtensions: true,
        noSkills: true,
        noPromptTemplates: true,
        noThemes: true,
        noContextFiles: true,
        systemPrompt: PI_SYSTEM_PROMPT,
        ...(setup === undefined || setup.append.length === 0
          ? {}
          : { appendSystemPrompt: setup.append }),
      });
      await resourceLoader.reload();
      const created = await sdk.createAgentSession({
        cwd: input.cwd,
        agentDir,
        model: built.model,
        thinkingLevel: "off",
        authStorage,
        modelRegistry,
        noTools: "all",
        resourceLoader,
        sessionManager: sdk.SessionManager.inMemory(input.cwd),
        settingsManager,
      });
      const active = created.session;
      session = active;
      if (setup !== undefined) {
        // Pi's own report: the system prompt its session will send.
        setup.confirm(typeof active.systemPrompt === "string" ? active.systemPrompt : "");
        setupFatal = piSetupFatal(input.setup ?? [], setup.book.all());
      }
      if (setupFatal.length > 0) throw new SetupNotLoaded();
      builder.sessionId = typeof active.sessionId === "string" ? active.sessionId : null;
      active.subscribe((raw) => {
        const event = raw as AgentSessionEvent;
        // Streaming deltas repeat the whole message each time; the final message is recorded.
        if (event.type === "message_update") return;
        builder.event(event.type, event);
        if (event.type !== "message_end" || event.message.role !== "assistant") return;
        const message = event.message;
        builder.turns = (builder.turns ?? 0) + 1;
        builder.effectiveModels.add(message.responseModel ?? message.model);
        builder.toolCalls += message.content.filter((block) => block.type === "toolCall").length;
        const usage = message.usage;
        addTokens(builder.tokens, "uncachedInput", usage?.input);
        addTokens(builder.tokens, "cacheRead", usage?.cacheRead);
        addTokens(builder.tokens, "cacheWrite", usage?.cacheWrite);
        addTokens(builder.tokens, "output", usage?.output);
        if (typeof usage?.cost?.total === "number") pricedCost += usage.cost.total;
        last = {
          stopReason: message.stopReason,
          errorMessage: message.errorMessage ?? null,
          text: assistantText(message),
        };
      });
      const onAbort = () => {
        active.abort().catch(() => {});
      };
      deadline.controller.signal.addEventListener("abort", onAbort, { once: true });
      if (deadline.controller.signal.aborted) onAbort();
      const prompted = active.prompt(input.prompt).then(
        () => "done" as const,
        (error: unknown) => {
          thrown = { error };
          return "done" as const;
        },
      );
      const graceMs = this.options.abortGraceMs ?? 5000;
      const ended = await Promise.race([
        prompted,
        new Promise<"abandoned">((resolve) => {
          const arm = () => setTimeout(() => resolve("abandoned"), graceMs).unref();
          if (deadline.controller.signal.aborted) arm();
          else deadline.controller.signal.addEventListener("abort", arm, { once: true });
          void prompted.then(() => deadline.controller.signal.removeEventListener("abort", arm));
        }),
      ]);
      abandoned = ended === "abandoned";
    } catch (error) {
      if (!(error instanceof SetupNotLoaded)) thrown = { error };
    } finally {
      deadline.dispose();
      try {
        session?.dispose();
      } catch {
        // A session that cannot be disposed holds nothing of the trial.
      }
    }
    if (setupFatal.length > 0)
      return finish("infra_error", "setup_failed", setupFailure(setupFatal));
    if (abandoned)
      builder.event("harness_abandoned", { reason: "Pi did not stop after the abort" });
    if (priced && builder.turns !== null) builder.costUsd = pricedCost;

    const stopped = deadline.why();
    const ending = last as LastAssistant | null;
    if (ending) builder.finalText = ending.stopReason === "stop" ? ending.text : "";
    if (ending?.stopReason === "stop") return finish("completed");
    if (stopped) return builder.finishWith(stoppedOutcome(stopped, input.timeoutMs));
    if (thrown !== null) {
      const message = errorMessage((thrown as { error: unknown }).error);
      const reason = piInfraReason(message);
      return reason
        ? finish("infra_error", reason, message)
        : finish("agent_error", undefined, message);
    }
    if (!ending) {
      return finish("infra_error", "protocol_mismatch", "Pi finished without an assistant message");
    }
    if (ending.stopReason === "length") {
      return finish("limit_reached", undefined, "the answer hit the model's output token limit");
    }
    if (ending.stopReason === "error") {
      const message = ending.errorMessage ?? "Pi reported an error without a message";
      const reason = piInfraReason(message);
      return reason
        ? finish("infra_error", reason, message)
        : finish("agent_error", undefined, message);
    }
    if (ending.stopReason === "aborted")
      return finish("aborted", undefined, "Pi aborted the answer");
    return finish(
      "agent_error",
      undefined,
      `Pi stopped with ${JSON.stringify(ending.stopReason)} though it has no tools`,
    );
  }
}
