// A readable line per event of a trial's trace.jsonl. Every host writes its own events (the
// scripted executor's tool calls, Claude Code and Qoder SDK messages, Codex thread items, Pi
// session events, the harness's own notes); the ones we know get a short description, anything
// else is shown as compact JSON. Pure; never throws on odd input (the trace is untrusted).

export interface TraceRow {
  /** 1-based line number in trace.jsonl. */
  line: number;
  /** The event's type (and subtype or item type), e.g. `tool_call`, `system:init`, `item.completed: command_execution`. */
  kind: string;
  /** The tool the event is about, when there is one. */
  tool: string | null;
  /** What went in: a tool's input, a command, a prompt. */
  input: string | null;
  /** What came out: a tool's result, an error. */
  output: string | null;
  /** What the agent said (its messages, reasoning, final report). */
  text: string | null;
  tone: "error" | "deny" | null;
}

/** How much of one value a row shows; the trace file keeps the rest. */
const MAX_FIELD = 600;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function clip(text: string, max = MAX_FIELD): string {
  return text.length > max ? `${text.slice(0, max)}… (+${text.length - max} chars)` : text;
}

/** Compact JSON that never throws (cycles cannot come from JSON.parse, but BigInt-like oddities are stringified). */
export function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Text out of the content shapes hosts use: a string, `[{type:"text", text}]`, `{content: …}`. */
function textOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    const parts = value.map((block) => {
      if (typeof block === "string") return block;
      if (!isObject(block)) return compactJson(block);
      if (typeof block.text === "string") return block.text;
      if (block.type === "image") return "[image]";
      return textOf(block.content) ?? compactJson(block);
    });
    return parts.join("\n");
  }
  if (isObject(value)) {
    if (typeof value.text === "string") return value.text;
    if ("content" in value) return textOf(value.content);
  }
  return null;
}

/** `command: npm test, timeout: 5000`: a tool input, short. */
function argsSummary(input: unknown): string {
  if (typeof input === "string") return input;
  if (!isObject(input)) return compactJson(input);
  return Object.entries(input)
    .map(
      ([key, value]) =>
        `${key}: ${typeof value === "string" && !value.includes("\n") ? value : compactJson(value)}`,
    )
    .join(", ");
}

/** A tool result, short: its status fields first, then its output. */
function resultSummary(result: unknown): { text: string; failed: boolean } {
  if (!isObject(result)) return { text: textOf(result) ?? compactJson(result), failed: false };
  const parts: string[] = [];
  const failed = result.ok === false || result.isError === true || result.is_error === true;
  if (result.ok === true) parts.push("ok");
  if (result.ok === false) parts.push("failed");
  if (typeof result.exitCode === "number") parts.push(`exit ${result.exitCode}`);
  for (const key of ["reason", "error", "message"] as const) {
    const value = str(result[key]);
    if (value) parts.push(value);
  }
  const output = str(result.stdout) ?? textOf(result.content) ?? str(result.output);
  const stderr = str(result.stderr);
  if (output) parts.push(output.trim());
  if (stderr?.trim()) parts.push(`stderr: ${stderr.trim()}`);
  const rest = Object.fromEntries(
    Object.entries(result).filter(
      ([key]) =>
        ![
          "ok",
          "exitCode",
          "reason",
          "error",
          "message",
          "stdout",
          "stderr",
          "content",
          "output",
          "isError",
          "is_error",
        ].includes(key),
    ),
  );
  if (Object.keys(rest).length > 0) parts.push(compactJson(rest));
  return { text: parts.join(" · "), failed };
}

interface Described {
  tool?: string | null;
  input?: string | null;
  output?: string | null;
  text?: string | null;
  tone?: TraceRow["tone"];
}

/** The blocks of a Claude-like or Pi message: text, tool calls, tool results, thinking. */
function describeMessage(message: unknown): Described | null {
  if (!isObject(message)) return null;
  const role = str(message.role);
  const content = message.content;
  if (role === "toolResult") {
    return {
      tool: str(message.toolName),
      output: textOf(content) ?? compactJson(content),
      tone: message.isError === true ? "error" : null,
    };
  }
  if (typeof content === "string") return role === "user" ? { input: content } : { text: content };
  if (!Array.isArray(content)) return null;
  const tools: string[] = [];
  const inputs: string[] = [];
  const results: string[] = [];
  const texts: string[] = [];
  let error = false;
  for (const block of content) {
    if (!isObject(block)) continue;
    if (
      block.type === "tool_use" ||
      block.type === "toolCall" ||
      block.type === "server_tool_use"
    ) {
      tools.push(str(block.name) ?? "?");
      inputs.push(argsSummary(block.input ?? block.arguments));
    } else if (block.type === "tool_result") {
      results.push(textOf(block.content) ?? compactJson(block.content));
      if (block.is_error === true) error = true;
    } else if (block.type === "thinking") {
      const thought = str(block.thinking);
      if (thought) texts.push(`(thinking) ${thought}`);
    } else if (typeof block.text === "string") {
      texts.push(block.text);
    }
  }
  if (tools.length + results.length + texts.length === 0) return null;
  const joined = (parts: string[], separator: string) =>
    parts.length > 0 ? parts.join(separator) : null;
  // A user message's text is the prompt going in; an assistant's is what the agent says.
  const userText = role === "user";
  return {
    tool: joined(tools, ", "),
    input: joined(userText ? [...inputs, ...texts] : inputs, "; "),
    output: joined(results, "\n"),
    text: userText ? null : joined(texts, "\n"),
    tone: error ? "error" : null,
  };
}

