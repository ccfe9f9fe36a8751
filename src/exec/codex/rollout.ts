// Reading Codex's session rollout (`$CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl`). The
// JSON event stream of `codex exec` leaves out calls the CLI refused or the sandbox stopped
// (an `apply_patch` outside the project, a command that hit a read-only path), so the audit
// takes the model's calls from the rollout, which records every one of them, and the model
// responses, the models used and the agent's own duration with them. The format is the CLI's
// internal one: everything here is read defensively and a missing field is simply absent.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** One tool call the model made, with what the CLI reported doing for it. */
export interface RolloutCall {
  callId: string;
  /** Tool name (`exec_command`, `apply_patch`, `write_stdin`, …). */
  name: string;
  /** `function`: JSON arguments; `custom`: freeform input text. */
  kind: "function" | "custom" | "web_search";
  arguments: Record<string, unknown>;
  input: string;
  /** The CLI's report of the action (present when it carried the call out). */
  reported?: RolloutReportedItem;
}

type RolloutReportedItem =
  | { type: "CommandExecution"; command: string[]; cwd: string | null }
  | {
      type: "FileChange";
      changes: { path: string; kind: "add" | "delete" | "update"; movePath: string | null }[];
    }
  | { type: string };

export interface RolloutSummary {
  calls: RolloutCall[];
  /** Model responses (one `token_usage_record` each). */
  modelResponses: number;
  /** Models the CLI reports using, sorted. */
  models: string[];
  /** Sum of the turns' `duration_ms`, null when none was reported. */
  durationMs: number | null;
  /** Lines that were not JSON (a partly written file). */
  unreadableLines: number;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function fileUrlPath(value: unknown): string | null {
  const raw = text(value);
  if (raw === null) return null;
  if (!raw.startsWith("file://")) return raw;
  try {
    return decodeURIComponent(new URL(raw).pathname);
  } catch {
    return null;
  }
}

function reportedItem(item: Record<string, unknown>): RolloutReportedItem | undefined {
  const type = text(item.type);
  if (type === null) return undefined;
  if (type === "CommandExecution") {
    const command = Array.isArray(item.command)
      ? item.command.filter((w): w is string => typeof w === "string")
      : [];
    return { type, command, cwd: fileUrlPath(item.cwd) };
  }
  if (type === "FileChange") {
    const changes: { path: string; kind: "add" | "delete" | "update"; movePath: string | null }[] =
      [];
    for (const [path, change] of Object.entries(record(item.changes) ?? {})) {
      const detail = record(change);
      const kind = text(detail?.type);
      if (kind !== "add" && kind !== "delete" && kind !== "update") continue;
      changes.push({ path, kind, movePath: text(detail?.move_path) });
    }
    return { type, changes };
  }
  return { type };
}

/** Parses a rollout file's text. */
export function parseRollout(contents: string): RolloutSummary {
  const calls: RolloutCall[] = [];
  const byId = new Map<string, RolloutCall>();
  const reports = new Map<string, RolloutReportedItem>();
  const models = new Set<string>();
  let modelResponses = 0;
  let durationMs: number | null = null;
  let unreadableLines = 0;
  for (const line of contents.split("\n")) {
    if (line.trim() === "") continue;
    let entry: Record<string, unknown> | undefined;
    try {
      entry = record(JSON.parse(line));
    } catch {
      unreadableLines += 1;
      continue;
    }
    const payload = record(entry?.payload);
    if (!entry || !payload) continue;
    const kind = text(entry.type);
    const type = text(payload.type);
    if (kind === "token_usage_record") {
      modelResponses += 1;
    } else if (kind === "turn_context") {
      const model = text(payload.model);
      if (model) models.add(model);
    } else if (
      kind === "response_item" &&
      (type === "function_call" || type === "custom_tool_call")
    ) {
      const callId = text(payload.call_id);
      if (callId === null || byId.has(callId)) continue;
      let args: Record<string, unknown> = {};
      if (type === "function_call") {
        try {
          args = record(JSON.parse(text(payload.arguments) ?? "{}")) ?? {};
        } catch {
          args = {};
        }
      }
      // A tool of a namespace (Codex offers each MCP server as `mcp__<server>`) is named as the
      // policy knows it: `mcp__<server>__<tool>`.
      const namespace = text(payload.namespace);
      const name = text(payload.name) ?? "";
      const call: RolloutCall = {
        callId,
        name: namespace?.startsWith("mcp__") ? `${namespace}__${name}` : name,
        kind: type === "function_call" ? "function" : "custom",
        arguments: args,
        input: text(payload.input) ?? "",
      };
      calls.push(call);
      byId.set(callId, call);
    } else if (kind === "response_item" && type === "web_search_call") {
      const callId = text(payload.id) ?? `web_search_${calls.length}`;
      const action = record(payload.action);
      calls.push({
        callId,
        name: "web_search",
        kind: "web_search",
        arguments: { query: text(action?.query) ?? "" },
        input: "",
      });
    } else if (kind === "event_msg" && type === "item_completed") {
      const item = record(payload.item);
      const id = text(item?.id);
      const reported = item ? reportedItem(item) : undefined;
      if (id !== null && reported) reports.set(id, reported);
    } else if (kind === "event_msg" && type === "task_complete") {
      if (typeof payload.duration_ms === "number") {
        durationMs = (durationMs ?? 0) + payload.duration_ms;
      }
    }
  }
  for (const call of calls) {
    const reported = reports.get(call.callId);
    if (reported) call.reported = reported;
  }
  return { calls, modelResponses, models: [...models].sort(), durationMs, unreadableLines };
}

/** The rollout file of a thread (or the only one, when the thread id is unknown); null if none. */
async function findRolloutFile(codexHome: string, threadId: string | null): Promise<string | null> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < 4) await walk(path, depth + 1);
      else if (entry.isFile() && /^rollout-.*\.jsonl$/.test(entry.name)) found.push(path);
    }
  };
  await walk(join(codexHome, "sessions"), 0);
  if (threadId !== null) return found.find((path) => path.endsWith(`-${threadId}.jsonl`)) ?? null;
  return found.length === 1 ? (found[0] ?? null) : null;
}

export async function readRollout(
  codexHome: string,
  threadId: string | null,
): Promise<RolloutSummary | null> {
  const file = await findRolloutFile(codexHome, threadId);
  if (file === null) return null;
  try {
    return parseRollout(await readFile(file, "utf8"));
  } catch {
    return null;
  }
}
