// A finished trial's metrics as the runner records them (a passed trial with nothing measured),
// for tests that need records without running trials.
import type { TrialMetrics } from "../../src/compare/index.js";

export function passedTrialMetrics(overrides: Partial<TrialMetrics> = {}): TrialMetrics {
  return {
    schemaVersion: "harnesslab.trial-metrics.v1",
    task: "t",
    variant: "v",
    trial: 1,
    seq: 1,
    outcome: "passed",
    infraReason: null,
    explanation: "",
    receiptStatus: "completed",
    score: 100,
    gradePassed: true,
    graders: [],
    changedFiles: [],
    patchBytes: 0,
    patchRedacted: false,
    durationMs: 1,
    agentWallTimeMs: null,
    tokens: null,
    costUsd: null,
    credits: null,
    turns: null,
    costEquivalentTokens: null,
    toolUse: null,
    toolCalls: null,
    permissionDenials: 0,
    retriedAttempts: [],
    ...overrides,
  };
}
