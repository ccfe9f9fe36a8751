// Infrastructure errors are values: a broken executor, grader, git or fixture makes that trial
// an `infrastructure_error` with a typed reason and its evidence, the run goes on, and the
// verdict still comes out (or refuses, when the fixture itself changed).
import { renameSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createRunKey, defaultStateDir } from "../../src/compare/evidence/record-seal.js";
import {
  assembleExperiment,
  type RunProgress,
  trialMetricsSchema,
  validationDocumentSchema,
} from "../../src/compare/index.js";
import { sealTrial } from "../../src/compare/run/runner.js";
import { runTrial } from "../../src/compare/trial/trial.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";
import { snapshotTree } from "../../src/workspace/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import {
  filesContaining,
  listFiles,
  loadForRun,
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
  TRIAL_FILES,
} from "../support/experiment.js";
import { testSandbox } from "../support/sandbox.js";

/** One trial at a time, so a hook in onProgress acts between two known trials. */
function sequentialManifest(overrides: Record<string, unknown> = {}) {
  return syntheticManifest({
    trials: { count: 2, seed: 3, order: "sequential" },
    concurrency: 1,
    ...overrides,
  });
}

async function trialFiles(outDir: string, artifactDir: string): Promise<string[]> {
  return (await listFiles(join(outDir, artifactDir))).sort();
}

const experiments: TempExperiment[] = [];
async function experiment(manifest: unknown = sequentialManifest()): Promise<TempExperiment> {
  const exp = await makeExperiment({ manifest });
  experiments.push(exp);
  return exp;
}
afterAll(async () => {
  await Promise.all(experiments.map((e) => e.cleanup()));
});

/** A scripted executor that throws (as a broken SDK adapter would) for the trials `when` selects. */
function throwingExecutor(when: (variant: string, trial: number) => boolean): Executor {
  const inner = new ScriptedExecutor();
  return {
    host: "scripted",
    async run(input) {
      if (when(input.variant, input.trialIndex))
        throw new Error(`SDK transport closed unexpectedly (trial ${input.trialIndex})`);
      return inner.run(input);
    },
  };
}

describe("an executor that never returns", () => {
  it("is abandoned after its timeout plus the grace period; the trial is an infrastructure error", async () => {
    const exp = await experiment(
      sequentialManifest({
        runtime: { host: "scripted", timeoutMs: 1000, validationCommands: [["node", "--test"]] },
      }),
    );
    const inner = new ScriptedExecutor();
    const hung: Executor = {
      host: "scripted",
      async run(input) {
        if (input.variant === "fixer" && input.trialIndex === 1) return new Promise(() => {});
        return inner.run(input);
      },
    };
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => hung,
      executorGraceMs: 50,
    });
    const abandoned = verdict.trials.find((t) => t.variant === "fixer" && t.trial === 1)!;
    expect(abandoned).toMatchObject({
      outcome: "infrastructure_error",
      infraReason: "executor_unresponsive",
    });
    expect(abandoned.explanation).toContain("did not return within its 1000 ms timeout plus 50 ms");
    expect(verdict.trials.filter((t) => t.outcome !== "infrastructure_error")).toHaveLength(3);
  });
});

describe("an executor that throws", () => {
  it("makes that trial an infrastructure error with evidence; the run goes on and decides", async () => {
    const exp = await experiment();
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => throwingExecutor((variant, trial) => variant === "fixer" && trial === 1),
    });
    const broken = verdict.trials.find((t) => t.variant === "fixer" && t.trial === 1)!;
    expect(broken).toMatchObject({
      outcome: "infrastructure_error",
      infraReason: "executor_threw",
    });
    expect(await trialFiles(exp.outDir, broken.artifactDir)).toEqual([...TRIAL_FILES]);
    const stderr = await readFile(join(exp.outDir, broken.artifactDir, "stderr.txt"), "utf8");
    expect(stderr).toContain(
      "harness: executor_threw: SDK transport closed unexpectedly (trial 1)",
    );
    const metrics = trialMetricsSchema.parse(
      await readJson(exp.outDir, `${broken.artifactDir}/metrics.json`),
    );
    expect(metrics.explanation).toContain("SDK transport closed unexpectedly");
    expect(metrics.score).toBeNull();
    // The other three trials ran and were graded.
    expect(verdict.trials.filter((t) => t.outcome !== "infrastructure_error")).toHaveLength(3);
    const fixer = verdict.statistics!.aggregates.variants.find((v) => v.variant === "fixer")!;
    expect(fixer).toMatchObject({ trials: 2, completed: 1, passed: 1, infraErrors: 1 });
    expect(fixer.passRate).toEqual({ excludingInfra: 1, infraAsFailure: 0.5 });
    // One completed fixer trial is below minTrials 2: a verdict, just not an acceptance.
    expect(verdict.status).toBe("need_more_work");
    expect(await readdir(exp.trialsDir)).toEqual([]);
  });

  it("gives the verdict infrastructure_error when a variant completed no trial", async () => {
    const exp = await experiment();
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => throwingExecutor((variant) => variant === "fixer"),
    });
    expect(verdict.status).toBe("infrastructure_error");
    expect(verdict.reason).toContain("no completed trial");
    expect(verdict.reason).toContain("fixer");
    expect(verdict.trials.map((t) => t.outcome).sort()).toEqual([
      "failed",
      "failed",
      "infrastructure_error",
      "infrastructure_error",
    ]);
    const md = await readFile(join(exp.outDir, "verdict.md"), "utf8");
    expect(md).toMatch(/^# Verdict: INFRASTRUCTURE ERROR/);
  });
});

