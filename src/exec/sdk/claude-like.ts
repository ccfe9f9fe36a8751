// Reading the query() message stream the claude-code and qoder hosts share. Qoder's Agent SDK
// mirrors Claude's: system:init, assistant, user and result messages with modelUsage. The types
// here are structural so that neither SDK has to be installed to compile the other's host; each
// host hands in its SDK's own types and keeps what differs (Claude's terminal reasons and dollar
// cost, Qoder's credits, retries and per-id tool-call bookkeeping). Permissions: see
// claude-like-permissions.ts.
import { errorMessage } from "./classify.js";
import { addTokens, isRecord, type ReceiptBuilder, type RunDeadline } from "./common.js";

/** A content block of an assistant message, as far as the harness reads it. */
export interface ClaudeLikeContentBlock {
  type: string;
  text?: unknown;
  id?: unknown;
}

export interface ClaudeLikeAssistantMessage {
  /** Set when the client synthesized the message from a failed API call. */
  error?: string;
  message?: { content?: unknown; model?: unknown };
}

/** Per-model totals of a result message (Claude reports thinking tokens, Qoder credits). */
interface ClaudeLikeModelUsage {
  inputTokens?: unknown;
  cacheReadInputTokens?: unknown;
  cacheCreationInputTokens?: unknown;
  outputTokens?: unknown;
  thinkingTokens?: unknown;
}

interface ClaudeLikeResultFields {
  is_error?: boolean;
  session_id?: unknown;
  num_turns?: unknown;
  duration_ms?: unknown;
  duration_api_ms?: unknown;
  terminal_reason?: string | null;
  modelUsage?: Readonly<Record<string, ClaudeLikeModelUsage>>;
  usage?: unknown;
}

/** The final `result` message: a success carries the answer, an error subtype its errors. */
export type ClaudeLikeResult =
  | (ClaudeLikeResultFields & { subtype: "success"; result: string })
  | (ClaudeLikeResultFields & { subtype: `error_${string}`; errors?: readonly string[] });

/** The failure evidence an assistant message can carry; hosts extend it with their own. */
export interface AssistantErrorEvidence {
  /** `error` of the last assistant message that carried one. */
  assistantError?: string | null;
  /** Text of that assistant message. */
  assistantText?: string;
}

/** Adds a Messages-API `usage` object (snake_case counts) to the receipt's tokens. */
export function addMessageUsage(builder: ReceiptBuilder, usage: Record<string, unknown>): void {
  addTokens(builder.tokens, "uncachedInput", usage.input_tokens);
  addTokens(builder.tokens, "cacheRead", usage.cache_read_input_tokens);
  addTokens(builder.tokens, "cacheWrite", usage.cache_creation_input_tokens);
  addTokens(builder.tokens, "output", usage.output_tokens);
}

/**
 * What a Claude-shaped message stream has told the run so far. A host subclasses it with its own
 * `handle(message)`, which calls `accept`, `takeAssistant` and `takeResult` for the parts both
 * SDKs report alike and reads the rest itself.
 */
export class ClaudeLikeRun<Result extends ClaudeLikeResult> {
  sawInit = false;
  result: Result | null = null;
  lastAssistantText = "";
  protocolProblem: string | null = null;

  constructor(
    protected readonly builder: ReceiptBuilder,
    private readonly stream: {
      /** Result subtypes the SDK documents; any other means the client speaks another protocol. */
      resultSubtypes: ReadonlySet<string>;
      /** Claude's modelUsage reports thinking tokens; Qoder's documents no such field. */
      thinkingTokens: boolean;
    },
  ) {}

  /** The message when it is an object with a type; otherwise a protocol problem, and null. */
  protected accept(message: unknown): { type: string } | null {
    if (!isRecord(message) || typeof message.type !== "string") {
      this.protocolProblem ??= `the SDK yielded a message that is not an object with a type (${typeof message})`;
      this.builder.event("unrecognized_message", { value: message });
      return null;
    }
    return message as { type: string };
  }

  /**
   * Takes an assistant message's text: as the answer so far, or, when the client made the
   * message from a failed API call, as evidence of that failure. Returns its content blocks.
   */
  protected takeAssistant(
    message: ClaudeLikeAssistantMessage,
    evidence: AssistantErrorEvidence,
  ): readonly ClaudeLikeContentBlock[] {
    const content: readonly ClaudeLikeContentBlock[] = Array.isArray(message.message?.content)
      ? message.message.content
      : [];
    const text = content
      .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
      .join("")
      .trim();
    if (message.error !== undefined) {
      evidence.assistantError = message.error;
      evidence.assistantText = text;
    } else if (text !== "") {
      this.lastAssistantText = text;
    }
    return content;
  }

