// Small synthetic experiments on the scripted host: trials isolated from each other, nothing
// of the harness's environment or temporary paths in the artifacts, and the execution order
// fixed by the seed.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planTrials, runManifestSchema, type VerdictDocument } from "../../src/compare/index.js";
import { permissionDecisionsSchema, ScriptedExecutor } from "../../src/exec/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import {
  filesContaining,
  fixtureAgent,
  loadForRun,
  makeExperiment,
  readJson,
  recordingExecutor,
  runManifest,
  SYNTHETIC_FIXTURE,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

const FAKE_SECRET = "sk-test-synthetic-41d8cd98f00b204e9800998ecf8427e";

describe("isolation and leaks (4 variants × 2 trials, 2 at a time)", () => {
  let exp: TempExperiment;
  let verdict: VerdictDocument;
  let fixtureBefore: string[];

  beforeAll(async () => {
    exp = await makeExperiment();
    await exp.writeAgent("probe.mjs", await fixtureAgent("probe.mjs"));
    await exp.writeAgent("leaky.mjs", await fixtureAgent("leaky.mjs"));
    await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "probe-a", composition: "careful", agent: "./agents/probe.mjs" },
          { id: "probe-b", composition: "extra", agent: "./agents/probe.mjs" },
          { id: "leaky", composition: "plain", agent: "./agents/leaky.mjs" },
        ],
      }),
    );
    fixtureBefore = await listTree(exp.fixtureDir);
    const previous = process.env.FAKE_API_KEY;
    process.env.FAKE_API_KEY = FAKE_SECRET;
    try {
      ({ verdict } = await runManifest(exp.manifestPath, {
        outDir: exp.outDir,
        tempParent: exp.trialsDir,
      }));
    } finally {
      if (previous === undefined) delete process.env.FAKE_API_KEY;
      else process.env.FAKE_API_KEY = previous;
    }
  });
  afterAll(() => exp.cleanup());

  const probes = () => verdict.trials.filter((t) => t.variant.startsWith("probe-"));

  it("gives every trial a fresh copy of the fixture: no trial sees another's writes", async () => {
    expect(probes()).toHaveLength(4);
    const fixtureFiles = Object.keys(SYNTHETIC_FIXTURE).sort();
    for (const trial of probes()) {
      const report = JSON.parse(
        await readFile(join(exp.outDir, trial.artifactDir, "response.txt"), "utf8"),
      ) as { mark: string; seen: string; files: string[]; after: string; wrote: boolean };
      expect(report.mark).toBe(`${trial.variant}#${trial.trial}`);
      expect(report.seen, trial.artifactDir).toBe("old\n");
      expect(report.files).toEqual(fixtureFiles);
      expect(report.wrote).toBe(true);
      // Read back after the other lane's trial had time to write: still its own mark.
      expect(report.after, trial.artifactDir).toBe(`${report.mark}\n`);
    }
  });

  it("captures each trial's own change and nothing of another trial in its patch", async () => {
    for (const trial of probes()) {
      const patch = await readFile(join(exp.outDir, trial.artifactDir, "patch.diff"), "utf8");
      expect(patch).toContain(`-old\n+${trial.variant}#${trial.trial}\n`);
      const others = probes().filter((o) => o !== trial);
      for (const other of others) expect(patch).not.toContain(`${other.variant}#${other.trial}\n`);
      expect(trial.changedFiles).toEqual(["src/value.txt"]);
    }
  });

  it("replaces the trial root and the temporary area with placeholders", async () => {
    const leaky = verdict.trials.filter((t) => t.variant === "leaky");
    expect(leaky).toHaveLength(2);
    for (const trial of leaky) {
      const response = await readFile(join(exp.outDir, trial.artifactDir, "response.txt"), "utf8");
      expect(response).toContain("cwd=<trial-root>");
      // The command saw the sandbox's own empty HOME, nothing of the harness's.
      expect(response).toContain('"HOME":"/tmp/home"');
      expect(response).toContain('"cwd":"<trial-root>"');
    }
    expect(await filesContaining(exp.outDir, exp.trialsDir)).toEqual([]);
    expect(await filesContaining(exp.outDir, "harnesslab-trial-")).toEqual([]);
    expect(await readdir(exp.trialsDir)).toEqual([]);
  });

  it("never stores the value of a credential variable of the harness's environment", async () => {
    expect(await filesContaining(exp.outDir, FAKE_SECRET)).toEqual([]);
    // The agent did get the value (it is trusted in-process code) and it is masked, not lost.
    const leaky = verdict.trials.find((t) => t.variant === "leaky")!;
    const response = await readFile(join(exp.outDir, leaky.artifactDir, "response.txt"), "utf8");
    expect(response).toContain("secret=[REDACTED]");
    const patch = await readFile(join(exp.outDir, leaky.artifactDir, "patch.diff"), "utf8");
    expect(patch).toContain("+fixed [REDACTED]\n");
  });

  it("records the denied write off the allowed surface and the write by absolute path inside the root", async () => {
    const leaky = verdict.trials.find((t) => t.variant === "leaky")!;
    const decisions = permissionDecisionsSchema.parse(
      await readJson(exp.outDir, `${leaky.artifactDir}/permission-decisions.json`),
    ).decisions;
    expect(decisions.map((d) => [d.tool, d.decision, d.rule])).toEqual([
      ["Bash", "allow", "allowed"],
      ["Write", "allow", "allowed"],
      ["Write", "deny", "write-not-allowed"],
      ["Write", "allow", "allowed"],
    ]);
    expect(decisions[3]!.inputSummary).toContain("<trial-root>/src/value.txt");
  });

  it("leaves the fixture byte-identical", async () => {
    expect(await listTree(exp.fixtureDir)).toEqual(fixtureBefore);
    expect(verdict.fixturesUnchanged).toBe(true);
  });
});

