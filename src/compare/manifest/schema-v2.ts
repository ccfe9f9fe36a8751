// `harness-compare.v2`: our general form — several tasks, two or more named variants,
// any host, explicit validation commands, a verdict policy and concurrency.
import { z } from "zod";
import { intendedChangesSchema, requiredFactSchema } from "../../scoring/index.js";
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
  diskBudgetMB: 1024,
  enableFileCheckpointing: false,
  forgeRepo: "acme/widgets",
  forgeUser: "agent",
  forgeAuthor: "maintainer",
  forgeCommands: ["curl"],
} as const;

const forgeLogin = (what: string) =>
  z
    .string({ error: `expected ${what} (string)` })
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/,
      `expected ${what}: letters, digits, '.', '_' and '-', starting with a letter or digit, at most 40 characters`,
    );

const forgeCommands = z
  .array(
    z
      .string({ error: "expected a program name" })
      .regex(
        /^[A-Za-z0-9_.+-]{1,64}$/,
        "expected a program name such as curl (no path, no spaces)",
      ),
    { error: 'expected a list of program names, e.g. ["curl", "tea"]' },
  )
  .max(16, "expected at most 16 programs")
  .meta({
    description: `Programs an agent whose composition sets forge.access = "cli" may run with any arguments (default ${JSON.stringify(V2_DEFAULTS.forgeCommands)}); they reach the trial's forge and nothing else.`,
    uniqueItems: true,
  });

const testName = z
  .string({ error: "expected a test name (string)" })
  .min(1, "expected a non-empty test name")
  .max(1000, "expected at most 1000 characters");

const trialPath = z
  .string({ error: "expected a path (string)" })
  .min(1, "expected a non-empty path")
  .max(1000, "expected at most 1000 characters")
  .refine((path) => !path.startsWith("/") && !path.split("/").includes(".."), {
    error: "expected a path inside the trial (relative, no ..)",
  });

const testsGraderSchema = z
  .strictObject({
    kind: z.literal("tests"),
    id: kebabId("a grader id"),
    runner: z.enum(["node", "vitest", "junit"]).optional().meta({
      description:
        "node (default): node --test; vitest: the fixture's vitest; junit: argv writes a JUnit XML report to $HARNESSLAB_TEST_REPORT.",
    }),
    files: z.array(trialPath).max(256).optional().meta({
      description:
        "Test files or folders, relative to the trial root (default: the runner's own discovery).",
    }),
    hidden: z
      .array(portablePath("A test file kept out of the fixture (relative to the manifest)."))
      .max(256)
      .optional()
      .meta({
        description:
          "Hidden tests: files outside the fixture, run by absolute path and shown read-only to the run; the agent never sees them.",
      }),
    argv: z
      .array(z.string().min(1, "expected a non-empty argument"))
      .min(1)
      .max(256)
      .optional()
      .meta({
        description:
          "junit: the command (no shell) that runs the tests and writes the report; vitest: its entry (default node_modules/vitest/vitest.mjs).",
      }),
    failToPass: z.array(testName).max(1000).optional().meta({
      description:
        "Tests that must be reported passed (they fail before the fix): `suite > test`, or `file::suite > test`.",
    }),
    passToPass: z
      .array(testName)
      .max(1000)
      .optional()
      .meta({ description: "Tests that must still be reported passed." }),
    minTests: integerFrom(1, 1_000_000).optional().meta({
      description: "At least this many tests reported, none failed, skipped or unfinished.",
    }),
    timeoutMs: timeoutMs
      .optional()
      .meta({ description: "Time limit of the run in milliseconds (default 60000)." }),
  })
  .superRefine((grader, ctx) => {
    if (
      (grader.failToPass?.length ?? 0) === 0 &&
      (grader.passToPass?.length ?? 0) === 0 &&
      grader.minTests === undefined
    )
      ctx.addIssue({
        code: "custom",
        path: ["failToPass"],
        message:
          "name the tests that must pass (failToPass, passToPass), or require a number of tests (minTests)",
      });
    const runner = grader.runner ?? "node";
    if (runner === "junit" && grader.argv === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["argv"],
        message:
          'the junit runner needs the command that writes the report, e.g. ["npx", "jest", "--reporters=jest-junit"]',
      });
    if (runner === "node" && grader.argv !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["argv"],
        message: "the node runner takes no argv (it runs node --test on files)",
      });
    if (runner === "junit" && (grader.files !== undefined || grader.hidden !== undefined))
      ctx.addIssue({
        code: "custom",
        path: ["files"],
        message: "the junit runner's files are its argv's business; give them in argv",
      });
  })
  .meta({
    description:
      "Runs the tests and passes only when the named tests are reported passed (or minTests ran, none failed), read from the runner's own report, not its exit code.",
  });

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
    testsGraderSchema,
    z
      .strictObject({
        kind: z.literal("readme-package-v1"),
        contract: portablePath("The readme-package-v1 grader contract (JSON)."),
      })
      .meta({ description: "better-harness's README grader (includes its own scope check)." }),
    z
      .strictObject({
        kind: z.literal("forge-state"),
        changes: intendedChangesSchema.optional().meta({
          description:
            "The intended changes; the expected end state is the seed with these applied (give this or expected).",
        }),
        expected: portablePath(
          "A RepoState file: the whole expected end state (give this or changes).",
        ).optional(),
      })
      .meta({
        description:
          "Forge tasks: the repository's issue/PR state after the agent must equal the expected end state; every other change is collateral.",
      }),
    z
      .strictObject({
        kind: z.literal("read-facts"),
        facts: z
          .array(requiredFactSchema, { error: "expected a list of facts" })
          .min(1, "expected at least one fact")
          .max(100, "expected at most 100 facts"),
      })
      .meta({
        description:
          "Forge tasks: every fact must be stated in the agent's final report (whole-phrase match of anyOf, or pattern).",
      }),
  ],
  {
    error:
      'expected a grader object with kind "scope", "command", "tests", "readme-package-v1", "forge-state" or "read-facts"',
  },
);

