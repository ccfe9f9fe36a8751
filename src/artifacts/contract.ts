// Shapes of the files `compare run` writes under --out (docs/artifacts.md). One zod definition per
// file gives the type, the check when a run is re-read (report, regrade, resume) and the
// published JSON Schema.
import { z } from "zod";
import {
  hostSetupReportSchema,
  INFRA_REASONS,
  RECEIPT_STATUSES,
  tokenUsageSchema,
} from "../exec/index.js";
import { gradeSchema } from "../graders/index.js";
import { TOOL_USE_KINDS, toolUseSchema } from "../policy/index.js";
import { trialRecordSchema, verdictStatisticsSchema } from "../stats/index.js";

const outcomeSchema = trialRecordSchema.shape.outcome;

export const VERDICT_VERSION = "harnesslab.verdict.v1";
export const TRIAL_METRICS_VERSION = "harnesslab.trial-metrics.v1";
export const VALIDATION_VERSION = "harnesslab.validation.v1";
export const FROZEN_TASK_VERSION = "harnesslab.frozen-task.v1";
export const RUN_MANIFEST_VERSION = "harnesslab.run-manifest.v1";
export const TOOL_USE_VERSION = "harnesslab.tool-use.v1";
export const SETUP_VERSION = "harnesslab.setup.v1";

/** Per kind, how many tool calls a trial's agent made (denied ones included). */
const toolUseCountsSchema = z.strictObject(
  Object.fromEntries(TOOL_USE_KINDS.map((kind) => [kind, z.int().min(0)])) as Record<
    (typeof TOOL_USE_KINDS)[number],
    z.ZodInt
  >,
);
export type ToolUseCounts = z.infer<typeof toolUseCountsSchema>;

/** `tool-use.json`: the agent's tool calls by kind (shell with the command, mcp with server and tool, other). */
export const toolUseDocumentSchema = z.strictObject({
  schemaVersion: z.literal(TOOL_USE_VERSION),
  counts: toolUseCountsSchema,
  calls: z.array(toolUseSchema),
});
export type ToolUseDocument = z.infer<typeof toolUseDocumentSchema>;

const setupStatusSchema = z.enum(["loaded", "failed", "unconfirmed", "not-run"]);
const setupMechanismSchema = hostSetupReportSchema.shape.mechanism;

/** `setup.json`: each component the variant's setup handed to the host, and what became of it. */
export const setupDocumentSchema = z.strictObject({
  schemaVersion: z.literal(SETUP_VERSION),
  host: z.string(),
  components: z.array(
    z.strictObject({
      id: z.string(),
      kind: z.string(),
      mechanism: setupMechanismSchema,
      /** The strength the resolution planned; the host's report confirms it or not. */
      planned: z.string(),
      onDegrade: z.enum(["fail", "report"]),
      /**
       * `loaded` (the host confirmed it), `failed` (the host said it could not load it),
       * `unconfirmed` (the host said nothing of it), `not-run` (the agent never started).
       */
      status: setupStatusSchema,
      /** The files materialized for the trial (outside its tree), with their content hashes. */
      files: z.array(
        z.strictObject({ path: z.string(), sha256: z.string().regex(/^sha256:[0-9a-f]{64}$/) }),
      ),
      /** Whether every file still had its hash when the agent was done; null when none was made. */
      intactAfterRun: z.boolean().nullable(),
      /** What the host reported, as it reported it (null when the agent never started). */
      host: hostSetupReportSchema.nullable(),
      /** Its MCP tools the agent called (allowed calls), by tool name. */
      toolCalls: z.record(z.string(), z.int().min(0)),
    }),
  ),
});
export type SetupDocument = z.infer<typeof setupDocumentSchema>;

/** One component of a trial's setup as metrics.json sums it up. */
const trialSetupEntrySchema = z.strictObject({
  component: z.string(),
  mechanism: setupMechanismSchema,
  status: setupStatusSchema,
  /** Allowed calls of its MCP tools. */
  toolCalls: z.int().min(0),
});
export type TrialSetupEntry = z.infer<typeof trialSetupEntrySchema>;

