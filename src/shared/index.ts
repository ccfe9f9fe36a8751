export { removeAtomicLeftovers, writeFileAtomic } from "./atomic-file.js";
export {
  fileReadProblem,
  jsonErrorLocation,
  readJsonFile,
  readTextFile,
  readValidJsonFile,
} from "./files.js";
export { readHarnessSource } from "./harness-source.js";
export { duplicateKeyProblems, isRecord } from "./json-keys.js";
export { isPathInside } from "./paths.js";
export { runPool } from "./pool.js";
export {
  type CommandResult,
  killRunningCommands,
  minimalEnv,
  npmArgv,
  type ProcessGroup,
  QUIET_NPM_ENV,
  runCommand,
  startProcessGroup,
} from "./process.js";
export {
  readRegularFile,
  writeRegularFile,
} from "./regular-file.js";
export { requestTargetProblem } from "./request-target.js";
export { escapeRegExp, replaceLongestFirst, shellQuote } from "./text.js";
export {
  formatJsonPath,
  type InputProblem,
  InvalidInputError,
  problemCount,
  type Validated,
  validateWith,
} from "./validation.js";
