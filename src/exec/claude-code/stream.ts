// Reading Claude Code's message stream: what each message tells the receipt. The parts Qoder's
// stream shares are read by ClaudeLikeRun; here are Claude's own: the init message's version and
// key source, api_retry statuses, the synthetic model of client-made messages, and dollar cost.
import type {
  SDKAssistantMessage,
  SDKMessage,
  SDKResultMessage,
  SDKSystemMessage,
} from "@anthropic-ai/claude-agent-sdk";
import { ClaudeLikeRun } from "../sdk/claude-like.js";
import type { ReceiptBuilder } from "../sdk/common.js";
import type { FailureEvidence } from "./classify.js";

const RESULT_SUBTYPES = new Set([
  "success",
  "error_during_execution",
  "error_max_turns",
  "error_max_budget_usd",
  "error_max_structured_output_retries",
]);
/** The model Claude Code names on messages it made itself (API errors), not a model that ran. */
const SYNTHETIC_MODEL = "<synthetic>";

/** What the message stream has told us so far. */
export class ClaudeRun extends ClaudeLikeRun<SDKResultMessage> {
  evidence: FailureEvidence = {};

  constructor(
    builder: ReceiptBuilder,
    /** Told what the init message lists (the setup's skills, agents, MCP servers). */
    private readonly onInitMessage: (init: SDKSystemMessage) => void = () => {},
  ) {
    super(builder, { resultSubtypes: RESULT_SUBTYPES, thinkingTokens: true });
  }

  handle(message: unknown): void {
    const typed = this.accept(message) as SDKMessage | null;
    if (typed === null) return;
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
    this.onInitMessage(init);
  }

  private onAssistant(message: SDKAssistantMessage): void {
    const content = this.takeAssistant(message, this.evidence);
    const model = message.message?.model;
    if (typeof model === "string" && model !== SYNTHETIC_MODEL) {
      this.builder.effectiveModels.add(model);
    }
    this.builder.toolCalls += content.filter((block) => block.type === "tool_use").length;
  }

  private onResult(result: SDKResultMessage): void {
    if (!this.takeResult(result)) return;
    if (typeof result.total_cost_usd === "number" && Number.isFinite(result.total_cost_usd)) {
      this.builder.costUsd = result.total_cost_usd;
    }
  }
}