/** Causes of a trial's infrastructure error that the harness itself detects. */
const HARNESS_INFRA_REASONS = [
  "fixture_copy_failed",
  "fixture_changed",
  "git_failed",
  "patch_capture_failed",
  "grader_failed",
  "executor_threw",
  "executor_unresponsive",
  "run_aborted",
  "forge_failed",
  /** The file system the harness writes trials to is full (not the trial's doing: retried). */
  "disk_full",
  "harness_error",
] as const;
const TRIAL_INFRA_REASONS = [...INFRA_REASONS, ...HARNESS_INFRA_REASONS] as const;
const trialInfraReasonSchema = z.enum(TRIAL_INFRA_REASONS);
export type TrialInfraReason = z.infer<typeof trialInfraReasonSchema>;

const sha256 = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** An earlier attempt of a trial that ended in an infrastructure error and was run again (--retry-infra). */
const trialAttemptSchema = z.strictObject({
  attempt: z.int().min(1),
  infraReason: trialInfraReasonSchema.nullable(),
  explanation: z.string(),
  /** Its artifacts, relative to the trial's folder (e.g. `attempts/1`). */
  dir: z.string(),
  durationMs: z.number().min(0),
  costUsd: z.number().min(0).nullable(),
});
export type TrialAttempt = z.infer<typeof trialAttemptSchema>;

/**
 * The harness's seal on a finished trial: an HMAC, with the run's secret key (kept outside
 * --out), over the trial's metrics and the digest of every file of its folder. --resume and
 * regrade accept only records whose seal verifies.
 */
const recordSealSchema = z.strictObject({
  algorithm: z.literal("hmac-sha256"),
  /** The run whose key sealed it (manifest.json's `evidence.runId`). */
  runId: z.string(),
  /** Relative path → sha256 hex of each file of the trial's folder at sealing time. */
  files: z.record(z.string(), z.string()),
  mac: z.string(),
});
export type RecordSeal = z.infer<typeof recordSealSchema>;

/** How a run's commands were contained (verdict.json, manifest.json). */
const containmentSchema = z.strictObject({
  kind: z.enum(["bwrap", "none"]),
  /** `bubblewrap 0.8.0`, or why there was no sandbox. */
  description: z.string(),
  /** True when containment was turned off with --unsafe-no-sandbox. */
  unsafe: z.boolean(),
});

/** `metrics.json`: the grade summary and the run's measurements for one trial. */
export const trialMetricsSchema = z.strictObject({
  schemaVersion: z.literal(TRIAL_METRICS_VERSION),
  task: z.string(),
  variant: z.string(),
  trial: z.int().min(1),
  seq: z.int().min(1),
  outcome: outcomeSchema,
  infraReason: trialInfraReasonSchema.nullable(),
  /** What went wrong, for a person, when the outcome is not `passed`. */
  explanation: z.string(),
  receiptStatus: z.enum(RECEIPT_STATUSES).nullable(),
  /** Combined grade: mean of the graders' scores; null when the trial was never graded. */
  score: z.number().min(0).max(100).nullable(),
  gradePassed: z.boolean().nullable(),
  graders: z.array(
    z.strictObject({
      grader: z.string(),
      score: z.number(),
      passed: z.boolean(),
      failedChecks: z.array(z.string()),
    }),
  ),
  changedFiles: z.array(z.string()),
  patchBytes: z.int().min(0).nullable(),
  /** True when a secret value or the trial path was masked inside patch.diff (it then no longer reproduces the trial exactly). */
  patchRedacted: z.boolean().default(false),
  durationMs: z.number().min(0),
  agentWallTimeMs: z.number().min(0).nullable(),
  tokens: tokenUsageSchema.nullable(),
  costUsd: z.number().min(0).nullable(),
  credits: z.number().min(0).nullable(),
  turns: z.int().min(0).nullable(),
  /**
   * The four token components weighted by the host's price ratios (input 1, and e.g. cache read
   * 0.1, cache write 1.25, output 5 for Anthropic): one number that compares runs that cache
   * differently. Null when the host reports no tokens or has no ratios.
   */
  costEquivalentTokens: z.number().min(0).nullable().default(null),
  toolCalls: z.int().min(0).nullable(),
  /** Tool calls by kind, from the tool policy (absent in records written before it existed). */
  toolUse: toolUseCountsSchema.nullable().default(null),
  permissionDenials: z.int().min(0),
  /** Earlier attempts that ended in infrastructure errors (oldest first); the trial's own files are its last attempt's. */
  retriedAttempts: z.array(trialAttemptSchema).default([]),
  /** The variant's setup as the trial's host loaded it (setup.json has the detail); absent without one. */
  setup: z.array(trialSetupEntrySchema).optional(),
  /**
   * Set when the trial ran in an earlier run and was taken from the trial cache (`harness ci
   * --cache`): the entry it was copied from and the content key it was kept under.
   */
  cachedFrom: z
    .strictObject({
      entry: z.string(),
      contentKey: sha256,
    })
    .optional(),
  /** The harness's seal (absent in records written before records were sealed). */
  seal: recordSealSchema.optional(),
});
export type TrialMetrics = z.infer<typeof trialMetricsSchema>;

