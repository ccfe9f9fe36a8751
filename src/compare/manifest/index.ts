export { loadHarnessCatalog } from "./catalog.js";
export {
  type ManifestValidationReport,
  validateManifestForCli,
} from "./cli-summary.js";
export {
  type CompositionCatalog,
  checkCompositions,
} from "./compositions.js";
export { fixtureIrregularEntries } from "./files.js";
export {
  type LoadManifestOptions,
  type LoadManifestResult,
  loadManifest,
  MANIFEST_SCHEMA_VERSIONS,
  type ManifestDocument,
} from "./load.js";
export { checkOutDir } from "./out-dir.js";
export { PORTABLE_RELATIVE_PATH_PATTERN, portablePathProblem } from "./paths.js";
export { missingGraderPrograms, programFound } from "./programs.js";
export {
  harnessCompareV1Schema,
  V1_VALIDATION_COMMANDS,
} from "./schema-v1.js";
export { type HarnessCompareV2, harnessCompareV2Schema } from "./schema-v2.js";