const taskForgeSchema = z
  .strictObject({
    seed: portablePath(
      "The repository's issue/pull-request state when a trial starts (a RepoState JSON file).",
    ),
    repo: z
      .string({ error: "expected owner/name" })
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}\/[A-Za-z0-9._-]{1,100}$/,
        "expected owner/name (letters, digits, '.', '_', '-')",
      )
      .optional()
      .meta({
        description: `The repository's owner/name on the local forge (default ${V2_DEFAULTS.forgeRepo}); live mode makes a throwaway repository instead.`,
      }),
  })
  .meta({ description: "Makes the task a forge task: the agent works on a seeded repository." });

const forgeSettingsSchema = z.discriminatedUnion(
  "kind",
  [
    z
      .strictObject({
        kind: z.literal("local"),
        user: forgeLogin("a login")
          .optional()
          .meta({
            description: `Who the agent acts as (default ${V2_DEFAULTS.forgeUser}).`,
          }),
        author: forgeLogin("a login")
          .optional()
          .meta({
            description: `Who opened the seeded issues and pull requests (default ${V2_DEFAULTS.forgeAuthor}).`,
          }),
        commands: forgeCommands.optional(),
      })
      .meta({ description: "A fresh local forge per trial (the default)." }),
    z
      .strictObject({
        kind: z.literal("gitea"),
        url: z
          .string({ error: "expected the Gitea instance's root URL" })
          .regex(
            /^https?:\/\/[^\s/]+(\/[^\s]*)?$/,
            "expected an http(s) URL such as https://gitea.example.com",
          )
          .meta({ description: "The Gitea instance root (the API is at url + /api/v1)." }),
        tokenEnv: z
          .string({ error: "expected an environment variable name" })
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name")
          .meta({ description: "The variable holding the token (never written anywhere)." }),
        owner: forgeLogin("the owner (a user or organisation)").meta({
          description: "Where each trial's throwaway repository is created.",
        }),
        user: forgeLogin("a login").meta({
          description: "The login the token authenticates as (checked when the run starts).",
        }),
        author: forgeLogin("a login").optional().meta({
          description:
            "Who opens the seeded issues and pull requests (default: user); another user needs a site administrator's token (Sudo).",
        }),
        commands: forgeCommands.optional(),
      })
      .meta({
        description:
          "Live mode: per trial a throwaway repository on a real Gitea, seeded through its API, captured, then deleted.",
      }),
  ],
  { error: 'expected a forge object with kind "local" or "gitea"' },
);

const taskSchema = z.strictObject({
  id: kebabId("a task id"),
  fixture: portablePath(
    "The frozen repository fixture directory (copied for every trial, never changed).",
  ),
  prompt: portablePath("The task prompt file."),
  expectedFiles: expectedFiles(0, 256)
    .optional()
    .meta({ description: "Required for file tasks; forge tasks default to none." }),
  forge: taskForgeSchema.optional(),
  tier: kebabId("a tier id").optional().meta({
    description: "A group of tasks the reports give pass rates for (e.g. read, multi-step).",
  }),
  graders: z
    .array(graderSchema, { error: "expected a list of graders" })
    .min(1, "expected at least one grader")
    .max(32, "expected at most 32 graders"),
});

/** One .harness file, or a list of them compiled together. */
const harnessFilesSchema = (what: string) =>
  z.union([
    portablePath(what),
    z
      .array(portablePath("A .harness file."), { error: "expected a path or a list of paths" })
      .min(1, "expected 1 to 32 paths")
      .max(32, "expected 1 to 32 paths")
      .meta({ uniqueItems: true }),
  ]);

