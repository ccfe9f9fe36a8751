// The trial's tool policy as Qoder's permission surface: the shared PreToolUse-hook and
// canUseTool bridge (../sdk/claude-like-permissions.ts), typed with the Qoder Agent SDK's own
// callback types. Where Qoder differs: an allowed file call is pinned to the path the policy
// checked, every approval is for this call only, and the decided ids are kept for the after-run
// check that the CLI ran no call undecided.
import type { CanUseTool, HookCallback } from "@qoder-ai/qoder-agent-sdk";
import type { PolicyDecision, ToolPolicy } from "../../policy/index.js";
import {
  createClaudeLikePermissionBridge,
  type PermissionDecisionEvent,
} from "../sdk/claude-like-permissions.js";

export interface QoderPermissionGate {
  preToolUse: HookCallback;
  canUseTool: CanUseTool;
  /** Tool-use ids the policy decided, for the after-run check that no call ran undecided. */
  decidedToolUseIds(): ReadonlySet<string>;
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
  onDecision: (event: PermissionDecisionEvent) => void = () => {},
): QoderPermissionGate {
  return createClaudeLikePermissionBridge(policy, onDecision, (input, decision) => ({
    behavior: "allow" as const,
    updatedInput: checkedInput(input, decision),
    // `once`: the CLI must ask again next time rather than remember an approval.
    permissionScope: "once" as const,
  }));
}
