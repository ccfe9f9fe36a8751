// The seed system's v1 manifest through the runner: variants H0/H1, one task, artifacts at
// `H0/trial-001`, the heuristic-v1 verdict and the readme-package-v1 grader. A v1 manifest
// requires the qoder host; a fake qoder executor stands in for the SDK at the executor seam.
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  planTrials,
  runManifestSchema,
  trialArtifactDir,
  type VerdictDocument,
  validationDocumentSchema,
} from "../../src/compare/index.js";
import {
  type Executor,
  type ExecutorRunInput,
  RUNTIME_RECEIPT_VERSION,
  type RuntimeReceipt,
} from "../../src/exec/index.js";
import { makeWorkspace, type Workspace } from "../fixtures/manifests/workspace.js";
import {
  listFiles,
  loadForRun,
  readJson,
  runManifest,
  TRIAL_FILES,
} from "../support/experiment.js";

const README = `# @fixture/retry-kit

## Purpose

Retries an async operation.

## Installation

\`\`\`sh
npm install @fixture/retry-kit
\`\`\`
`;

/** Writes README.md through the trial's policy, like a qoder SDK run whose model did that. */
class FakeQoderExecutor implements Executor {
  readonly host = "qoder" as const;
  async run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
    const readme = input.variant === "H1" ? README : "# retry-kit\n";
    const decision = await input.policy.decide("Write", {
      file_path: "README.md",
      content: readme,
    });
    if (decision.decision === "allow") {
      await mkdir(dirname(decision.target!.absolutePath), { recursive: true });
      await writeFile(decision.target!.absolutePath, readme);
    }
    return {
      schemaVersion: RUNTIME_RECEIPT_VERSION,
      executor: {
        host: "qoder",
        kind: "fake-qoder",
        package: null,
        packageVersion: null,
        agentVersion: null,
      },
      trial: { task: input.task, variant: input.variant, index: input.trialIndex },
      model: { requested: input.runtime.model ?? null, effective: [] },
      settings: {
        tools: [...input.runtime.tools],
        allowedTools: [...input.runtime.allowedTools],
        disallowedTools: [...input.runtime.disallowedTools],
        permissionMode: input.runtime.permissionMode ?? null,
        maxTurns: input.runtime.maxTurns ?? null,
        timeoutMs: input.timeoutMs,
        envVarNames: [],
        agent: null,
      },
      sessionId: null,
      wallTimeMs: 1,
      durations: { agentMs: null, apiMs: null },
      status: "completed",
      infraReason: null,
      error: null,
      finalText: "wrote README.md",
      tokens: null,
      costUsd: null,
      credits: null,
      turns: 1,
      toolCalls: 1,
      permissionDenials: [],
      trace: [{ type: "tool_use", tool: "Write" }],
    };
  }
}

let ws: Workspace;
beforeAll(async () => {
  ws = await makeWorkspace();
});
afterAll(() => ws.cleanup());

describe("harness-compare.v1 layout", () => {
  it("plans the seed system's order and places trials at H0/trial-NNN", async () => {
    const { experiment } = await loadForRun(join(ws.dir, "experiment.json"));
    expect(experiment.layout).toBe("v1");
    const order = planTrials(experiment).map((j) => `${j.variant}/${j.trialIndex}`);
    expect(order).toEqual([
      "H0/3",
      "H1/2",
      "H0/2",
      "H1/1",
      "H1/4",
      "H0/4",
      "H0/5",
      "H1/3",
      "H0/1",
      "H1/5",
    ]);
    expect(trialArtifactDir(experiment, "H0", "task", 1)).toBe("H0/trial-001");
    expect(trialArtifactDir(experiment, "H1", "task", 12)).toBe("H1/trial-012");
  });

  it("runs a v1 manifest (qoder host behind the executor seam) into H0/ and H1/", async () => {
    const outDir = join(ws.parent, "out");
    let verdict: VerdictDocument;
    // A v1 manifest runs the qoder host, which cannot run contained: a run says so and goes on
    // only when asked to.
    await expect(
      runManifest(join(ws.dir, "experiment.json"), {
        outDir,
        trials: 1,
        executorFor: () => new FakeQoderExecutor(),
      }),
    ).rejects.toThrow(/qoder host cannot run inside the OS sandbox/);
    ({ verdict } = await runManifest(join(ws.dir, "experiment.json"), {
      outDir,
      trials: 1,
      executorFor: () => new FakeQoderExecutor(),
      unsafeNoSandbox: true,
    }));
    expect(verdict.containment).toMatchObject({ kind: "none", unsafe: true });
    expect((await readdir(outDir)).sort()).toEqual(
      [
        "H0",
        "H1",
        "frozen-task.json",
        "manifest.json",
        "verdict.html",
        "verdict.json",
        "verdict.md",
      ].sort(),
    );
    for (const variant of ["H0", "H1"])
      expect(await listFiles(join(outDir, variant, "trial-001"))).toEqual([...TRIAL_FILES]);
    expect(verdict.trials.map((t) => t.artifactDir).sort()).toEqual([
      "H0/trial-001",
      "H1/trial-001",
    ]);
    expect(verdict.statistics?.policy.kind).toBe("heuristic-v1");
    expect(verdict.variants.map((v) => [v.id, v.label, v.composition])).toEqual([
      ["H0", "baseline", "readme-baseline"],
      ["H1", "candidate", "readme-grounded"],
    ]);
    const run = runManifestSchema.parse(await readJson(outDir, "manifest.json"));
    expect(run.effective.trials).toBe(1);
    const validation = validationDocumentSchema.parse(
      await readJson(outDir, "H1/trial-001/validation.json"),
    );
    expect(validation.grades.map((g) => g.grader)).toEqual(["readme-package-v1"]);
    const installation = validation.grades[0]!.checks.find((c) => c.id === "installation");
    expect(installation?.passed).toBe(true);
    // The candidate wrote a better README than the baseline's one-liner.
    const score = (id: string) => verdict.trials.find((t) => t.variant === id)!.score!;
    expect(score("H1")).toBeGreaterThan(score("H0"));
  });
});