const variantSchema = z.strictObject({
  id: z
    .string({ error: "expected a variant id (string)" })
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_-]*$/,
      "expected a variant id: letters, digits, _ and -, starting with a letter or digit (it names a directory)",
    )
    .max(64, "expected at most 64 characters"),
  composition: compositionId.meta({ description: "Composition id inside the harness file(s)." }),
  harness: harnessFilesSchema(
    "The .harness file(s) this variant's composition is in, when not the experiment's: another version of the setup, compared with the one in harness.",
  )
    .optional()
    .meta({ description: "Default: the experiment's harness." }),
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
  host: z
    .enum(HOSTS, {
      error: `expected a host: ${HOSTS.map((h) => JSON.stringify(h)).join(", ")}`,
    })
    .optional()
    .meta({
      description:
        "The host this variant's trials run on (default runtime.host). A real host needs runtime.host to be a real host too: the tool policy is the experiment's.",
    }),
  model: modelName.optional().meta({
    description:
      "The model this variant's agent uses (default runtime.model; required when the variant's host differs from runtime.host).",
  }),
  maxTurns: maxTurns
    .optional()
    .meta({ description: "Agent turn limit per trial (default runtime.maxTurns)." }),
  timeoutMs: timeoutMs.optional().meta({
    description: "Wall-clock limit of one trial's agent run (default runtime.timeoutMs).",
  }),
  permissionMode: permissionMode.optional(),
});

/** The variant fields a matrix axis of plain values may set (the axis is named after one). */
export const MATRIX_VALUE_FIELDS = [
  "host",
  "model",
  "composition",
  "agent",
  "runtimeProfile",
  "maxTurns",
  "timeoutMs",
] as const;

const matrixEntrySchema = z
  .strictObject({
    id: z
      .string({ error: "expected the entry's id (string)" })
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9-]*$/,
        "expected an id part: letters, digits and -, starting with a letter or digit",
      )
      .max(32, "expected at most 32 characters"),
    ...variantSchema.omit({ id: true }).partial().shape,
  })
  .meta({ description: "Variant fields this entry sets, and the id part it contributes." });

const matrixSchema = z
  .record(
    z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9]*$/, "expected an axis name: letters and digits")
      .max(32),
    z
      .array(z.union([z.string().min(1), z.int(), matrixEntrySchema]), {
        error: "expected a list of values or entries",
      })
      .min(1, "expected 1 to 16 values")
      .max(16, "expected 1 to 16 values"),
    { error: 'expected an object of axes, e.g. {"model": [...], "composition": [...]}' },
  )
  .meta({
    description: `Variants as a cross product of axes (in the order written). An axis named after a variant field (${MATRIX_VALUE_FIELDS.join(", ")}) may list plain values; any axis may list objects with an id and the variant fields they set. Each variant's id joins its entries' ids with "_"; a plain value's id is the value with characters other than letters, digits and - turned into -, prefixed by the field name for numbers (maxTurns-30). The expanded variants follow any listed under variants.`,
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
      .meta({ description: "better-harness's pass-rate/score/cost rules." }),
  ],
  { error: 'expected a verdict object with policy "paired-v1" or "heuristic-v1"' },
);

export const harnessCompareV2Schema = z
  .strictObject({
    schemaVersion: z.literal(V2_SCHEMA_VERSION),
    harness: harnessFilesSchema("The .harness file holding the compositions."),
    tasks: z
      .array(taskSchema, { error: "expected a list of tasks" })
      .min(1, "expected 1 to 100 tasks")
      .max(100, "expected 1 to 100 tasks"),
    variants: z
      .array(variantSchema, { error: "expected a list of variants" })
      .max(16, "expected 2 to 16 variants")
      .optional()
      .meta({
        description:
          "The setups compared (2 to 16 with the matrix's); give variants, a matrix, or both.",
      }),
    matrix: matrixSchema.optional(),
    baseline: z.string({ error: "expected the id of the baseline variant" }).meta({
      description:
        "Id of the variant every other variant is compared with (an expanded id for a matrix variant).",
    }),
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
    forge: forgeSettingsSchema.optional().meta({
      description:
        'Where forge tasks run: a local forge per trial (default) or a real Gitea ("live mode").',
    }),
    concurrency: integerFrom(1, 16)
      .optional()
      .meta({ description: "Trials run at once (default 1)." }),
    diskBudgetMB: integerFrom(1, 1_048_576).optional().meta({
      description:
        "The most disk one trial's workspace (and each of its grading copies) may take, in MiB (default 1024); a trial that goes over fails.",
    }),
  })
  .meta({
    title: "harness-compare.v2",
    description:
      "A comparison experiment: tasks × variants × trials, each variant on its host and model, graded deterministically, with a verdict policy.",
    anyOf: [{ required: ["variants"] }, { required: ["matrix"] }],
  });

export type HarnessCompareV2 = z.output<typeof harnessCompareV2Schema>;
export type HarnessCompareV2Grader = z.output<typeof graderSchema>;
export type HarnessCompareV2Variant = z.output<typeof variantSchema>;
export { matrixSchema };
