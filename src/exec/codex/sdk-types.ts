// The part of `@openai/codex-sdk` the executor uses, written out structurally so that harnesslab's
// published types do not require the optional SDK to be installed. The tests check that the real
// module and its event types are assignable to these shapes.

type CodexSandboxMode = "read-only" | "workspace-write" | "danger-full-access";
type CodexApprovalMode = "never" | "on-request" | "on-failure" | "untrusted";
type CodexWebSearchMode = "disabled" | "cached" | "live";

export type CodexConfigValue = string | number | boolean | CodexConfigValue[] | CodexConfigObject;
export interface CodexConfigObject {
  [key: string]: CodexConfigValue;
}

/** `new Codex(options)`. */
export interface CodexClientOptions {
  codexPathOverride?: string;
  baseUrl?: string;
  apiKey?: string;
  config?: CodexConfigObject;
  configOverrides?: string[];
  /** The CLI's whole environment (the SDK inherits nothing when this is given). */
  env?: Record<string, string>;
}

/** `codex.startThread(options)`. */
export interface CodexThreadOptions {
  model?: string;
  sandboxMode?: CodexSandboxMode;
  workingDirectory?: string;
  skipGitRepoCheck?: boolean;
  networkAccessEnabled?: boolean;
  webSearchMode?: CodexWebSearchMode;
  webSearchEnabled?: boolean;
  approvalPolicy?: CodexApprovalMode;
  additionalDirectories?: string[];
}

interface CodexUsage {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_output_tokens: number;
}

export type CodexThreadItem =
  | { id: string; type: "agent_message"; text: string }
  | { id: string; type: "reasoning"; text: string }
  | {
      id: string;
      type: "command_execution";
      command: string;
      aggregated_output: string;
      exit_code?: number;
      status: "in_progress" | "completed" | "failed";
    }
  | {
      id: string;
      type: "file_change";
      changes: { path: string; kind: "add" | "delete" | "update" }[];
      status: "completed" | "failed";
    }
  | {
      id: string;
      type: "mcp_tool_call";
      server: string;
      tool: string;
      arguments: unknown;
      status: "in_progress" | "completed" | "failed";
    }
  | { id: string; type: "web_search"; query: string }
  | { id: string; type: "todo_list"; items: { text: string; completed: boolean }[] }
  | { id: string; type: "error"; message: string };

/** One JSONL event of `codex exec --experimental-json`. */
export type CodexThreadEvent =
  | { type: "thread.started"; thread_id: string }
  | { type: "turn.started" }
  | { type: "turn.completed"; usage: CodexUsage }
  | { type: "turn.failed"; error: { message: string } }
  | { type: "item.started"; item: CodexThreadItem }
  | { type: "item.updated"; item: CodexThreadItem }
  | { type: "item.completed"; item: CodexThreadItem }
  | { type: "error"; message: string };

export interface CodexThreadLike {
  runStreamed(
    input: string,
    options?: { signal?: AbortSignal },
  ): Promise<{ events: AsyncGenerator<CodexThreadEvent> }>;
}

interface CodexClientLike {
  startThread(options?: CodexThreadOptions): CodexThreadLike;
}

/** The module shape `import("@openai/codex-sdk")` provides (the injectable seam). */
export interface CodexSdkModule {
  Codex: new (options?: CodexClientOptions) => CodexClientLike;
}
