// The IR stage's public surface: IR 0.1.0 types and schemas, canonical JSON and content hashes.
import { type Validated, validateWith } from "../shared/index.js";
import { type HarnessIrBundle, harnessIrBundleSchema } from "./documents.js";

export { canonicalJson, contentHash, revisionIdOf, sha256Hex } from "./canonical.js";
export {
  type ComponentContract,
  type CompositionRequirement,
  type CompositionSetting,
  type CompositionSpec,
  type HarnessIrBundle,
  type HarnessRevision,
  harnessIrBundleSchema,
  harnessRevisionSchema,
  type Permission,
  type PluginBinding,
  type PluginInclude,
  type PluginManifest,
  type Realization,
  type RealizationAction,
  type ResolutionReport,
  resolutionReportSchema,
  type SettingValue,
  type TargetBinding,
} from "./documents.js";
export { jsonSchemas } from "./schemas.js";
export {
  COMPONENT_KINDS,
  type ComponentKind,
  compareStrength,
  DEGRADATION_POLICIES,
  type DegradationPolicy,
  DURATION_UNITS_MS,
  type DurationUnit,
  IR_VERSION,
  PERMISSION_ACCESSES,
  PERMISSION_DOMAINS,
  type PermissionAccess,
  type PermissionDomain,
  STRENGTHS,
  type Strength,
  weakerStrength,
} from "./vocabulary.js";

/** Validates an IR bundle read from JSON (e.g. a file); problems name JSON paths such as `plugins[0].version`. */
export function parseIrBundle(value: unknown): Validated<HarnessIrBundle> {
  return validateWith(harnessIrBundleSchema, value);
}