describe("a grader that breaks", () => {
  it("treats a grader program that cannot be started as an infrastructure error, not the agent's failure", async () => {
    const exp = await experiment(
      sequentialManifest({
        tasks: [
          {
            id: "fix-value",
            fixture: "./fixture",
            prompt: "./prompt.md",
            expectedFiles: ["src/value.txt"],
            graders: [
              { kind: "scope" },
              { kind: "command", id: "missing", argv: ["harnesslab-no-such-program", "--check"] },
            ],
          },
        ],
      }),
    );
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
    });
    for (const trial of verdict.trials) {
      expect(trial).toMatchObject({
        outcome: "infrastructure_error",
        infraReason: "grader_failed",
      });
      const stderr = await readFile(join(exp.outDir, trial.artifactDir, "stderr.txt"), "utf8");
      expect(stderr).toContain("grader missing");
      expect(stderr).toContain("not found on the sandbox's PATH");
      // The grade that shows the failure is kept as evidence.
      const validation = validationDocumentSchema.parse(
        await readJson(exp.outDir, `${trial.artifactDir}/validation.json`),
      );
      expect(validation.error).toContain("harnesslab-no-such-program");
      expect(validation.grades.map((g) => g.grader)).toEqual(["scope", "missing"]);
    }
    expect(verdict.status).toBe("infrastructure_error");
  });

  it("records a grader that throws as grader_failed, with the message in validation.json and stderr.txt", async () => {
    const exp = await experiment();
    const { experiment: model } = await loadForRun(exp.manifestPath);
    const assembled = await assembleExperiment(model);
    if (!assembled.ok) throw new Error("assembly failed");
    const task = model.tasks[0]!;
    const variant = model.variants.find((v) => v.id === "fixer")!;
    const artifactDir = join(exp.base, "unit-trial");
    const unsealed = await runTrial({
      experiment: model,
      fixtureSnapshot: await snapshotTree(task.fixtureDir),
      task,
      variant,
      assembled: assembled.variants.get("fixer")!,
      graders: [
        {
          id: "contract",
          kind: "readme-package-v1",
          contractHash: null,
          usesCopy: true,
          grader: {
            id: "contract",
            grade: async (context) => {
              throw new Error(`contract unreadable while grading ${context.trialRoot}/README.md`);
            },
          },
        },
      ],
      executor: new ScriptedExecutor(),
      job: { seq: 1, task: task.id, variant: variant.id, trialIndex: 1 },
      artifactDir,
      secretValues: [],
      tempParent: exp.trialsDir,
      sandbox: await testSandbox(),
    });
    // The caller seals and writes metrics.json, last, as the runner does.
    const metrics = await sealTrial(artifactDir, unsealed, await createRunKey(defaultStateDir()));
    expect(metrics).toMatchObject({
      outcome: "infrastructure_error",
      infraReason: "grader_failed",
      score: null,
      changedFiles: ["src/value.txt"],
    });
    expect((await readdir(artifactDir)).sort()).toEqual([...TRIAL_FILES]);
    const validation = validationDocumentSchema.parse(
      await readJson(artifactDir, "validation.json"),
    );
    expect(validation.error).toBe(
      "grader contract: contract unreadable while grading <trial-root>/README.md",
    );
    const stderr = await readFile(join(artifactDir, "stderr.txt"), "utf8");
    expect(stderr).toContain("harness: grader_failed: grader contract: contract unreadable");
    expect(await readdir(exp.trialsDir)).toEqual([]);
  });
});