/** `validation.json`: every grader's checks with their evidence. */
export const validationDocumentSchema = z.strictObject({
  schemaVersion: z.literal(VALIDATION_VERSION),
  grades: z.array(gradeSchema),
  /** Set when grading itself broke (the trial is then an infrastructure error). */
  error: z.string().nullable(),
});
export type ValidationDocument = z.infer<typeof validationDocumentSchema>;

/** One trial as listed in verdict.json. */
const verdictTrialSchema = trialMetricsSchema
  .omit({ schemaVersion: true, graders: true, seal: true })
  .extend({ artifactDir: z.string() });
export type VerdictTrial = z.infer<typeof verdictTrialSchema>;

const variantSummarySchema = z.strictObject({
  id: z.string(),
  label: z.string(),
  composition: z.string(),
  runtimeProfile: z.string().nullable(),
  isBaseline: z.boolean(),
  revisionId: z.string(),
  resolutionStatus: z.string(),
  degraded: z.array(z.string()),
  /** The host the variant's trials ran on (absent in verdicts written before variants had their own). */
  host: z.string().optional(),
  /** The model its trials asked for; null for a host without one (scripted). */
  model: z.string().nullable().optional(),
  /** Its agent's turn limit; null for a host without one. */
  maxTurns: z.int().nullable().optional(),
  /** How the variant's agent reached forge tasks' repositories (set when the run had forge tasks). */
  forgeAccess: z.enum(["mcp", "cli", "tool"]).optional(),
  /** `tool`: the component of the variant's setup its agent reached the forge with. */
  forgeTool: z
    .strictObject({ component: z.string(), kind: z.enum(["mcp-server", "cli"]) })
    .optional(),
  /** `cli`: the programs its agent's commands reached the forge's API with (`forge.commands`). */
  forgeCommands: z.array(z.string()).optional(),
  /** Set when the forge tool was the agent's only tool (`forge.only = true`). */
  forgeOnly: z.literal(true).optional(),
  /**
   * What the variant's setup really materialized across its trials: per component, in how many
   * trials the host confirmed it, reported it failed, or said nothing, and the calls of its tools.
   */
  setup: z
    .array(
      z.strictObject({
        component: z.string(),
        mechanism: setupMechanismSchema,
        loaded: z.int().min(0),
        failed: z.int().min(0),
        unconfirmed: z.int().min(0),
        /** Trials whose agent never started (nothing to confirm). */
        notRun: z.int().min(0),
        toolCalls: z.int().min(0),
      }),
    )
    .optional(),
});

