// `harness-compare.v2`: our general form — several tasks, two or more named variants,
// any host, explicit validation commands, a verdict policy and concurrency.
import { z } from "zod";
import { HOSTS } from "../experiment.js";
import {
  allowedToolsList,
  compositionId,
  disallowedToolsList,
  expectedFiles,
  integerFrom,
  kebabId,
  maxTurns,
  modelName,
  networkDeny,
  permissionMode,
  portablePath,
  seed,
  timeoutMs,
  toolsList,
  validationCommands,
} from "./fields.js";

export const V2_SCHEMA_VERSION = "harness-compare.v2";

/** Defaults applied when the manifest leaves a field out. */
export const V2_DEFAULTS = {
  scopeMode: "subset",
  commandTimeoutMs: 60_000,
  expectedExitCode: 0,
  trialOrder: "randomized",
  alpha: 0.05,
  minTrials: 5,
  maxCostRatio: 1.25,
  concurrency: 1,
  enableFileCheckpointing: false,
} as const;

const graderSchema = z.discriminatedUnion(
  "kind",
  [
    z
      .strictObject({
        kind: z.literal("scope"),
        mode: z.enum(["subset", "exact"]).optional().meta({
          description:
            "subset (default): changed files ⊆ expected files; exact: changed files = expected files.",
        }),
      })
      .meta({
        description: "Checks the changed files against the task's expected files, per file.",
      }),
    z
      .strictObject({
        kind: z.literal("command"),
        id: kebabId("a grader id"),
        argv: z
          .array(
            z
              .string({ error: "expected an argument (string)" })
              .min(1, "expected a non-empty argument"),
            { error: 'expected an argv list, e.g. ["npm", "test"]' },
          )
          .min(1, 'expected a non-empty argv list, e.g. ["npm", "test"]')
          .max(256, "expected at most 256 arguments"),
        timeoutMs: timeoutMs
          .optional()
          .meta({ description: "Command time limit in milliseconds (default 60000)." }),
        expectedExitCode: integerFrom(0, 255)
          .optional()
          .meta({ description: "Exit code that passes (default 0)." }),
      })
      .meta({
        description:
          "Runs argv without a shell in the trial root (own process group, killed on timeout); passes on the expected exit code.",
      }),
    z
      .strictObject({
        kind: z.literal("readme-package-v1"),
        contract: portablePath("The readme-package-v1 grader contract (JSON)."),
      })
      .meta({ description: "The seed system's README grader (includes its own scope check)." }),
  ],
  { error: 'expected a grader object with kind "scope", "command" or "readme-package-v1"' },
);

const taskSchema = z.strictObject({
  id: kebabId("a task id"),
  fixture: portablePath(
    "The frozen repository fixture directory (copied for every trial, never changed).",
  ),
  prompt: portablePath("The task prompt file."),
  expectedFiles: expectedFiles(0, 256),
  graders: z
    .array(graderSchema, { error: "expected a list of graders" })
    .min(1, "expected at least one grader")
    .max(32, "expected at most 32 graders"),
});

const variantSchema = z.strictObject({
  id: z
    .string({ error: "expected a variant id (string)" })
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_-]*$/,
      "expected a variant id: letters, digits, _ and -, starting with a letter or digit (it names a directory)",
    )
    .max(64, "expected at most 64 characters"),
  composition: compositionId.meta({ description: "Composition id inside the harness file(s)." }),
  runtimeProfile: kebabId("a runtime profile id")
    .optional()
    .meta({ description: "Named runtime profile of the host (real hosts only)." }),
  agent: z
    .string({ error: "expected an agent (string)" })
    .min(1, "expected a non-empty agent")
    .optional()
    .meta({
      description:
        'Scripted host only: "nop", "oracle:<patch file>", or the path of an ES module whose default export is the agent.',
    }),
});

const realHostRuntime = (host: Exclude<(typeof HOSTS)[number], "scripted">) =>
  z.strictObject({
    host: z.literal(host),
    model: modelName,
    tools: toolsList,
    allowedTools: allowedToolsList,
    disallowedTools: disallowedToolsList,
    permissionMode: permissionMode.optional(),
    maxTurns,
    timeoutMs,
    network: networkDeny,
    enableFileCheckpointing: z.boolean({ error: "expected true or false" }).optional(),
    validationCommands,
  });

