export { readJsonFile, readTextFile } from "./files.js";
export {
  formatJsonPath,
  formatProblems,
  type InputProblem,
  InvalidInputError,
  problemsFromZod,
  type Validated,
  validateWith,
} from "./validation.js";
