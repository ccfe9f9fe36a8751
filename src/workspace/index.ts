export {
  diffSnapshots,
  treeDifferences,
  type UnpatchableEntry,
  unpatchableEntries,
} from "./diff.js";
export { type ApplyPatchResult, applyPatch, capturePatch, NEUTRAL_ATTRIBUTES } from "./git.js";
export { replaceTrialRoot } from "./paths.js";
export { createBaselineArea } from "./shared-baseline.js";
export { snapshotTree } from "./snapshot.js";
export {
  type AbandonedTempRemoval,
  BASELINE_TEMP_PREFIX,
  removeAbandonedTrialTemp,
  TRIAL_TEMP_PREFIX,
} from "./temp.js";
export { createTrialWorkspace } from "./trial.js";
export {
  type BaselineArea,
  type CapturedPatch,
  type CapturePatchOptions,
  type CreateBaselineAreaOptions,
  type CreateTrialWorkspaceOptions,
  FIXTURE_GIT_DIR_REASON,
  type GitBaseline,
  isWorkspaceError,
  type PatchStats,
  type SharedBaseline,
  type SnapshotDiff,
  type SnapshotOptions,
  type TreeEntry,
  type TreeSnapshot,
  type TrialWorkspace,
  treeEntrySchema,
  treeSnapshotSchema,
  WORKSPACE_ERROR_CODES,
  WorkspaceError,
  type WorkspaceErrorCode,
} from "./types.js";