/** What a regrade changed against the verdict it re-grades (`compare regrade`). */
const regradeSummarySchema = z.strictObject({
  /** Changed trials, the baseline's first, then by variant order and folder. */
  changes: z.array(
    z.strictObject({
      artifactDir: z.string(),
      variant: z.string(),
      /** `up`: passes now and did not, or the same outcome with a higher score; `down`: the reverse. */
      direction: z.enum(["up", "down", "other"]),
      before: z.strictObject({ outcome: z.string(), score: z.number().nullable() }),
      after: z.strictObject({
        outcome: z.string(),
        score: z.number().nullable(),
        explanation: z.string(),
      }),
    }),
  ),
  up: z.int().min(0),
  down: z.int().min(0),
  other: z.int().min(0),
  /**
   * Set when the verdict being re-graded was decided by a method harnesslab no longer uses (an
   * interval alone, as earlier versions did): what the current method decides on the run's own grades.
   */
  methodChange: z
    .strictObject({
      /** The interval method the previous verdict decided with. */
      previousMethod: z.string(),
      previousStatus: z.enum(["accept", "reject", "need_more_work", "infrastructure_error"]),
      /** The current method's status on the previous verdict's trials, before any re-grading. */
      statusWithPreviousGrades: z.enum([
        "accept",
        "reject",
        "need_more_work",
        "infrastructure_error",
      ]),
    })
    .optional(),
  /** Variants whose pass rate (infrastructure errors left out) moved, the baseline first. */
  passRates: z.array(
    z.strictObject({
      variant: z.string(),
      before: z.number().min(0).max(1).nullable(),
      after: z.number().min(0).max(1).nullable(),
    }),
  ),
});

/**
 * A task whose majority outcome flipped between the baseline and a candidate, with every trial
 * of both on that task, so a reader can open each one's folder (patch, checks, trace).
 */
export type RegradeSummary = z.infer<typeof regradeSummarySchema>;

const flipEvidenceSchema = z.strictObject({
  variant: z.string(),
  baseline: z.string(),
  task: z.string(),
  direction: z.enum(["improved", "regressed"]),
  variantPassRate: z.number().min(0).max(1),
  baselinePassRate: z.number().min(0).max(1),
  /** The candidate's trials, then the baseline's, each in trial order. */
  trials: z.array(
    z.strictObject({
      variant: z.string(),
      trial: z.int().min(1),
      seq: z.int().min(1),
      outcome: outcomeSchema,
      score: z.number().min(0).max(100).nullable(),
      /** The trial's folder, relative to the run's directory. */
      artifactDir: z.string(),
    }),
  ),
});
export type FlipEvidence = z.infer<typeof flipEvidenceSchema>;

/** What ran out when `--max-cost-usd` or `--max-tokens` stopped a run before every trial. */
const budgetStopSchema = z.strictObject({
  /** Which limit stopped it. */
  limit: z.enum(["max-cost-usd", "max-tokens"]),
  value: z.number().min(0),
  /** USD (or tokens) the finished trials and their retried attempts used. */
  spent: z.number().min(0),
  /** The largest amount one finished trial used: what the next one was assumed to need. */
  largestTrial: z.number().min(0),
  /** Trials running when the limit was reached (they finished and count). */
  running: z.int().min(0),
  trialsRun: z.int().min(0),
  trialsPlanned: z.int().min(0),
});
export type BudgetStop = z.infer<typeof budgetStopSchema>;

/** An A/A run (`--calibrate`): the baseline compared with a copy of itself. */
const calibrationSchema = z.strictObject({
  /** The variant that ran twice, and the id its copy ran under. */
  variant: z.string(),
  copy: z.string(),
  /** Random re-splits of the trials between the two arms that the policy decided. */
  resplits: z.int().min(1),
  accepts: z.int().min(0),
  rejects: z.int().min(0),
  /** (accepts + rejects) / resplits: how often the policy claims a difference on noise here. */
  claimRate: z.number().min(0).max(1),
  /** The policy's promise: at most alpha (accept and reject together); null for heuristic-v1. */
  nominal: z.number().min(0).max(1).nullable(),
});
export type Calibration = z.infer<typeof calibrationSchema>;

