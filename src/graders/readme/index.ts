export { containsToken, README_PACKAGE_WEIGHTS } from "./checks.js";
export {
  loadReadmeContract,
  type ReadmePackageContract,
  readmePackageContractSchema,
  validateReadmeContract,
} from "./contract.js";
export {
  createReadmePackageGrader,
  README_PACKAGE_GRADER_ID,
  type ReadmePackageGraderOptions,
} from "./grader.js";
export { permissionFlag, sandboxNodeFlags } from "./sandbox.js";
export { screenExample } from "./screen.js";
