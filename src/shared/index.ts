export {
  fileReadProblem,
  jsonErrorLocation,
  jsonErrorOffset,
  readJsonFile,
  readTextFile,
} from "./files.js";
export { isPathInside } from "./paths.js";
export {
  type CommandResult,
  minimalEnv,
  npmArgv,
  QUIET_NPM_ENV,
  type RunCommandOptions,
  runCommand,
} from "./process.js";
export { escapeRegExp, replaceLongestFirst } from "./text.js";
export {
  formatJsonPath,
  formatProblems,
  type InputProblem,
  InvalidInputError,
  problemsFromZod,
  type Validated,
  validateWith,
} from "./validation.js";