  /**
   * Takes a result message's session, turns, durations, tokens and final text. Returns false
   * (recording a protocol problem) for a subtype the SDK does not document. Prices stay with the
   * host: Claude reports dollars, Qoder credits.
   */
  protected takeResult(result: Result): boolean {
    if (!this.stream.resultSubtypes.has(result.subtype)) {
      this.protocolProblem ??= `unknown result subtype ${JSON.stringify(result.subtype)}`;
      return false;
    }
    this.result = result;
    const builder = this.builder;
    if (typeof result.session_id === "string") builder.sessionId ??= result.session_id;
    if (typeof result.num_turns === "number") builder.turns = result.num_turns;
    if (typeof result.duration_ms === "number") builder.agentMs = result.duration_ms;
    if (typeof result.duration_api_ms === "number") builder.apiMs = result.duration_api_ms;
    const perModel = isRecord(result.modelUsage) ? Object.entries(result.modelUsage) : [];
    for (const [model, usage] of perModel) {
      builder.effectiveModels.add(model);
      addTokens(builder.tokens, "uncachedInput", usage.inputTokens);
      addTokens(builder.tokens, "cacheRead", usage.cacheReadInputTokens);
      addTokens(builder.tokens, "cacheWrite", usage.cacheCreationInputTokens);
      addTokens(builder.tokens, "output", usage.outputTokens);
      if (this.stream.thinkingTokens) addTokens(builder.tokens, "reasoning", usage.thinkingTokens);
    }
    // The session-wide usage is a fallback: per-model totals also name the models.
    if (perModel.length === 0 && isRecord(result.usage)) addMessageUsage(builder, result.usage);
    if (result.subtype === "success" && !result.is_error) builder.finalText = result.result;
    else builder.finalText = this.lastAssistantText;
    return true;
  }
}

/** The result stopped at a turn or budget limit (by subtype, or by the terminal reason). */
export function stoppedAtLimit(result: ClaudeLikeResult): boolean {
  return (
    LIMIT_SUBTYPES.has(result.subtype) || LIMIT_TERMINAL_REASONS.has(result.terminal_reason ?? "")
  );
}

const LIMIT_SUBTYPES = new Set(["error_max_turns", "error_max_budget_usd"]);
const LIMIT_TERMINAL_REASONS = new Set(["max_turns", "budget_exhausted", "prompt_too_long"]);

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

/**
 * Feeds every message of one query() to `run` until the stream ends, throws, or stays silent for
 * `abortGraceMs` after the deadline aborted it (then it is abandoned, not awaited: an SDK that
 * ignores the abort must not hold the trial). Disposes the deadline. Returns what the stream
 * threw, if anything.
 */
export async function consumeQuery(params: {
  query: () => AsyncIterable<unknown>;
  run: { handle(message: unknown): void; readonly result: unknown };
  deadline: RunDeadline;
  abortGraceMs: number;
  builder: ReceiptBuilder;
}): Promise<{ error: unknown } | null> {
  const { run, deadline, builder } = params;
  let thrown: { error: unknown } | null = null;
  let abandoned = false;
  let iterator: AsyncIterator<unknown> | undefined;
  try {
    iterator = params.query()[Symbol.asyncIterator]();
    for (;;) {
      const next = await nextOrAbandon(iterator, deadline.controller.signal, params.abortGraceMs);
      if (next === "abandoned") {
        abandoned = true;
        break;
      }
      if (next.done) break;
      run.handle(next.value);
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
  if (thrown && run.result) {
    // A client may throw after yielding an error result (Claude Code does); the result is the
    // better evidence, so the error only goes to the trace.
    builder.event("sdk_error_after_result", { message: errorMessage(thrown.error) });
  }
  return thrown;
}

/** How many stderr chunks reach the trace; a crash loop must not flood the receipt. */
const STDERR_EVENT_LIMIT = 200;

/**
 * The SDK's `stderr` callback: the first chunks go to the trace. With `tailChars`, the last
 * characters are also kept, for classifying a crash by what the CLI said before it died.
 */
export function stderrRecorder(
  builder: ReceiptBuilder,
  tailChars = 0,
): { write: (data: string) => void; tail: () => string } {
  let events = 0;
  let tail = "";
  return {
    write: (data) => {
      if (tailChars > 0) {
        // The SDKs hand stderr over line by line, without the line breaks.
        tail = `${tail}${data}${data.endsWith("\n") ? "" : "\n"}`.slice(-tailChars);
      }
      events += 1;
      if (events <= STDERR_EVENT_LIMIT) builder.event("stderr", { text: data });
    },
    tail: () => tail,
  };
}