/** `verdict.json`: the result of a comparison run. */
export const verdictDocumentSchema = z.strictObject({
  schemaVersion: z.literal(VERDICT_VERSION),
  status: z.enum(["accept", "reject", "need_more_work", "infrastructure_error"]),
  reason: z.string(),
  host: z.string(),
  baseline: z.string(),
  variants: z.array(variantSummarySchema),
  tasks: z.array(z.string()),
  /** Each task's tier, for the tasks the manifest gives one (reports group pass rates by it). */
  taskTiers: z.record(z.string(), z.string()).optional(),
  trialsPerCell: z.int().min(0),
  /** True when the source fixtures were byte-identical before and after the run. */
  fixturesUnchanged: z.boolean(),
  /**
   * How the trials' code was contained. Absent in verdicts written before containment existed
   * (their commands ran without an OS sandbox).
   */
  containment: containmentSchema.optional(),
  /**
   * Trial records --resume found in --out that the harness had not written (or that were changed
   * since): each was moved to `rejected-records/` and its trial run again.
   */
  rejectedRecords: z
    .array(z.strictObject({ artifactDir: z.string(), movedTo: z.string(), reason: z.string() }))
    .default([]),
  evidence: z.strictObject({
    manifestHash: sha256,
    harnessHash: sha256,
    fixtureHashes: z.record(z.string(), sha256),
  }),
  statistics: verdictStatisticsSchema.nullable(),
  trials: z.array(verdictTrialSchema),
  startedAt: z.string(),
  finishedAt: z.string(),
  /** `--retry-infra`: how often a trial may be re-run after an infrastructure error, and what the retries did. */
  infraRetries: z
    .strictObject({
      limit: z.int().min(0),
      /** Trials run more than once. */
      trialsRetried: z.int().min(0),
      /** Attempts beyond each trial's first. */
      extraAttempts: z.int().min(0),
      /** Retried trials whose last attempt was not an infrastructure error. */
      recovered: z.int().min(0),
      /** USD the retried attempts reported (not in the statistics, which count each trial's last attempt). */
      extraCostUsd: z.number().min(0).nullable(),
    })
    .default({ limit: 0, trialsRetried: 0, extraAttempts: 0, recovered: 0, extraCostUsd: null }),
  /**
   * True when the run was stopped (Ctrl-C, SIGTERM) before every planned trial finished: the
   * verdict covers only the finished trials; `compare run --resume` completes it.
   */
  interrupted: z.boolean().default(false),
  /** True when --stop-early or the sequential design stopped starting trials because the status was settled. */
  stoppedEarly: z.boolean().default(false),
  /** Set when --max-cost-usd or --max-tokens stopped the run before every planned trial. */
  budgetStop: budgetStopSchema.nullable().optional(),
  /** Every flipped task with its trials (absent in verdicts written before it existed). */
  flips: z.array(flipEvidenceSchema).optional(),
  /** Set for an A/A run (`compare run --calibrate`). */
  calibration: calibrationSchema.nullable().optional(),
  /** Trials taken from an earlier, interrupted run of the same experiment (--resume). */
  resumedTrials: z.int().min(0).default(0),
  /** Trials taken from the trial cache (`harness ci --cache`): they ran in an earlier run of the same setup. */
  cachedTrials: z.int().min(0).default(0),
  /** Set by `compare regrade`: the verdict file this one re-grades. */
  regradeOf: z.string().nullable(),
  /** Set by `compare regrade`: what changed against `regradeOf`. */
  regradeSummary: regradeSummarySchema.optional(),
  /** Set by `compare regrade`: the contract every contract-taking grader was re-graded with. */
  graderContracts: z
    .array(
      z.strictObject({
        task: z.string(),
        grader: z.string(),
        /** Absolute path of the contract file read. */
        path: z.string(),
        /** sha256 of the canonical contract (as in frozen-task.json). */
        contractHash: sha256,
        /** `manifest`: the manifest's contract; `option`: given with --grader-contract. */
        source: z.enum(["manifest", "option"]),
      }),
    )
    .optional(),
});
export type VerdictDocument = z.infer<typeof verdictDocumentSchema>;

/** `frozen-task.json`: what every trial of every task started from. */
export const frozenTasksSchema = z.strictObject({
  schemaVersion: z.literal(FROZEN_TASK_VERSION),
  tasks: z.array(
    z.strictObject({
      id: z.string(),
      prompt: z.string(),
      promptHash: sha256,
      fixtureHash: sha256,
      fixtureFiles: z.array(
        z.strictObject({
          path: z.string(),
          kind: z.enum(["file", "dir"]),
          bytes: z.int(),
          /** Hex content hash; null for directories. */
          sha256: z.string().nullable(),
        }),
      ),
      expectedFiles: z.array(z.string()),
      graders: z.array(
        z.strictObject({ id: z.string(), kind: z.string(), contractHash: sha256.nullable() }),
      ),
      /** Forge tasks: the seed every trial's repository started from. */
      forge: z
        .strictObject({
          seedHash: sha256,
          repo: z.string(),
          /** The issues and pull requests the seed holds. */
          issues: z.int().min(0),
          pullRequests: z.int().min(0),
        })
        .optional(),
      tier: z.string().optional(),
    }),
  ),
});
export type FrozenTasks = z.infer<typeof frozenTasksSchema>;

