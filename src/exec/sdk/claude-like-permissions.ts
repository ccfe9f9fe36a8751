// The PreToolUse-hook and canUseTool permission bridge the claude-code and qoder hosts share:
// their SDKs have the same permission surface. The types are structural; each host assigns the
// bridge's callbacks to its own SDK's `HookCallback` and `CanUseTool`, so the compiler checks the
// fit, and passes in how an allowed call is answered (the one place the hosts differ).
import { canonicalJson } from "../../ir/index.js";
import type { PolicyDecision, ToolPolicy } from "../../policy/index.js";
import type { ReceiptBuilder } from "./common.js";

/** What the executor learns about each decision (for the trace). */
export interface PermissionDecisionEvent {
  via: "hook" | "canUseTool";
  toolName: string;
  toolUseId: string | null;
  decision: PolicyDecision;
  /** True when canUseTool reused the hook's decision instead of asking the policy again. */
  reused: boolean;
}

/** Records each decision as a `harness_permission` trace event. */
export function tracePermissionDecisions(
  builder: ReceiptBuilder,
): (event: PermissionDecisionEvent) => void {
  return (event) =>
    builder.event("harness_permission", {
      via: event.via,
      tool: event.toolName,
      toolUseId: event.toolUseId,
      seq: event.decision.seq,
      decision: event.decision.decision,
      rule: event.decision.rule,
      reason: event.decision.reason,
      reused: event.reused,
    });
}

/** The text the client shows the model when the harness refuses a call. */
function denialMessage(decision: PolicyDecision): string {
  return `Denied by the harness permission policy (${decision.rule}): ${decision.reason}`;
}

/** The hook input; only PreToolUse is judged, every other event passes. */
interface ClaudeLikeHookInput {
  hook_event_name: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_use_id?: string;
}

interface PreToolUseInput extends ClaudeLikeHookInput {
  hook_event_name: "PreToolUse";
  tool_name: string;
}

// Both SDKs type PreToolUse inputs with a required `tool_name`; the event name discriminates.
function isPreToolUse(input: ClaudeLikeHookInput): input is PreToolUseInput {
  return input.hook_event_name === "PreToolUse";
}

type ClaudeLikeHookOutput =
  | { continue: true }
  | {
      hookSpecificOutput: {
        hookEventName: "PreToolUse";
        permissionDecision?: "deny";
        permissionDecisionReason?: string;
      };
    };

export interface ClaudeLikePermissionBridge<Allow> {
  preToolUse(
    input: ClaudeLikeHookInput,
    toolUseId: string | undefined,
  ): Promise<ClaudeLikeHookOutput>;
  canUseTool(
    toolName: string,
    input: Record<string, unknown>,
    options: { toolUseID?: string },
  ): Promise<Allow | { behavior: "deny"; message: string }>;
  /** Tool-use ids the policy decided, for an after-run check that no call ran undecided. */
  decidedToolUseIds(): ReadonlySet<string>;
}

/**
 * Binds a trial's policy to a Claude-shaped permission surface. The PreToolUse hook puts EVERY
 * tool call to the policy (the clients skip `canUseTool` for calls they consider safe, such as
 * in-cwd reads); `canUseTool` is a second line that reuses the hook's decision for the same
 * tool_use id and the same input, so the decisions log holds each call once. A call canUseTool
 * sees without a hook decision, or with a changed input, is put to the policy again, so nothing
 * is allowed unjudged. `allow` builds the host's allow result (Qoder pins the checked path and
 * asks for a one-time approval; Claude passes the input through).
 */
export function createClaudeLikePermissionBridge<Allow>(
  policy: ToolPolicy,
  onDecision: (event: PermissionDecisionEvent) => void,
  allow: (input: Record<string, unknown>, decision: PolicyDecision) => Allow,
): ClaudeLikePermissionBridge<Allow> {
  const byToolUse = new Map<
    string,
    { toolName: string; input: string; decision: Promise<PolicyDecision> }
  >();

  const decide = async (
    via: PermissionDecisionEvent["via"],
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

  return {
    async preToolUse(input, toolUseId) {
      if (!isPreToolUse(input)) return { continue: true };
      const decision = await decide(
        "hook",
        input.tool_name,
        input.tool_input,
        input.tool_use_id ?? toolUseId,
      );
      return decision.decision === "deny"
        ? {
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "deny",
              permissionDecisionReason: denialMessage(decision),
            },
          }
        : // No verdict on allow: the client's own checks and canUseTool still run afterwards.
          { hookSpecificOutput: { hookEventName: "PreToolUse" } };
    },
    async canUseTool(toolName, input, options) {
      const decision = await decide("canUseTool", toolName, input, options.toolUseID);
      return decision.decision === "allow"
        ? allow(input, decision)
        : { behavior: "deny", message: denialMessage(decision) };
    },
    decidedToolUseIds: () => new Set(byToolUse.keys()),
  };
}
