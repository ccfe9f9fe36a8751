import { z } from "zod";
import { HOST_IDS } from "../hosts/index.js";
import { type PolicyDecisionRecord, policyDecisionRecordSchema } from "../policy/index.js";
import { hostSetupReportSchema } from "./setup/contract.js";

/** How a run ended. Only `infra_error` means the environment, not the agent, failed. */
export const RECEIPT_STATUSES = [
  "completed",
  "agent_error",
  "limit_reached",
  "aborted",
  "timeout",
  "infra_error",
] as const;
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

/** Typed causes of `infra_error`. A scripted agent module that cannot be used is `config_invalid`. */
export const INFRA_REASONS = [
  "auth_missing",
  "network_unreachable",
  "binary_missing",
  "runtime_missing",
  "spawn_failed",
  "protocol_mismatch",
  "rate_limited",
  "quota_exhausted",
  "config_invalid",
  /** A scripted agent (the experimenter's code) threw, died or returned no report. */
  "scripted_agent_failed",
  /**
   * The host did not load a component of the variant's setup (a skill, an MCP server, …) whose
   * requirement says `on-degrade fail`: the variant could not be run as written.
   */
  "setup_failed",
] as const;
export type InfraReason = (typeof INFRA_REASONS)[number];

const count = z.number().int().min(0);

/** Token counts summed over every model the run used; a field the host does not report is null. */
export const tokenUsageSchema = z.strictObject({
  uncachedInput: count.nullable(),
  cacheRead: count.nullable(),
  cacheWrite: count.nullable(),
  output: count.nullable(),
  reasoning: count.nullable(),
});
export type TokenUsage = z.infer<typeof tokenUsageSchema>;

/** One event of the host's own trace, already redacted. Hosts add their own fields. */
export const traceEventSchema = z.looseObject({ type: z.string() });
export type TraceEvent = z.infer<typeof traceEventSchema>;

export const RUNTIME_RECEIPT_VERSION = "harnesslab.runtime-receipt.v1";

export const runtimeReceiptSchema = z
  .strictObject({
    schemaVersion: z.literal(RUNTIME_RECEIPT_VERSION),
    executor: z.strictObject({
      host: z.enum(HOST_IDS),
      /** The adapter, e.g. `scripted`, `claude-agent-sdk`. */
      kind: z.string(),
      /** npm package that ran the agent and its installed version, when there is one. */
      package: z.string().nullable(),
      packageVersion: z.string().nullable(),
      /** The agent's own version (CLI version; for scripted module agents, the module's sha256). */
      agentVersion: z.string().nullable(),
    }),
    trial: z.strictObject({ task: z.string(), variant: z.string(), index: count }),
    model: z.strictObject({
      requested: z.string().nullable(),
      /** Models the host reports having used, sorted; empty when none is reported. */
      effective: z.array(z.string()),
    }),
    settings: z.strictObject({
      tools: z.array(z.string()),
      allowedTools: z.array(z.string()),
      disallowedTools: z.array(z.string()),
      permissionMode: z.string().nullable(),
      maxTurns: count.nullable(),
      timeoutMs: count,
      /** Names of the environment variables the agent was given; never their values. */
      envVarNames: z.array(z.string()),
      /** The scripted agent as configured (`nop`, `oracle:…`, a module path); null for other hosts. */
      agent: z.string().nullable(),
    }),
    sessionId: z.string().nullable(),
    /** Harness-measured wall time of the whole run. */
    wallTimeMs: z.number().min(0),
    /** Durations the agent itself reported (null when it reports none). */
    durations: z.strictObject({
      agentMs: z.number().min(0).nullable(),
      apiMs: z.number().min(0).nullable(),
    }),
    status: z.enum(RECEIPT_STATUSES),
    infraReason: z.enum(INFRA_REASONS).nullable(),
    error: z.string().nullable(),
    finalText: z.string(),
    tokens: tokenUsageSchema.nullable(),
    /** As reported by the host; null when it reports nothing (never estimated). */
    costUsd: z.number().min(0).nullable(),
    credits: z.number().min(0).nullable(),
    turns: count.nullable(),
    /** Tool calls the agent attempted, denied ones included. */
    toolCalls: count,
    permissionDenials: z.array(policyDecisionRecordSchema),
    trace: z.array(traceEventSchema),
    /**
     * What the host reported of each component of the variant's setup (skills, MCP servers,
     * hooks, …); absent when the variant hands the host none.
     */
    setup: z.array(hostSetupReportSchema).optional(),
  })
  .refine((r) => (r.status === "infra_error") === (r.infraReason !== null), {
    message: "infraReason is set exactly when status is infra_error",
    path: ["infraReason"],
  });
export type RuntimeReceipt = z.infer<typeof runtimeReceiptSchema>;

const PERMISSION_DECISIONS_VERSION = "harnesslab.permission-decisions.v1";

/** The `permission-decisions.json` artifact: every decision of one trial, in call order. */
export const permissionDecisionsSchema = z.strictObject({
  schemaVersion: z.literal(PERMISSION_DECISIONS_VERSION),
  decisions: z.array(policyDecisionRecordSchema),
});
export type PermissionDecisions = z.infer<typeof permissionDecisionsSchema>;

export function permissionDecisionsDocument(
  decisions: readonly PolicyDecisionRecord[],
): PermissionDecisions {
  return { schemaVersion: PERMISSION_DECISIONS_VERSION, decisions: [...decisions] };
}
