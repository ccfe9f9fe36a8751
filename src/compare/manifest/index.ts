export { type AgentReference, parseAgentReference } from "./agents.js";
export { loadHarnessCatalog } from "./catalog.js";
export {
  type ManifestValidationOptions,
  type ManifestValidationReport,
  validateManifestForCli,
} from "./cli-summary.js";
export {
  type CatalogLoader,
  type CatalogLoadResult,
  type CompositionCatalog,
  checkCompositions,
} from "./compositions.js";
export { type FixtureIrregularKind, fixtureIrregularEntries } from "./files.js";
export {
  type LoadManifestOptions,
  type LoadManifestResult,
  loadManifest,
  MANIFEST_SCHEMA_VERSIONS,
  type ManifestDocument,
} from "./load.js";
export { checkOutDir, type OutDirOptions } from "./out-dir.js";
export { PORTABLE_RELATIVE_PATH_PATTERN, portablePathProblem } from "./paths.js";
export {
  type HarnessCompareV1,
  harnessCompareV1Schema,
  V1_RUNTIME_PROFILES,
  V1_VALIDATION_COMMANDS,
} from "./schema-v1.js";
export { type HarnessCompareV2, harnessCompareV2Schema, V2_DEFAULTS } from "./schema-v2.js";
