// The harness policy as Claude Code's permission surface. A PreToolUse hook puts EVERY tool call
// to the policy (Claude Code skips `canUseTool` for in-cwd reads and read-only Bash); the
// `canUseTool` callback is a second line that reuses the hook's decision for the same call, so
// the decisions log holds each call exactly once.
import type {
  CanUseTool,
  HookCallback,
  PermissionResult,
  SyncHookJSONOutput,
} from "@anthropic-ai/claude-agent-sdk";
import type { PolicyDecision, ToolPolicy } from "../../policy/index.js";

/** What the executor learns about each decision (for the trace). */
export interface GateDecisionEvent {
  via: "hook" | "canUseTool";
  toolName: string;
  toolUseId: string | null;
  decision: PolicyDecision;
  /** True when canUseTool reused the hook's decision instead of asking the policy again. */
  reused: boolean;
}

export interface PermissionGate {
  preToolUse: HookCallback;
  canUseTool: CanUseTool;
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : a > b ? 1 : 0,
          ),
        )
      : inner,
  );
}

/** The text Claude Code shows the model when the harness refuses a call. */
export function denialMessage(decision: PolicyDecision): string {
  return `Denied by the harness permission policy (${decision.rule}): ${decision.reason}`;
}

/**
 * Binds a trial's policy to Claude Code. A call is decided once per tool_use id: the hook asks
 * the policy and remembers the answer with the input it judged; canUseTool for the same id and
 * the same input reuses it. A call canUseTool sees without a hook decision (or with a changed
 * input) is put to the policy again, so nothing is allowed unjudged.
 */
export function createPermissionGate(
  policy: ToolPolicy,
  onDecision: (event: GateDecisionEvent) => void = () => {},
): PermissionGate {
  const byToolUse = new Map<
    string,
    { toolName: string; input: string; decision: Promise<PolicyDecision> }
  >();

  const decide = async (
    via: GateDecisionEvent["via"],
    toolName: string,
    input: unknown,
    toolUseId: string | undefined,
  ): Promise<PolicyDecision> => {
    const inputKey = canonicalJson(input ?? null);
    const known = toolUseId === undefined ? undefined : byToolUse.get(toolUseId);
    if (known && known.toolName === toolName && known.input === inputKey) {
      const decision = await known.decision;
      onDecision({ via, toolName, toolUseId: toolUseId ?? null, decision, reused: true });
      return decision;
    }
    const pending = policy.decide(toolName, input);
    if (toolUseId !== undefined) {
      byToolUse.set(toolUseId, { toolName, input: inputKey, decision: pending });
    }
    const decision = await pending;
    onDecision({ via, toolName, toolUseId: toolUseId ?? null, decision, reused: false });
    return decision;
  };

  const preToolUse: HookCallback = async (input, toolUseId) => {
    if (input.hook_event_name !== "PreToolUse") return { continue: true };
    const decision = await decide(
      "hook",
      input.tool_name,
      input.tool_input,
      input.tool_use_id ?? toolUseId,
    );
    const output: SyncHookJSONOutput =
      decision.decision === "deny"
        ? {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "deny",
              permissionDecisionReason: denialMessage(decision),
            },
          }
        : // No decision: Claude Code's own checks and canUseTool still run after an allow here.
          { hookSpecificOutput: { hookEventName: "PreToolUse" } };
    return output;
  };

  const canUseTool: CanUseTool = async (toolName, input, options) => {
    const decision = await decide("canUseTool", toolName, input, options.toolUseID);
    const result: PermissionResult =
      decision.decision === "allow"
        ? { behavior: "allow", updatedInput: input }
        : { behavior: "deny", message: denialMessage(decision) };
    return result;
  };

  return { preToolUse, canUseTool };
}