describe("execution order", () => {
  let exp: TempExperiment;
  beforeAll(async () => {
    exp = await makeExperiment({
      manifest: syntheticManifest({
        tasks: [
          {
            id: "fix-value",
            fixture: "./fixture",
            prompt: "./prompt.md",
            expectedFiles: ["src/value.txt"],
            graders: [{ kind: "scope", mode: "exact" }],
          },
        ],
        trials: { count: 3, seed: 1234, order: "randomized" },
        concurrency: 1,
      }),
    });
  });
  afterAll(() => exp.cleanup());

  it("runs the trials in the order manifest.json records, the same for the same seed", async () => {
    const runs: string[][] = [];
    for (const name of ["first", "second"]) {
      const started: string[] = [];
      const outDir = exp.freshOut(name);
      await runManifest(exp.manifestPath, {
        outDir,
        tempParent: exp.trialsDir,
        executorFor: () => recordingExecutor(new ScriptedExecutor(), started),
      });
      const recorded = runManifestSchema.parse(await readJson(outDir, "manifest.json")).evidence
        .executionOrder;
      expect(started).toEqual(recorded.map((o) => `${o.variant}/${o.task}/${o.trial}`));
      runs.push(started);
    }
    expect(runs[1]).toEqual(runs[0]);
    // Randomized: not the natural trial-major order.
    expect(runs[0]).not.toEqual([
      "baseline/fix-value/1",
      "fixer/fix-value/1",
      "baseline/fix-value/2",
      "fixer/fix-value/2",
      "baseline/fix-value/3",
      "fixer/fix-value/3",
    ]);
  });

  it("plans a different order for a different seed", async () => {
    const { experiment } = await loadForRun(exp.manifestPath);
    const order = (seed: number) =>
      planTrials({ ...experiment, trials: { ...experiment.trials, seed } }).map(
        (j) => `${j.variant}/${j.trialIndex}`,
      );
    expect(order(1234)).toEqual(order(1234));
    expect([5, 6, 7, 8].some((seed) => order(seed).join() !== order(1234).join())).toBe(true);
  });
});

describe("several tasks", () => {
  let exp: TempExperiment;
  let verdict: VerdictDocument;
  beforeAll(async () => {
    exp = await makeExperiment();
    // A second task on its own fixture, where the fixer's write is off the allowed surface.
    for (const [path, content] of Object.entries(SYNTHETIC_FIXTURE))
      await mkdir(dirname(join(exp.dir, "fixture-b", path)), { recursive: true }).then(() =>
        writeFile(join(exp.dir, "fixture-b", path), content),
      );
    await exp.writeManifest(
      syntheticManifest({
        tasks: [
          (syntheticManifest().tasks as unknown[])[0],
          {
            id: "other-file",
            fixture: "./fixture-b",
            prompt: "./prompt.md",
            expectedFiles: ["README.md"],
            graders: [{ kind: "scope", mode: "subset" }],
          },
        ],
      }),
    );
    ({ verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
    }));
  });
  afterAll(() => exp.cleanup());

  it("runs every task × variant × trial into <variant>/<task>/trial-NNN, task by task", async () => {
    expect(verdict.trials).toHaveLength(8);
    for (const variant of ["baseline", "fixer"])
      expect((await readdir(join(exp.outDir, variant))).sort()).toEqual([
        "fix-value",
        "other-file",
      ]);
    const order = runManifestSchema.parse(await readJson(exp.outDir, "manifest.json")).evidence
      .executionOrder;
    expect(order.map((o) => o.task)).toEqual([
      ...Array(4).fill("fix-value"),
      ...Array(4).fill("other-file"),
    ]);
  });

  it("grades each task with its own surface and compares stratified by task", () => {
    const fixer = verdict.trials.filter((t) => t.variant === "fixer");
    expect(fixer.filter((t) => t.task === "fix-value").every((t) => t.outcome === "passed")).toBe(
      true,
    );
    // On the second task the write to src/value.txt is denied: nothing changes, and its only
    // grader (scope) passes an unchanged tree.
    for (const t of fixer.filter((x) => x.task === "other-file"))
      expect(t).toMatchObject({ outcome: "passed", permissionDenials: 1, changedFiles: [] });
    const comparison = verdict.statistics!.comparisons[0]!;
    expect(comparison.tasks).toEqual(["fix-value", "other-file"]);
    expect(comparison.interval?.method).toBe("score-with-exact-test");
    expect(comparison.test?.method).toBe("exact-conditional-and-score");
    expect(verdict.statistics!.aggregates.cells).toHaveLength(4);
    expect(Object.keys(verdict.evidence.fixtureHashes).sort()).toEqual(["fix-value", "other-file"]);
  });

  it("lists the per-task results in verdict.md", async () => {
    const md = await readFile(join(exp.outDir, "verdict.md"), "utf8");
    expect(md).toContain("## Per task");
    expect(md).toMatch(/\| other-file \| fixer \| 2 \/ 2 \|/);
  });
});
