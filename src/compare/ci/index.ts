export { setupChangeLines, setupChanges } from "./changes.js";
export { type CiCommentInput, ciCommentBody, ciCommentMarker, ciStatusState } from "./comment.js";
export { CiGitError } from "./git.js";
export { CI_BASELINE, CI_CANDIDATE, prepareCi } from "./prepare.js";
export {
  type CiForge,
  CiForgeError,
  pullRequestHead,
  setCommitStatus,
  upsertComment,
} from "./publish.js";
