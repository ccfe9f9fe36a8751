export {
  diffSnapshots,
  treeDifferences,
  unpatchableEntries,
} from "./diff.js";
export {
  diskUsage,
  freeBytes,
  isDiskFull,
  watchDiskUse,
} from "./disk.js";
export { applyPatch, capturePatch } from "./git.js";
export { replaceTrialRoot } from "./paths.js";
export { createBaselineArea } from "./shared-baseline.js";
export { cheapToHash, snapshotTree } from "./snapshot.js";
export {
  type AbandonedTempRemoval,
  removeAbandonedTrialTemp,
  TRIAL_TEMP_PREFIX,
} from "./temp.js";
export { createTrialWorkspace } from "./trial.js";
export {
  type BaselineArea,
  FIXTURE_GIT_DIR_REASON,
  isWorkspaceError,
  type SharedBaseline,
  type TreeSnapshot,
  type TrialWorkspace,
  treeSnapshotSchema,
  WorkspaceError,
} from "./types.js";
