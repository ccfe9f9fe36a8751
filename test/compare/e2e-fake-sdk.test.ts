// A fake SDK-driven host behind the seam the real executors use (`executorFor`): like an
// agent SDK's permission callback, it puts every tool call to `input.policy.decide`, carries
// out only what is allowed (writing files itself), and reports tokens, cost and turns in its
// receipt. Those numbers must reach metrics.json and the verdict's statistics, and the
// paired-v1 cost test must keep an expensive candidate from being accepted.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trialMetricsSchema, type VerdictDocument } from "../../src/compare/index.js";
import {
  type Executor,
  type ExecutorRunInput,
  permissionDecisionsSchema,
  RUNTIME_RECEIPT_VERSION,
  type RuntimeReceipt,
  runtimeReceiptSchema,
  type TraceEvent,
} from "../../src/exec/index.js";
import { minimalEnv, runCommand } from "../../src/shared/index.js";
import {
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

interface ToolUse {
  tool: string;
  input: Record<string, unknown>;
}

interface Behaviour {
  uses: ToolUse[];
  costUsd: number;
  inputTokens: number;
  outputTokens: number;
  turns: number;
}

const FIX: ToolUse[] = [
  { tool: "Read", input: { file_path: "src/value.txt" } },
  { tool: "Write", input: { file_path: "src/value.txt", content: "fixed\n" } },
  { tool: "Bash", input: { command: "node check.mjs" } },
];

/** What each variant's "model" does and what its run costs. */
const BEHAVIOUR: Record<string, Behaviour> = {
  // Edits a file off the allowed surface (denied), so the value stays wrong.
  baseline: {
    uses: [
      { tool: "Read", input: { file_path: "src/value.txt" } },
      { tool: "Write", input: { file_path: "check.mjs", content: "process.exit(0);\n" } },
    ],
    costUsd: 0.01,
    inputTokens: 1000,
    outputTokens: 100,
    turns: 3,
  },
  pricey: { uses: FIX, costUsd: 0.02, inputTokens: 2000, outputTokens: 300, turns: 5 },
  thrifty: { uses: FIX, costUsd: 0.011, inputTokens: 1100, outputTokens: 120, turns: 4 },
};

/** A stand-in for an SDK adapter: the harness's policy is its only permission callback. */
class FakeSdkExecutor implements Executor {
  readonly host = "claude-code" as const;
  readonly inputs: ExecutorRunInput[] = [];

  async run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
    this.inputs.push(input);
    const started = performance.now();
    const behaviour = BEHAVIOUR[input.variant]!;
    const trace: TraceEvent[] = [{ type: "system", model: input.runtime.model ?? null }];
    const denials = [];
    for (const use of behaviour.uses) {
      const decision = await input.policy.decide(use.tool, use.input);
      trace.push({ type: "tool_use", tool: use.tool, decision: decision.decision });
      if (decision.decision === "deny") {
        denials.push(input.policy.decisions().find((d) => d.seq === decision.seq)!);
        continue;
      }
      if (decision.tool === "Write") {
        const path = decision.target!.absolutePath;
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, String(use.input.content));
      } else if (decision.tool === "Read") {
        await readFile(decision.target!.absolutePath, "utf8");
      } else if (decision.tool === "Bash") {
        const result = await runCommand(decision.argv!, {
          cwd: input.cwd,
          env: minimalEnv({ HOME: input.scratchDir }),
          timeoutMs: 30_000,
        });
        trace.push({ type: "tool_result", exitCode: result.exitCode });
      }
    }
    return {
      schemaVersion: RUNTIME_RECEIPT_VERSION,
      executor: {
        host: "claude-code",
        kind: "fake-sdk",
        package: "fake-agent-sdk",
        packageVersion: "0.0.1",
        agentVersion: "fake-cli 0.0.1",
      },
      trial: { task: input.task, variant: input.variant, index: input.trialIndex },
      model: { requested: input.runtime.model ?? null, effective: [input.runtime.model ?? "?"] },
      settings: {
        tools: [...input.runtime.tools],
        allowedTools: [...input.runtime.allowedTools],
        disallowedTools: [...input.runtime.disallowedTools],
        permissionMode: input.runtime.permissionMode ?? null,
        maxTurns: input.runtime.maxTurns ?? null,
        timeoutMs: input.timeoutMs,
        envVarNames: ["HOME", "PATH"],
        agent: null,
      },
      sessionId: `session-${input.variant}-${input.trialIndex}`,
      wallTimeMs: performance.now() - started,
      durations: { agentMs: 1234, apiMs: 1000 },
      status: "completed",
      infraReason: null,
      error: null,
      finalText: `done (${input.variant})`,
      tokens: {
        uncachedInput: behaviour.inputTokens,
        cacheRead: 0,
        cacheWrite: 0,
        output: behaviour.outputTokens,
        reasoning: null,
      },
      costUsd: behaviour.costUsd,
      credits: null,
      turns: behaviour.turns,
      toolCalls: behaviour.uses.length,
      permissionDenials: denials,
      trace,
    };
  }
}

let exp: TempExperiment;
let executor: FakeSdkExecutor;
let verdict: VerdictDocument;