/**
 * Each input a trial depends on, hashed on its own, so `--resume` with other inputs can say which
 * one differs (`inputsHash` stays the overall check). Concurrency is not an input.
 */
export const runInputsSchema = z.strictObject({
  /** The manifest file's bytes. */
  manifest: sha256,
  harness: sha256,
  tasks: z.record(
    z.string(),
    z.strictObject({
      fixture: sha256,
      prompt: sha256,
      /** Forge tasks: the seed's canonical hash and the repository (absent for file tasks). */
      forge: z.strictObject({ seed: sha256, repo: z.string() }).optional(),
      expectedFiles: z.array(z.string()),
      graders: z.record(
        z.string(),
        z.strictObject({
          kind: z.string(),
          /** The canonical contract (readme-package-v1); null for graders without one. */
          contract: sha256.nullable(),
          /** The grader's settings as the manifest gives them (argv, timeout, mode), without file locations. */
          settings: sha256,
        }),
      ),
    }),
  ),
  /** Per variant: its scripted agent module or oracle patch; null where there is none. */
  agents: z.record(z.string(), sha256.nullable()),
  trials: z.strictObject({
    count: z.int().min(1),
    seed: z.int(),
    order: z.enum(["randomized", "sequential"]),
  }),
  /**
   * The runtime settings (host, tools, limits, timeout, validation commands) as values, so a
   * refusal can say which one changed; runs recorded before that stored only a hash.
   */
  runtime: z.union([sha256, z.record(z.string(), z.unknown())]),
  verdictPolicy: z.union([sha256, z.record(z.string(), z.unknown())]),
  /** `bwrap` or `none`: a run is not resumed under other containment (absent in older runs). */
  containment: z.enum(["bwrap", "none"]).optional(),
  /** Where forge tasks run (local or live, who the agent acts as, the cli programs). */
  forge: z.record(z.string(), z.unknown()).optional(),
});
export type RunInputs = z.infer<typeof runInputsSchema>;

/** `manifest.json`: the effective manifest plus the evidence that pins the run's inputs. */
export const runManifestSchema = z.strictObject({
  schemaVersion: z.literal(RUN_MANIFEST_VERSION),
  /** Where the manifest was read from (regrade reads it again from there). */
  manifestPath: z.string(),
  /** The manifest document as loaded (paths relative to its directory). */
  manifest: z.unknown(),
  effective: z.strictObject({
    trials: z.int().min(1),
    concurrency: z.int().min(1),
    /** `--retry-infra`: extra attempts allowed per trial after a retryable infrastructure error. */
    retryInfra: z.int().min(0).default(0),
    host: z.string(),
    verdictPolicy: z.unknown(),
    /** `--calibrate`: an A/A run of the baseline against a copy of itself. */
    calibrate: z.boolean().optional(),
  }),
  evidence: z.strictObject({
    manifestHash: sha256,
    harnessHash: sha256,
    fixtureHashes: z.record(z.string(), sha256),
    /** sha256 of each variant's scripted agent module or oracle patch; null where there is none. */
    agentHashes: z.record(z.string(), sha256.nullable()),
    /** Over everything a trial depends on (prompts, contracts, agents, runtime, policy, counts): --resume checks it. */
    inputsHash: sha256.optional(),
    /** The inputs one by one (absent in runs recorded before it existed). */
    inputs: runInputsSchema.optional(),
    revisions: z.record(z.string(), z.string()),
    /** Names the key that seals this run's trial records (kept outside --out). */
    runId: z.string().optional(),
    containment: containmentSchema.optional(),
    executionOrder: z.array(
      z.strictObject({ seq: z.int(), task: z.string(), variant: z.string(), trial: z.int() }),
    ),
  }),
  harnesslabVersion: z.string(),
  nodeVersion: z.string(),
  platform: z.string(),
});
export type RunManifest = z.infer<typeof runManifestSchema>;