/** A Codex thread item (item.started / item.updated / item.completed). */
function describeCodexItem(item: Json): Described {
  const type = str(item.type) ?? "item";
  const failed = item.status === "failed";
  switch (type) {
    case "command_execution": {
      const exit = typeof item.exit_code === "number" ? `exit ${item.exit_code}` : str(item.status);
      const output = str(item.aggregated_output)?.trim();
      return {
        tool: "shell",
        input: str(item.command) ?? argsSummary(item.command),
        output: [exit, output].filter(Boolean).join(" · ") || null,
        tone:
          failed || (typeof item.exit_code === "number" && item.exit_code !== 0) ? "error" : null,
      };
    }
    case "file_change": {
      const changes = Array.isArray(item.changes) ? item.changes : [];
      return {
        tool: "apply_patch",
        input: changes
          .map((c) =>
            isObject(c) ? `${str(c.kind) ?? "?"} ${str(c.path) ?? "?"}` : compactJson(c),
          )
          .join(", "),
        output: str(item.status),
        tone: failed ? "error" : null,
      };
    }
    case "mcp_tool_call":
      return {
        tool: [str(item.server), str(item.tool)].filter(Boolean).join("."),
        input: item.arguments === undefined ? null : argsSummary(item.arguments),
        output: item.result === undefined ? str(item.status) : resultSummary(item.result).text,
        tone: failed ? "error" : null,
      };
    case "web_search":
      return { tool: "web_search", input: str(item.query) };
    case "todo_list":
      return {
        output: Array.isArray(item.items)
          ? item.items
              .map((t) =>
                isObject(t)
                  ? `${t.completed === true ? "[x]" : "[ ]"} ${str(t.text) ?? ""}`
                  : compactJson(t),
              )
              .join("\n")
          : null,
      };
    case "agent_message":
      return { text: str(item.text) };
    case "reasoning":
      return { text: item.text === undefined ? null : `(reasoning) ${str(item.text) ?? ""}` };
    case "error":
      return { output: str(item.message), tone: "error" };
    default:
      return { output: compactJson(item) };
  }
}

function usageSummary(usage: unknown): string | null {
  if (!isObject(usage)) return null;
  return Object.entries(usage)
    .filter(([, value]) => typeof value === "number")
    .map(([key, value]) => `${key} ${value}`)
    .join(", ");
}

/** Everything but the type, as compact JSON: the fallback for events we do not know. */
function restAsJson(event: Json): string | null {
  const { type: _type, ...rest } = event;
  return Object.keys(rest).length > 0 ? compactJson(rest) : null;
}

