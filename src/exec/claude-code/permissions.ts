// The harness policy as Claude Code's permission surface: the shared PreToolUse-hook and
// canUseTool bridge (../sdk/claude-like-permissions.ts), typed with the Claude Agent SDK's own
// callback types. The hook is what sees every call: Claude Code skips `canUseTool` for in-cwd
// reads and read-only Bash. An allowed call runs with the input Claude Code asked about.
import type { CanUseTool, HookCallback } from "@anthropic-ai/claude-agent-sdk";
import type { ToolPolicy } from "../../policy/index.js";
import {
  createClaudeLikePermissionBridge,
  type PermissionDecisionEvent,
} from "../sdk/claude-like-permissions.js";

export interface PermissionGate {
  preToolUse: HookCallback;
  canUseTool: CanUseTool;
}

/** Binds a trial's policy to Claude Code; each call is decided once per tool_use id. */
export function createPermissionGate(
  policy: ToolPolicy,
  onDecision: (event: PermissionDecisionEvent) => void = () => {},
): PermissionGate {
  const bridge = createClaudeLikePermissionBridge(policy, onDecision, (input) => ({
    behavior: "allow" as const,
    updatedInput: input,
  }));
  return { preToolUse: bridge.preToolUse, canUseTool: bridge.canUseTool };
}