beforeAll(async () => {
  exp = await makeExperiment({
    manifest: syntheticManifest({
      variants: [
        { id: "baseline", composition: "plain-claude" },
        { id: "pricey", composition: "careful-claude" },
        { id: "thrifty", composition: "extra-claude" },
      ],
      // Two candidates share alpha (Bonferroni); with 3 trials a side the exact test can show
      // all passes against all failures at one-sided 0.5/4 (p = 1/20).
      trials: { count: 3, seed: 7, order: "randomized" },
      verdict: { policy: "paired-v1", alpha: 0.5, minTrials: 2, maxCostRatio: 1.25 },
      runtime: {
        host: "claude-code",
        model: "fake-model-1",
        tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
        allowedTools: [],
        disallowedTools: ["WebFetch", "WebSearch"],
        maxTurns: 10,
        timeoutMs: 60000,
        network: "deny",
        validationCommands: [["node", "check.mjs"]],
      },
    }),
  });
  executor = new FakeSdkExecutor();
  const hosts: string[] = [];
  ({ verdict } = await runManifest(exp.manifestPath, {
    outDir: exp.outDir,
    tempParent: exp.trialsDir,
    executorFor: (host) => {
      hosts.push(host);
      return executor;
    },
  }));
  expect(hosts).toEqual(["claude-code"]);
});

afterAll(() => exp.cleanup());

describe("a fake SDK host through executorFor", () => {
  it("gets the manifest's bounded runtime settings and a policy for its own trial root", () => {
    expect(executor.inputs).toHaveLength(9);
    for (const input of executor.inputs) {
      expect(input.runtime).toMatchObject({
        model: "fake-model-1",
        tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
        allowedTools: [],
        disallowedTools: ["WebFetch", "WebSearch"],
        permissionMode: "default",
        maxTurns: 10,
      });
      expect(input.agent).toBeUndefined();
      expect(input.policy.config.trialRoot).toBe(input.cwd);
      expect(input.policy.config.allowedWrites).toEqual(["src/value.txt"]);
      expect(input.policy.config.allowedCommands).toEqual([["node", "check.mjs"]]);
      expect(input.prompt).toContain("Make `node check.mjs` pass");
    }
    expect(new Set(executor.inputs.map((i) => i.cwd)).size).toBe(9);
  });

  it("grades what the host wrote under the policy: the fixes pass, the denied edit changed nothing", () => {
    for (const t of verdict.trials) {
      if (t.variant === "baseline") {
        expect(t).toMatchObject({ outcome: "failed", changedFiles: [], permissionDenials: 1 });
      } else {
        expect(t).toMatchObject({ outcome: "passed", changedFiles: ["src/value.txt"] });
      }
    }
  });

  it("stores the host's receipt, decisions and its cost, tokens and turns per trial", async () => {
    for (const t of verdict.trials) {
      const behaviour = BEHAVIOUR[t.variant]!;
      const metrics = trialMetricsSchema.parse(
        await readJson(exp.outDir, `${t.artifactDir}/metrics.json`),
      );
      expect(metrics).toMatchObject({
        costUsd: behaviour.costUsd,
        turns: behaviour.turns,
        toolCalls: behaviour.uses.length,
        tokens: {
          uncachedInput: behaviour.inputTokens,
          output: behaviour.outputTokens,
          reasoning: null,
        },
      });
      const receipt = runtimeReceiptSchema.parse(
        await readJson(exp.outDir, `${t.artifactDir}/runtime-receipt.json`),
      );
      expect(receipt.executor.kind).toBe("fake-sdk");
      expect(receipt.model.effective).toEqual(["fake-model-1"]);
      const decisions = permissionDecisionsSchema.parse(
        await readJson(exp.outDir, `${t.artifactDir}/permission-decisions.json`),
      ).decisions;
      expect(decisions.map((d) => d.tool)).toEqual(behaviour.uses.map((u) => u.tool));
      const trace = (await readFile(join(exp.outDir, t.artifactDir, "trace.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as TraceEvent);
      expect(trace[0]).toEqual({ type: "system", model: "fake-model-1" });
    }
  });

  it("aggregates cost, tokens and turns per variant in the verdict statistics", () => {
    const variants = verdict.statistics!.aggregates.variants;
    for (const [id, behaviour] of Object.entries(BEHAVIOUR)) {
      const agg = variants.find((v) => v.variant === id)!;
      expect(agg.costUsd?.total).toBeCloseTo(3 * behaviour.costUsd, 10);
      expect(agg.costUsd?.meanPerCompletedTrial).toBeCloseTo(behaviour.costUsd, 10);
      expect(agg.tokens?.total).toEqual({
        uncachedInput: 3 * behaviour.inputTokens,
        cacheRead: 0,
        cacheWrite: 0,
        output: 3 * behaviour.outputTokens,
        reasoning: 0,
      });
      expect(agg.meanTurns).toBe(behaviour.turns);
    }
  });

  it("does not accept a better candidate that costs 2× the baseline, and accepts one within the cost ratio", () => {
    const comparisons = verdict.statistics!.comparisons;
    const pricey = comparisons.find((c) => c.variant === "pricey")!;
    const thrifty = comparisons.find((c) => c.variant === "thrifty")!;
    expect(pricey.interval!.lower).toBeGreaterThan(0);
    expect(pricey.costRatio.usd).toBeCloseTo(2, 10);
    expect(pricey.status).toBe("need_more_work");
    expect(pricey.reason).toContain("costs too much");
    expect(thrifty.costRatio.usd).toBeCloseTo(1.1, 10);
    expect(thrifty.status).toBe("accept");
    expect(verdict.status).toBe("accept");
    expect(verdict.statistics!.best).toBe("thrifty");
  });
});
