export { containsToken, README_PACKAGE_WEIGHTS, type ReadmeCheckId } from "./checks.js";
export {
  loadReadmeContract,
  type ReadmePackageContract,
  readmePackageContractSchema,
  validateReadmeContract,
} from "./contract.js";
export {
  createReadmePackageGrader,
  MAX_README_BYTES,
  QUICK_START_HEADING,
  README_PACKAGE_GRADER_ID,
  type ReadmePackageGraderOptions,
} from "./grader.js";
export { permissionFlag, sandboxNodeFlags } from "./sandbox.js";
export {
  CODE_GENERATION_GLOBALS,
  HOST_CAPABILITY_GLOBALS,
  type ScreenFinding,
  type ScreenResult,
  type ScreenRule,
  screenExample,
} from "./screen.js";
