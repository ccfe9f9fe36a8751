// IR 0.1.0 and 0.2.0 documents (docs/language.md). Every object is closed: an unknown property is a validation error.
// Property order in these definitions is the order the compiler and resolver emit, which is the
// reference implementation's order, so `JSON.stringify` of our output matches its files byte for byte.
import { z } from "zod";
import {
  COMPONENT_KINDS,
  COMPONENT_KINDS_V2,
  DEGRADATION_POLICIES,
  HOOK_EVENTS,
  IR_VERSION,
  IR_VERSION_V2,
  IR_VERSIONS,
  PERMISSION_ACCESSES,
  PERMISSION_DOMAINS,
  STRENGTHS,
} from "./vocabulary.js";

const irVersion = z.literal(IR_VERSION).describe("IR version of this document");
const irVersionV2 = z.literal(IR_VERSION_V2).describe("IR version of this document");
const identifier = z
  .string()
  .regex(/^[_a-zA-Z][\w-]*$/)
  .describe("identifier: a letter or underscore, then letters, digits, underscores or hyphens");
const strength = z.enum(STRENGTHS).describe("unsupported < advisory < wired < enforced");
const sha256Hash = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .describe("sha256 of the file's bytes");
const contentHashString = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .describe("sha256 of the canonical JSON of the referenced document");

const permissionSchema = z.strictObject({
  domain: z.enum(PERMISSION_DOMAINS),
  access: z.enum(PERMISSION_ACCESSES),
});

const componentFields = {
  id: identifier,
  description: z.string().optional(),
  inputs: z.array(identifier),
  outputs: z.array(identifier),
  permissions: z.array(permissionSchema),
};

/** A source file of a component: its path inside the source (`/`-separated) and content hash. */
const sourceFileSchema = z.strictObject({
  path: z.string().min(1),
  sha256: sha256Hash,
});

const componentSourceSchema = z
  .strictObject({
    path: z.string().min(1).describe("as written, relative to the .harness file that names it"),
    type: z.enum(["file", "directory"]),
    files: z.array(sourceFileSchema).describe("every file of the source, sorted by path"),
    skill: z
      .strictObject({ name: z.string(), description: z.string() })
      .optional()
      .describe("a skill's SKILL.md front matter"),
  })
  .describe("What the component is made of: a file or folder, hashed file by file.");

const programFields = {
  command: z.string().min(1),
  args: z.array(z.string()),
  env: z.array(z.strictObject({ name: z.string().min(1), value: z.string() })),
};

const mcpServerSchema = z
  .strictObject(programFields)
  .describe("A stdio MCP server: the program the host starts, its arguments and variables.");

const cliProgramSchema = z
  .strictObject(programFields)
  .describe(
    "A command-line program the agent runs by the component's name: the program, the arguments put before the agent's, and its variables.",
  );

const hookSchema = z
  .strictObject({
    event: z.enum(HOOK_EVENTS),
    command: z.array(z.string().min(1)).min(1),
  })
  .describe("The host event a hook runs on and the command it runs (an argument list).");

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

/** IR 0.2.0: a component that may also carry what it is (a source, an MCP server, a hook, tools). */
const componentContractSchemaV2 = z
  .strictObject({
    irVersion: irVersionV2,
    kind: z.literal("component-contract"),
    id: componentFields.id,
    componentKind: z.enum(COMPONENT_KINDS_V2),
    description: componentFields.description,
    inputs: componentFields.inputs,
    outputs: componentFields.outputs,
    permissions: componentFields.permissions,
    source: componentSourceSchema.optional(),
    mcp: mcpServerSchema.optional(),
    cli: cliProgramSchema.optional(),
    hook: hookSchema.optional(),
    tools: z.array(identifier).optional().describe("a subagent's tools"),
  })
  .describe(
    "A component's contract: what it is, what it consumes and produces, what it may touch, and (IR 0.2.0) what it is made of.",
  );

/** The documents of one IR version, around its component contract. */
function irDocuments<V extends z.ZodType, C extends z.ZodType>(irVersion: V, componentSchema: C) {
  const targetBindingSchema = z
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

  const pluginManifestSchema = z
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

  const compositionSpecSchema = z
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

  const harnessIrBundleSchema = z
    .strictObject({
      irVersion,
      kind: z.literal("harness-ir-bundle"),
      components: z.array(componentSchema),
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

  const harnessRevisionSchema = z
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

  const resolutionReportSchema = z
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

  return {
    targetBindingSchema,
    pluginBindingSchema,
    pluginManifestSchema,
    includeSchema,
    requirementSchema,
    settingValueSchema,
    settingSchema,
    compositionSpecSchema,
    harnessIrBundleSchema,
    realizationSchema,
    harnessRevisionSchema,
    resolutionReportSchema,
  };
}

const v1 = irDocuments(irVersion, componentContractSchema);
const v2 = irDocuments(irVersionV2, componentContractSchemaV2);
/**
 * The shapes of both versions at once, for types only: code that reads IR handles either, and a
 * document's `irVersion` says which it is. Validation uses each version's exact schemas.
 */
const anyVersion = z.enum(IR_VERSIONS);
const componentContractAny = componentContractSchemaV2.extend({ irVersion: anyVersion });
const both = irDocuments(anyVersion, componentContractAny);

export const targetBindingSchema = v1.targetBindingSchema;
export const pluginManifestSchema = v1.pluginManifestSchema;
export const compositionSpecSchema = v1.compositionSpecSchema;
export const harnessIrBundleSchema = v1.harnessIrBundleSchema;
export const harnessRevisionSchema = v1.harnessRevisionSchema;
export const resolutionReportSchema = v1.resolutionReportSchema;
/** IR 0.2.0's documents: the same shapes with irVersion 0.2.0 and the v0.2 component contract. */
export const irSchemasV2 = {
  componentContract: componentContractSchemaV2,
  targetBinding: v2.targetBindingSchema,
  pluginManifest: v2.pluginManifestSchema,
  compositionSpec: v2.compositionSpecSchema,
  bundle: v2.harnessIrBundleSchema,
  revision: v2.harnessRevisionSchema,
  resolutionReport: v2.resolutionReportSchema,
};

// The types cover both IR versions: a document of either carries its `irVersion`.
export type Permission = z.infer<typeof permissionSchema>;
export type ComponentContract = z.infer<typeof componentContractAny>;
export type ComponentSource = z.infer<typeof componentSourceSchema>;
export type McpServerSpec = z.infer<typeof mcpServerSchema>;
export type HookSpec = z.infer<typeof hookSchema>;
export type TargetBinding = z.infer<typeof both.targetBindingSchema>;
export type PluginBinding = z.infer<typeof both.pluginBindingSchema>;
export type PluginManifest = z.infer<typeof both.pluginManifestSchema>;
export type PluginInclude = z.infer<typeof both.includeSchema>;
export type CompositionRequirement = z.infer<typeof both.requirementSchema>;
export type SettingValue = z.infer<typeof both.settingValueSchema>;
export type CompositionSetting = z.infer<typeof both.settingSchema>;
export type CompositionSpec = z.infer<typeof both.compositionSpecSchema>;
export type HarnessIrBundle = z.infer<typeof both.harnessIrBundleSchema>;
export type Realization = z.infer<typeof both.realizationSchema>;
export type RealizationAction = Realization["action"];
export type HarnessRevision = z.infer<typeof both.harnessRevisionSchema>;
export type ResolutionReport = z.infer<typeof both.resolutionReportSchema>;