const runtimeSchema = z.discriminatedUnion(
  "host",
  [
    realHostRuntime("qoder"),
    realHostRuntime("claude-code"),
    realHostRuntime("codex"),
    realHostRuntime("pi"),
    z.strictObject({
      host: z.literal("scripted"),
      timeoutMs,
      network: networkDeny.optional(),
      validationCommands,
    }),
  ],
  {
    error: `expected a runtime object with host ${HOSTS.map((h) => JSON.stringify(h)).join(", ")}`,
  },
);

const verdictSchema = z.discriminatedUnion(
  "policy",
  [
    z
      .strictObject({
        policy: z.literal("paired-v1"),
        alpha: z
          .number({ error: "expected a number greater than 0 and at most 0.5" })
          .gt(0, "expected a number greater than 0 and at most 0.5")
          .lte(0.5, "expected a number greater than 0 and at most 0.5")
          .optional()
          .meta({ description: "Two-sided significance level (default 0.05)." }),
        minTrials: integerFrom(1, 100).optional().meta({
          description: "Completed trials needed per variant per task to accept (default 5).",
        }),
        maxCostRatio: z
          .number({ error: "expected a number greater than 0 and at most 100" })
          .gt(0, "expected a number greater than 0 and at most 100")
          .lte(100, "expected a number greater than 0 and at most 100")
          .optional()
          .meta({
            description:
              "Largest candidate/baseline cost ratio that may still accept (default 1.25).",
          }),
        design: z
          .enum(["fixed", "sequential"], { error: 'expected "fixed" or "sequential"' })
          .optional()
          .meta({
            description:
              "fixed (default): one test when every planned trial is in; sequential: trials run round by round and the run stops as soon as a group-sequential boundary is crossed (docs/statistics.md).",
          }),
      })
      .meta({
        description: "Paired, task-matched comparison with a confidence interval (default).",
      }),
    z
      .strictObject({ policy: z.literal("heuristic-v1") })
      .meta({ description: "The seed system's pass-rate/score/cost rules." }),
  ],
  { error: 'expected a verdict object with policy "paired-v1" or "heuristic-v1"' },
);

export const harnessCompareV2Schema = z
  .strictObject({
    schemaVersion: z.literal(V2_SCHEMA_VERSION),
    harness: z.union([
      portablePath("The .harness file holding the compositions."),
      z
        .array(portablePath("A .harness file."), { error: "expected a path or a list of paths" })
        .min(1, "expected 1 to 32 paths")
        .max(32, "expected 1 to 32 paths")
        .meta({ uniqueItems: true }),
    ]),
    tasks: z
      .array(taskSchema, { error: "expected a list of tasks" })
      .min(1, "expected 1 to 100 tasks")
      .max(100, "expected 1 to 100 tasks"),
    variants: z
      .array(variantSchema, { error: "expected a list of variants" })
      .min(2, "expected 2 to 16 variants")
      .max(16, "expected 2 to 16 variants"),
    baseline: z
      .string({ error: "expected the id of the baseline variant" })
      .meta({ description: "Id of the variant every other variant is compared with." }),
    runtime: runtimeSchema,
    trials: z.strictObject({
      count: integerFrom(1, 100).meta({ description: "Trials per task × variant." }),
      seed,
      order: z.enum(["randomized", "sequential"]).optional().meta({
        description:
          "randomized (default): seeded shuffle per task; sequential: trial-major order.",
      }),
    }),
    verdict: verdictSchema.optional(),
    concurrency: integerFrom(1, 16)
      .optional()
      .meta({ description: "Trials run at once (default 1)." }),
  })
  .meta({
    title: "harness-compare.v2",
    description:
      "A comparison experiment: tasks × variants × trials on one host, graded deterministically, with a verdict policy.",
  });

export type HarnessCompareV2 = z.output<typeof harnessCompareV2Schema>;
export type HarnessCompareV2Grader = z.output<typeof graderSchema>;
