export { setupChangeLines, setupChanges } from "./changes.js";
export { CiGitError } from "./git.js";
export { CI_BASELINE, CI_CANDIDATE, prepareCi } from "./prepare.js";
