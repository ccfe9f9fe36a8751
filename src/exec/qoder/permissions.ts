// The trial's tool policy as Qoder's permission surface. The PreToolUse hook sees every tool call
// and puts it to the policy; canUseTool, which the CLI asks for calls that need permission, is a
// second line that reuses the hook's decision for the same call. Either way each call is decided
// once, and nothing the CLI asks about is allowed without the policy's answer.
import type {
  CanUseTool,
  HookCallback,
  PermissionResult,
  SyncHookJSONOutput,
} from "@qoder-ai/qoder-agent-sdk";
import type { PolicyDecision, ToolPolicy } from "../../policy/index.js";

export interface QoderGateEvent {
  via: "hook" | "canUseTool";
  toolName: string;
  toolUseId: string | null;
  decision: PolicyDecision;
  /** True when canUseTool reused the hook's decision for the same call. */
  reused: boolean;
}

export interface QoderPermissionGate {
  preToolUse: HookCallback;
  canUseTool: CanUseTool;
  /** Tool-use ids the policy decided, for the after-run check that no call ran undecided. */
  decidedToolUseIds(): ReadonlySet<string>;
}

/** The text the CLI hands the model when the harness refuses a call. */
export function denialMessage(decision: PolicyDecision): string {
  return `Denied by the harness permission policy (${decision.rule}): ${decision.reason}`;
}

function stableJson(value: unknown): string {
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

/**
 * The input the CLI should carry out: for file tools, the physical path the policy checked, so a
 * symlink swapped in later cannot redirect an approved write.
 */
function checkedInput(
  input: Record<string, unknown>,
  decision: PolicyDecision,
): Record<string, unknown> {
  if (decision.target !== undefined && typeof input.file_path === "string") {
    return { ...input, file_path: decision.target.absolutePath };
  }
  return input;
}

export function createQoderPermissionGate(
  policy: ToolPolicy,
  onDecision: (event: QoderGateEvent) => void = () => {},
): QoderPermissionGate {
  const byToolUse = new Map<
    string,
    { toolName: string; input: string; decision: Promise<PolicyDecision> }
  >();

  const decide = async (
    via: QoderGateEvent["via"],
    toolName: string,
    input: unknown,
    toolUseId: string | undefined,
  ): Promise<PolicyDecision> => {
    const inputKey = stableJson(input ?? null);
    const known = toolUseId === undefined ? undefined : byToolUse.get(toolUseId);
    if (known && known.toolName === toolName && known.input === inputKey) {
      const decision = await known.decision;
      onDecision({ via, toolName, toolUseId: toolUseId ?? null, decision, reused: true });
      return decision;
    }
    // A call without an id, or whose input changed since the hook saw it, is decided afresh.
    const pending = policy.decide(toolName, input);
    if (toolUseId !== undefined) {
      byToolUse.set(toolUseId, { toolName, input: inputKey, decision: pending });
    }
    const decision = await pending;
    onDecision({ via, toolName, toolUseId: toolUseId ?? null, decision, reused: false });
    return decision;
  };

  const preToolUse: HookCallback = async (hookInput, toolUseId) => {
    if (hookInput.hook_event_name !== "PreToolUse") return { continue: true };
    const decision = await decide(
      "hook",
      hookInput.tool_name,
      hookInput.tool_input,
      hookInput.tool_use_id ?? toolUseId,
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
        : // No verdict on allow: the CLI's own checks and canUseTool still run afterwards.
          { hookSpecificOutput: { hookEventName: "PreToolUse" } };
    return output;
  };

  const canUseTool: CanUseTool = async (toolName, input, options) => {
    const decision = await decide("canUseTool", toolName, input, options.toolUseID);
    const result: PermissionResult =
      decision.decision === "allow"
        ? // `once`: the CLI must ask again next time rather than remember an approval.
          {
            behavior: "allow",
            updatedInput: checkedInput(input, decision),
            permissionScope: "once",
          }
        : { behavior: "deny", message: denialMessage(decision) };
    return result;
  };

  return { preToolUse, canUseTool, decidedToolUseIds: () => new Set(byToolUse.keys()) };
}
