// The IR stage's public surface: IR 0.1.0 types and schemas, canonical JSON and content hashes.
import { type Validated, validateWith } from "../shared/index.js";
import { type HarnessIrBundle, harnessIrBundleSchema, irSchemasV2 } from "./documents.js";
import { IR_VERSION_V2 } from "./vocabulary.js";

export { canonicalJson, contentHash, revisionIdOf, sha256Hex } from "./canonical.js";
export {
  type ComponentContract,
  type ComponentSource,
  type CompositionRequirement,
  type CompositionSetting,
  type CompositionSpec,
  type HarnessIrBundle,
  type HarnessRevision,
  type HookSpec,
  harnessIrBundleSchema,
  harnessRevisionSchema,
  irSchemasV2,
  type McpServerSpec,
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
  COMPONENT_KINDS_V2,
  type ComponentKind,
  compareStrength,
  DEGRADATION_POLICIES,
  type DegradationPolicy,
  DURATION_UNITS_MS,
  type DurationUnit,
  HOOK_EVENTS,
  type HookEvent,
  IR_VERSION,
  IR_VERSION_V2,
  IR_VERSIONS,
  type IrVersion,
  PERMISSION_ACCESSES,
  PERMISSION_DOMAINS,
  type PermissionAccess,
  type PermissionDomain,
  STRENGTHS,
  type Strength,
  weakerStrength,
} from "./vocabulary.js";

/**
 * Validates an IR bundle read from JSON (e.g. a file), of IR 0.1.0 or 0.2.0 as its `irVersion`
 * says; problems name JSON paths such as `plugins[0].version`.
 */
export function parseIrBundle(value: unknown): Validated<HarnessIrBundle> {
  const version = (value as { irVersion?: unknown } | null)?.irVersion;
  return validateWith(
    version === IR_VERSION_V2 ? irSchemasV2.bundle : harnessIrBundleSchema,
    value,
  ) as Validated<HarnessIrBundle>;
}