function describeKnown(type: string, event: Json): Described | null {
  switch (type) {
    // The scripted executor.
    case "tool_call": {
      const result = event.result === undefined ? null : resultSummary(event.result);
      const denied = event.decision === "deny";
      const decision = str(event.decision);
      return {
        tool: str(event.tool),
        input: argsSummary(event.input),
        output:
          [denied ? `denied (${str(event.rule) ?? "policy"})` : null, result?.text]
            .filter(Boolean)
            .join(" · ") || (decision && decision !== "allow" ? decision : null),
        tone: denied ? "deny" : result?.failed ? "error" : null,
      };
    }
    case "final":
      return { text: str(event.text) };
    case "agent_error":
    case "agent_load_failed":
    case "harness.thrown":
    case "sdk_error_after_result":
      return { output: str(event.error) ?? str(event.message) ?? restAsJson(event), tone: "error" };
    case "timeout":
      return { output: `timed out after ${compactJson(event.afterMs)} ms`, tone: "error" };
    case "oracle_apply":
      return {
        tool: "git apply",
        input: str(event.patch),
        output: event.ok === true ? "ok" : "failed",
      };
    // The permission bridge of the SDK hosts.
    case "harness_permission": {
      const denied = event.decision === "deny";
      return {
        tool: str(event.tool),
        input: [str(event.decision), str(event.rule) ? `(${str(event.rule)})` : null]
          .filter(Boolean)
          .join(" "),
        output: str(event.reason),
        tone: denied ? "deny" : null,
      };
    }
    case "stderr":
      return { output: str(event.text), tone: "error" };
    // Claude Code and Qoder SDK messages (Qoder's types carry their subtype: `system:init`).
    case "assistant":
    case "user":
      return describeMessage(event.message);
    case "result": {
      const facts = [
        typeof event.num_turns === "number" ? `${event.num_turns} turns` : null,
        typeof event.total_cost_usd === "number" ? `$${event.total_cost_usd}` : null,
        typeof event.duration_ms === "number" ? `${event.duration_ms} ms` : null,
      ].filter(Boolean);
      const errors = Array.isArray(event.errors)
        ? event.errors.map((e) => textOf(e) ?? compactJson(e))
        : [];
      const failed = event.is_error === true || errors.length > 0;
      return {
        input: facts.length > 0 ? facts.join(", ") : null,
        ...(failed
          ? { output: str(event.result) ?? errors.join("\n"), tone: "error" as const }
          : { text: str(event.result) }),
      };
    }
    // Codex.
    case "item.started":
    case "item.updated":
    case "item.completed":
      return isObject(event.item) ? describeCodexItem(event.item) : null;
    case "turn.completed":
      return { input: usageSummary(event.usage) };
    case "turn.failed":
      return {
        output: textOf(event.error) ?? str(isObject(event.error) ? event.error.message : null),
        tone: "error",
      };
    case "error":
      return { output: str(event.message) ?? restAsJson(event), tone: "error" };
    case "thread.started":
      return { input: str(event.thread_id) };
    // Pi.
    case "message_start":
    case "message_end":
      return describeMessage(event.message);
    case "tool_execution_start":
    case "tool_execution_update":
      return { tool: str(event.toolName), input: argsSummary(event.args) };
    case "tool_execution_end": {
      const result = resultSummary(event.result);
      return {
        tool: str(event.toolName),
        output: result.text,
        tone: event.isError === true || result.failed ? "error" : null,
      };
    }
    case "turn_end":
      return {
        output: Array.isArray(event.toolResults)
          ? `${event.toolResults.length} tool result(s)`
          : null,
      };
    case "agent_end":
      return {
        output: Array.isArray(event.messages) ? `${event.messages.length} message(s)` : null,
      };
    case "agent_start":
    case "turn_start":
    case "turn.started":
    case "aborted":
      return {};
    default:
      return null;
  }
}

/** The kind column: the type, plus a subtype or item type when the event has one. */
function kindOf(type: string, event: Json): string {
  const subtype = str(event.subtype);
  if (subtype && !type.includes(":")) return `${type}:${subtype}`;
  if (type.startsWith("item.") && isObject(event.item) && typeof event.item.type === "string")
    return `${type}: ${event.item.type}`;
  if ((type === "message_start" || type === "message_end") && isObject(event.message)) {
    const role = str(event.message.role);
    if (role) return `${type}: ${role}`;
  }
  return type;
}

/** One row for one event (already parsed). */
export function describeTraceEvent(event: unknown, line: number): TraceRow {
  if (!isObject(event)) {
    return {
      line,
      kind: Array.isArray(event) ? "(array)" : `(${event === null ? "null" : typeof event})`,
      tool: null,
      input: null,
      output: clip(compactJson(event)),
      text: null,
      tone: null,
    };
  }
  const type = str(event.type) ?? "(no type)";
  let described: Described | null = null;
  try {
    described = describeKnown(type, event);
  } catch {
    // An event of a known type with an unexpected shape: shown as JSON below.
    described = null;
  }
  // An agent can put anything into a type, a whole file included.
  const base = { line, kind: clip(kindOf(type, event), 120) };
  if (described === null) {
    const { subtype: _subtype, ...rest } = event;
    return {
      ...base,
      tool: null,
      input: null,
      output: clipOrNull(restAsJson(rest)),
      text: null,
      tone: null,
    };
  }
  return {
    ...base,
    tool: clipOrNull(described.tool ?? null, 120),
    input: clipOrNull(described.input ?? null),
    output: clipOrNull(described.output ?? null),
    text: clipOrNull(described.text ?? null),
    tone: described.tone ?? null,
  };
}

function clipOrNull(text: string | null, max = MAX_FIELD): string | null {
  return text === null || text === "" ? null : clip(text, max);
}

/** One line of trace.jsonl as a row; null for a blank line. A line that is not JSON is shown as it is. */
export function describeTraceLine(text: string, line: number): TraceRow | null {
  if (text.trim() === "") return null;
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch {
    return {
      line,
      kind: "(not JSON)",
      tool: null,
      input: null,
      output: clip(text),
      text: null,
      tone: "error",
    };
  }
  return describeTraceEvent(event, line);
}

/** Every line of trace.jsonl as a row (blank lines skipped). */
export function describeTrace(jsonl: string): TraceRow[] {
  const rows: TraceRow[] = [];
  const lines = jsonl.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const row = describeTraceLine(lines[index]!, index + 1);
    if (row !== null) rows.push(row);
  }
  return rows;
}
