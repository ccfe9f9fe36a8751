// Reading Claude Code's message stream: what each message tells the receipt, and how long to
// keep waiting for a stream once the run has been aborted.
import type {
  SDKAssistantMessage,
  SDKMessage,
  SDKResultMessage,
  SDKSystemMessage,
} from "@anthropic-ai/claude-agent-sdk";
import { addTokens, type ReceiptBuilder } from "../sdk/common.js";
import type { FailureEvidence } from "./classify.js";

const KNOWN_RESULT_SUBTYPES = new Set([
  "success",
  "error_during_execution",
  "error_max_turns",
  "error_max_budget_usd",
  "error_max_structured_output_retries",
]);
const SYNTHETIC_MODEL = "<synthetic>";

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Resolves with the iterator's next item, or "abandoned" once `signal` has been aborted for `graceMs`. */
export function nextOrAbandon<T>(
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

/** What the message stream has told us so far. */
export class ClaudeRun {
  sawInit = false;
  result: SDKResultMessage | null = null;
  evidence: FailureEvidence = {};
  lastAssistantText = "";
  protocolProblem: string | null = null;

  constructor(private readonly builder: ReceiptBuilder) {}

  handle(message: unknown): void {
    if (!isRecord(message) || typeof message.type !== "string") {
      this.protocolProblem ??= `the SDK yielded a message that is not an object with a type (${typeof message})`;
      this.builder.event("unrecognized_message", { value: message });
      return;
    }
    const typed = message as SDKMessage;
    this.builder.event(typed.type, typed);
    switch (typed.type) {
      case "system":
        if (typed.subtype === "init") this.onInit(typed);
        else if (typed.subtype === "api_retry") this.evidence.apiStatus = typed.error_status;
        return;
      case "assistant":
        this.onAssistant(typed);
        return;
      case "result":
        this.onResult(typed);
        return;
      default:
        // Other message kinds (status, hooks, tasks, rate-limit notices…) are kept in the trace only.
        return;
    }
  }

  private onInit(init: SDKSystemMessage): void {
    this.sawInit = true;
    if (typeof init.session_id === "string") this.builder.sessionId = init.session_id;
    if (typeof init.claude_code_version === "string") {
      this.builder.agentVersion = init.claude_code_version;
    }
    this.evidence.apiKeySource = typeof init.apiKeySource === "string" ? init.apiKeySource : null;
  }

  private onAssistant(message: SDKAssistantMessage): void {
    const content = Array.isArray(message.message?.content) ? message.message.content : [];
    const text = content
      .map((block) => (block.type === "text" ? block.text : ""))
      .join("")
      .trim();
    const model = message.message?.model;
    if (message.error !== undefined) {
      this.evidence.assistantError = message.error;
      this.evidence.assistantText = text;
    } else if (text !== "") this.lastAssistantText = text;
    if (typeof model === "string" && model !== SYNTHETIC_MODEL) {
      this.builder.effectiveModels.add(model);
    }
    this.builder.toolCalls += content.filter((block) => block.type === "tool_use").length;
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
    if (typeof result.total_cost_usd === "number" && Number.isFinite(result.total_cost_usd)) {
      builder.costUsd = result.total_cost_usd;
    }
    const perModel = isRecord(result.modelUsage) ? Object.entries(result.modelUsage) : [];
    if (perModel.length > 0) {
      for (const [model, usage] of perModel) {
        builder.effectiveModels.add(model);
        addTokens(builder.tokens, "uncachedInput", usage.inputTokens);
        addTokens(builder.tokens, "cacheRead", usage.cacheReadInputTokens);
        addTokens(builder.tokens, "cacheWrite", usage.cacheCreationInputTokens);
        addTokens(builder.tokens, "output", usage.outputTokens);
        addTokens(builder.tokens, "reasoning", usage.thinkingTokens);
      }
    } else if (isRecord(result.usage)) {
      const usage = result.usage;
      addTokens(builder.tokens, "uncachedInput", usage.input_tokens);
      addTokens(builder.tokens, "cacheRead", usage.cache_read_input_tokens);
      addTokens(builder.tokens, "cacheWrite", usage.cache_creation_input_tokens);
      addTokens(builder.tokens, "output", usage.output_tokens);
    }
    if (result.subtype === "success" && !result.is_error) builder.finalText = result.result;
    else builder.finalText = this.lastAssistantText;
  }
}
