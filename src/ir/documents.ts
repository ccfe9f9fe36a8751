// IR 0.1.0 documents (docs/language.md). Every object is closed: an unknown property is a validation error.
// Property order in these definitions is the order the compiler and resolver emit, which is the
// reference implementation's order, so `JSON.stringify` of our output matches its files byte for byte.
import { z } from "zod";
import {
  COMPONENT_KINDS,
  DEGRADATION_POLICIES,
  IR_VERSION,
  PERMISSION_ACCESSES,
  PERMISSION_DOMAINS,
  STRENGTHS,
} from "./vocabulary.js";

const irVersion = z.literal(IR_VERSION).describe("IR version of this document");
const identifier = z
  .string()
  .regex(/^[_a-zA-Z][\w-]*$/)
  .describe("identifier: a letter or underscore, then letters, digits, underscores or hyphens");
const strength = z.enum(STRENGTHS).describe("unsupported < advisory < wired < enforced");
const contentHashString = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .describe("sha256 of the canonical JSON of the referenced document");

const permissionSchema = z.strictObject({
  domain: z.enum(PERMISSION_DOMAINS),
  access: z.enum(PERMISSION_ACCESSES),
});

export const componentContractSchema = z
  .strictObject({
    irVersion,
    kind: z.literal("component-contract"),
    id: identifier,
    componentKind: z.enum(COMPONENT_KINDS),
    description: z.string().optional(),
    inputs: z.array(identifier),
    outputs: z.array(identifier),
    permissions: z.array(permissionSchema),
  })
  .describe(
    "A component's contract: what it is, what it consumes and produces, what it may touch.",
  );

export const targetBindingSchema = z
  .strictObject({
    irVersion,
    kind: z.literal("target-binding"),
    componentId: identifier,
    host: identifier,
    mechanism: identifier,
    strength,
    notes: z.string().optional(),
  })
  .describe("How one host declares it can materialize one component, and at what strength.");

const pluginBindingSchema = z.strictObject({
  componentId: identifier,
  host: identifier,
  mechanism: identifier,
  strength,
});

export const pluginManifestSchema = z
  .strictObject({
    irVersion,
    kind: z.literal("plugin-manifest"),
    id: identifier,
    version: z.string().min(1).describe("semantic version as written in the source"),
    provides: z.array(identifier),
    bindings: z
      .array(pluginBindingSchema)
      .describe("the bindings of the provided components, in provides order then binding order"),
  })
  .describe("One version of a plugin, joined with the bindings of the components it provides.");

const includeSchema = z.strictObject({
  pluginId: identifier,
  range: z.string().min(1).describe("semver range without the leading '@'"),
});

const requirementSchema = z.strictObject({
  componentId: identifier,
  preferred: strength.optional().describe("absent when the source states no preference"),
  minimum: strength,
  onDegrade: z.enum(DEGRADATION_POLICIES),
});

const settingValueSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("int"), value: z.number().int().nonnegative() }),
  z.strictObject({
    type: z.literal("duration"),
    value: z
      .string()
      .regex(/^\d+(ms|s|m|h)$/)
      .describe("as written"),
    ms: z.number().int().nonnegative(),
  }),
  z.strictObject({ type: z.literal("string"), value: z.string() }),
  z.strictObject({ type: z.literal("boolean"), value: z.boolean() }),
]);

const settingSchema = z.strictObject({
  key: z
    .string()
    .regex(/^[_a-zA-Z][\w-]*(\.[_a-zA-Z][\w-]*)*$/)
    .describe("dotted key"),
  value: settingValueSchema,
});

export const compositionSpecSchema = z
  .strictObject({
    irVersion,
    kind: z.literal("composition-spec"),
    id: identifier,
    target: identifier.describe("host the composition is assembled for"),
    includes: z.array(includeSchema),
    requirements: z.array(requirementSchema),
    settings: z.array(settingSchema),
  })
  .describe("A composition with `extends` already flattened (inherited members first).");

export const harnessIrBundleSchema = z
  .strictObject({
    irVersion,
    kind: z.literal("harness-ir-bundle"),
    components: z.array(componentContractSchema),
    bindings: z.array(targetBindingSchema),
    plugins: z.array(pluginManifestSchema),
    compositions: z.array(compositionSpecSchema),
  })
  .describe("Everything one compilation produced, in source order (files in input order).");

const realizationSchema = z.strictObject({
  componentId: identifier,
  requestedMinimum: strength.describe("'unsupported' for a component no requirement names"),
  requestedPreferred: strength.optional(),
  declaredStrength: strength,
  declaredMechanism: identifier.nullable(),
  realized: strength,
  materializedMechanism: identifier.nullable(),
  action: z.enum(["satisfied", "degraded", "failed"]),
  reason: z.string().optional(),
});

export const harnessRevisionSchema = z
  .strictObject({
    irVersion,
    kind: z.literal("harness-revision"),
    composition: z.strictObject({ id: identifier, contentHash: contentHashString }),
    target: z.strictObject({ host: identifier }),
    resolved: z.strictObject({
      plugins: z.array(
        z.strictObject({
          id: identifier,
          version: z.string().min(1),
          contentHash: contentHashString,
        }),
      ),
      components: z.array(z.strictObject({ id: identifier, contentHash: contentHashString })),
    }),
    realization: z.array(realizationSchema),
    permissions: z.array(permissionSchema),
    settings: z.array(settingSchema),
    revisionId: z
      .string()
      .regex(/^hr_[0-9a-f]{32}$/)
      .describe("hr_ + the first 32 hex digits of sha256(canonical revision without revisionId)"),
  })
  .describe("The immutable result of resolving one composition for one host.");

export const resolutionReportSchema = z
  .strictObject({
    irVersion,
    kind: z.literal("resolution-report"),
    compositionId: z.string(),
    target: z.string().describe("host resolved for; 'unknown' when the composition is missing"),
    status: z.enum(["resolved", "failed"]),
    realizations: z.array(realizationSchema),
    errors: z.array(z.string()),
  })
  .describe("What resolving a composition decided, including why it failed.");

export type Permission = z.infer<typeof permissionSchema>;
export type ComponentContract = z.infer<typeof componentContractSchema>;
export type TargetBinding = z.infer<typeof targetBindingSchema>;
export type PluginBinding = z.infer<typeof pluginBindingSchema>;
export type PluginManifest = z.infer<typeof pluginManifestSchema>;
export type PluginInclude = z.infer<typeof includeSchema>;
export type CompositionRequirement = z.infer<typeof requirementSchema>;
export type SettingValue = z.infer<typeof settingValueSchema>;
export type CompositionSetting = z.infer<typeof settingSchema>;
export type CompositionSpec = z.infer<typeof compositionSpecSchema>;
export type HarnessIrBundle = z.infer<typeof harnessIrBundleSchema>;
export type Realization = z.infer<typeof realizationSchema>;
export type RealizationAction = Realization["action"];
export type HarnessRevision = z.infer<typeof harnessRevisionSchema>;
export type ResolutionReport = z.infer<typeof resolutionReportSchema>;
