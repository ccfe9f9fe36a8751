// `harness-compare.v1`: better-harness's manifest, accepted unchanged (docs/manifest.md).
import { z } from "zod";
import {
  allowedToolsList,
  compositionId,
  disallowedToolsList,
  expectedFiles,
  integerFrom,
  maxTurns,
  modelName,
  networkDeny,
  permissionMode,
  portablePath,
  seed,
  timeoutMs,
  toolsList,
} from "./fields.js";

export const V1_SCHEMA_VERSION = "harness-compare.v1";

/** The runtime profiles better-harness's Qoder executor knows. */
export const V1_RUNTIME_PROFILES = ["qoder-default-v1", "qoder-minimal-v1"] as const;

/**
 * better-harness's fixed Bash vocabulary for v1 runs (a v1 manifest cannot list its own
 * commands); these become the experiment's validation commands.
 */
export const V1_VALIDATION_COMMANDS: readonly (readonly string[])[] = [
  ["npm", "test"],
  ["npm", "run", "example"],
  ["node", "--test"],
  ["node", "examples/basic.mjs"],
  ["node", "./examples/basic.mjs"],
  ["git", "status", "--short"],
  ["git", "diff", "--check"],
];

const runtimeProfile = z.enum(V1_RUNTIME_PROFILES, {
  error: `expected one of ${V1_RUNTIME_PROFILES.map((p) => JSON.stringify(p)).join(", ")}`,
});

export const harnessCompareV1Schema = z
  .strictObject({
    schemaVersion: z.literal(V1_SCHEMA_VERSION),
    harness: portablePath("The .harness file holding both compositions."),
    variants: z
      .strictObject({
        baseline: compositionId.meta({ description: "Composition id of the baseline (H0)." }),
        candidate: compositionId.meta({ description: "Composition id of the candidate (H1)." }),
      })
      .meta({
        description:
          "The two compared compositions; they must differ unless the runtime profiles do.",
      }),
    runtimeProfiles: z
      .strictObject({ baseline: runtimeProfile, candidate: runtimeProfile })
      .optional()
      .meta({
        description: "Named runtime profile per variant; absent means qoder-default-v1 for both.",
      }),
    task: z.strictObject({
      fixture: portablePath(
        "The frozen repository fixture directory (copied for every trial, never changed).",
      ),
      prompt: portablePath("The task prompt file."),
      expectedFiles: expectedFiles(1, 32),
      grader: z.strictObject({
        kind: z.literal("readme-package-v1"),
        contract: portablePath("The readme-package-v1 grader contract (JSON)."),
      }),
    }),
    runtime: z.strictObject({
      host: z.literal("qoder").meta({ description: "harness-compare.v1 runs on Qoder only." }),
      model: modelName.optional(),
      tools: toolsList,
      allowedTools: allowedToolsList,
      disallowedTools: disallowedToolsList,
      permissionMode,
      maxTurns,
      timeoutMs,
      network: networkDeny,
      enableFileCheckpointing: z
        .boolean({ error: "expected true or false" })
        .optional()
        .meta({ description: "Ask the host to checkpoint files (absent means false)." }),
    }),
    trials: z.strictObject({
      count: integerFrom(1, 20).meta({ description: "Trials per variant." }),
      seed,
      order: z.literal("randomized"),
    }),
  })
  .meta({
    title: "harness-compare.v1",
    description:
      "better-harness's comparison manifest: two compositions of one .harness file on one task, on Qoder.",
  });

export type HarnessCompareV1 = z.output<typeof harnessCompareV1Schema>;