describe("a workspace step that breaks", () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it("records a git failure as git_failed with the git argv and output, without the trial path", async () => {
    const exp = await experiment();
    const fakeBin = join(exp.base, "fake-bin");
    await mkdir(fakeBin);
    await writeFile(
      join(fakeBin, "git"),
      '#!/bin/sh\necho "fatal: unable to write new index file in $(pwd)" >&2\nexit 128\n',
    );
    await chmod(join(fakeBin, "git"), 0o755);
    // Between trials 1 and 2 a broken git shadows the real one; it is gone again before trial 3.
    const onProgress = (p: RunProgress) => {
      if (p.done === 1) process.env.PATH = `${fakeBin}:${savedPath}`;
      if (p.done === 2) process.env.PATH = savedPath;
    };
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      onProgress,
    });
    const broken = verdict.trials.find((t) => t.seq === 2)!;
    expect(broken).toMatchObject({ outcome: "infrastructure_error", infraReason: "git_failed" });
    const stderr = await readFile(join(exp.outDir, broken.artifactDir, "stderr.txt"), "utf8");
    // The trial's first git: `init` for a copy of its own (no sandbox, no shared baseline), and
    // for this small fixture's copy of the shared baseline (written and checked without git)
    // the capture's `diff`, which fails outside the trial too: git is broken, not the trial.
    expect(stderr).toMatch(/harness: git_failed: git (init|diff) exited with 128/);
    expect(stderr).toContain("fatal: unable to write new index file in <trial-root>");
    expect(
      verdict.trials.filter((t) => t.seq !== 2).every((t) => t.outcome !== "infrastructure_error"),
    ).toBe(true);
    expect(await filesContaining(exp.outDir, exp.trialsDir)).toEqual([]);
    expect(await filesContaining(exp.outDir, "harnesslab-trial-")).toEqual([]);
    expect(await readdir(exp.trialsDir)).toEqual([]);
  });

  it.each([
    ["without a sandbox, where every trial copies the fixture", true],
    ["with the sandbox, where every trial copies the run's checked copy of it", false],
  ])("records a fixture that disappears mid-run %s", async (_where, unsafeNoSandbox) => {
    const exp = await experiment();
    const away = `${exp.fixtureDir}.away`;
    // The runner calls onProgress synchronously between trials, so a synchronous rename lands
    // exactly between trial 1 and trial 2 (and the fixture is back before trial 3).
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      ...(unsafeNoSandbox ? { unsafeNoSandbox } : {}),
      onProgress: (p) => {
        if (p.done === 1) renameSync(exp.fixtureDir, away);
        if (p.done === 2) renameSync(away, exp.fixtureDir);
      },
    });
    const second = verdict.trials.find((t) => t.seq === 2)!;
    if (unsafeNoSandbox) {
      // As fixture_copy_failed, and the run still decides.
      expect(second).toMatchObject({
        outcome: "infrastructure_error",
        infraReason: "fixture_copy_failed",
      });
      const stderr = await readFile(join(exp.outDir, second.artifactDir, "stderr.txt"), "utf8");
      expect(stderr).toContain("harness: fixture_copy_failed:");
      expect(stderr).toContain("ENOENT");
    } else {
      // Not at all: the trial never reads the task's directory.
      expect(second.outcome).not.toBe("infrastructure_error");
      expect(verdict.trials.every((t) => t.outcome !== "infrastructure_error")).toBe(true);
    }
    expect(verdict.fixturesUnchanged).toBe(true);
    expect(verdict.status).not.toBe("infrastructure_error");
  });
});

describe("the fixture changing during the run", () => {
  it("refuses a verdict when an agent writes into the source fixture", async () => {
    const exp = await experiment();
    const before = await listTree(exp.fixtureDir);
    const target = join(exp.fixtureDir, "README.md");
    const tamper = await exp.writeAgent(
      "tamper.mjs",
      `import { appendFile } from "node:fs/promises";
export default async function tamper({ tools, trial }) {
  await tools.write("src/value.txt", "fixed\\n");
  if (trial.index === 1) await appendFile(${JSON.stringify(target)}, "tampered\\n");
  return "fixed (and touched the source fixture)";
}
`,
    );
    const manifest = sequentialManifest();
    (manifest.variants as Array<Record<string, unknown>>)[1]!.agent = tamper;
    await exp.writeManifest(manifest);
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
    });
    expect(verdict.fixturesUnchanged).toBe(false);
    expect(verdict.status).toBe("infrastructure_error");
    expect(verdict.reason).toContain("fixture changed during the run");
    // The trials' evidence is kept.
    expect(verdict.trials).toHaveLength(4);
    expect(await readFile(join(exp.outDir, "verdict.md"), "utf8")).toContain(
      "A source fixture changed during the run",
    );
    expect(await listTree(exp.fixtureDir)).not.toEqual(before);
  });

  it("refuses a verdict when the fixture is gone at the end", async () => {
    const exp = await experiment();
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      onProgress: (p) => {
        if (p.done === 4) renameSync(exp.fixtureDir, `${exp.fixtureDir}.gone`);
      },
    });
    expect(verdict.trials.every((t) => t.outcome !== "infrastructure_error")).toBe(true);
    expect(verdict.fixturesUnchanged).toBe(false);
    expect(verdict.status).toBe("infrastructure_error");
  });
});
