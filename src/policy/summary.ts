/**
 * One-line descriptions of tool calls for the decisions log. They must be safe to publish: file
 * contents are reduced to their length, the trial path becomes `<trial-root>`, and strings that
 * look like credentials are masked even inside commands and URLs.
 */

import { replaceLongestFirst } from "../shared/index.js";
import type { ToolUse } from "./types.js";

const MAX_SUMMARY = 200;
const MAX_FIELD = 120;

const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(sk|pk|rk)-[A-Za-z0-9_-]{12,}/g,
  /\b(ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abprs])[-_][A-Za-z0-9_-]{8,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
  // key=value pairs in query strings and env assignments whose name says "secret".
  // The value may be quoted (`password="…"`); a plain number (`max_tokens=100`) is no secret.
  /\b([A-Za-z0-9_-]*(?:token|secret|password|passwd|api[-_]?key|auth|signature|sig)[A-Za-z0-9_-]*)=(["']?)(?!\d+(?:[&\s"']|$))([^&\s"']+)\2/gi,
];

/** Masks substrings that look like credentials. */
export function maskCredentials(text: string): string {
  let out = text;
  for (const pattern of CREDENTIAL_PATTERNS) {
    out = out.replace(pattern, (match, name: string | undefined) => {
      if (match.includes("=") && name !== undefined) return `${name}=[REDACTED]`;
      if (/^(Bearer|Basic|Token)\s/i.test(match)) return `${match.split(/\s/)[0]} [REDACTED]`;
      return "[REDACTED]";
    });
  }
  return out;
}

/** Replaces every alias of the trial root (longest first, so a realpath inside a symlinked tmp wins). */
export function replaceRootAliases(text: string, aliases: readonly string[]): string {
  return replaceLongestFirst(
    text,
    aliases.filter((a) => a.length > 1).map((a) => [a, "<trial-root>"] as const),
  );
}

function clip(text: string, limit: number): string {
  const oneLine = text.replace(/\r?\n/g, "⏎");
  return oneLine.length > limit ? `${oneLine.slice(0, limit - 1)}…` : oneLine;
}

function field(input: unknown, name: string): unknown {
  return typeof input === "object" && input !== null
    ? (input as Record<string, unknown>)[name]
    : undefined;
}

function lengthOf(value: unknown): string {
  return typeof value === "string" ? `${value.length} chars` : typeof value;
}

/** A short description of a call, by tool. Unknown tools list their string fields (clipped). */
export function summarizeInput(
  canonicalTool: string | null,
  input: unknown,
  rootAliases: readonly string[],
): string {
  // Scrub before clipping so a cut can never leave half a path or half a credential behind.
  const quoted = (value: unknown): string =>
    typeof value === "string"
      ? JSON.stringify(clip(maskCredentials(replaceRootAliases(value, rootAliases)), MAX_FIELD))
      : typeof value === "number" || typeof value === "boolean"
        ? String(value)
        : typeof value;
  let summary: string;
  switch (canonicalTool) {
    case "Read":
      summary = `file_path=${quoted(field(input, "file_path") ?? field(input, "path"))}`;
      break;
    case "Write":
      summary = `file_path=${quoted(field(input, "file_path") ?? field(input, "path"))} content=${lengthOf(field(input, "content"))}`;
      break;
    case "Edit":
      summary = `file_path=${quoted(field(input, "file_path") ?? field(input, "path"))} old_string=${lengthOf(field(input, "old_string"))} new_string=${lengthOf(field(input, "new_string"))}`;
      break;
    case "MultiEdit": {
      const edits = field(input, "edits");
      summary = `file_path=${quoted(field(input, "file_path") ?? field(input, "path"))} edits=${Array.isArray(edits) ? edits.length : typeof edits}`;
      break;
    }
    case "Glob":
    case "Grep": {
      const path = field(input, "path");
      summary = `pattern=${quoted(field(input, "pattern"))}${path === undefined ? "" : ` path=${quoted(path)}`}`;
      break;
    }
    case "Bash":
      summary = `command=${quoted(field(input, "command"))}`;
      break;
    default: {
      if (typeof input !== "object" || input === null) {
        summary = `input=${typeof input}`;
        break;
      }
      const parts = Object.keys(input)
        .sort()
        .slice(0, 6)
        .map((key) => `${key}=${quoted((input as Record<string, unknown>)[key])}`);
      summary = parts.join(" ");
    }
  }
  return clip(summary, MAX_SUMMARY);
}

/** Longest command a transcript keeps (a JSON body can be long; the decisions log keeps less). */
const MAX_TRANSCRIPT_COMMAND = 2000;

/** A call's kind for the transcript: Bash is shell (with its command), `mcp__server__tool` mcp. */
export function describeToolUse(
  toolName: string,
  canonicalTool: string | null,
  input: unknown,
  rootAliases: readonly string[],
): Pick<ToolUse, "kind" | "tool" | "command" | "server" | "mcpTool"> {
  if (canonicalTool === "Bash") {
    const command = field(input, "command");
    return {
      kind: "shell",
      tool: toolName,
      ...(typeof command === "string"
        ? {
            command: clip(
              maskCredentials(replaceRootAliases(command, rootAliases)),
              MAX_TRANSCRIPT_COMMAND,
            ),
          }
        : {}),
    };
  }
  const mcp = /^mcp__(.+?)__(.+)$/.exec(toolName);
  if (mcp) return { kind: "mcp", tool: toolName, server: mcp[1], mcpTool: mcp[2] };
  return { kind: "other", tool: toolName };
}
