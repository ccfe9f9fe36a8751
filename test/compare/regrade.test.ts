// Re-grading recorded trials: the graders run again on each recorded patch applied to a fresh
// copy of the fixture, no agent runs, and the new verdict is written beside the old one.
import { spawn } from "node:child_process";
import { cp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  regradeRun,
  type VerdictDocument,
  validationDocumentSchema,
  verdictDocumentSchema,
} from "../../src/compare/index.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";
import { InvalidInputError } from "../../src/shared/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import {
  filesContaining,
  listFiles,
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

/** The synthetic manifest with its command grader running `argv` instead of `node check.mjs`. */
function withCheck(argv: string[]) {
  return syntheticManifest({
    tasks: [
      {
        id: "fix-value",
        fixture: "./fixture",
        prompt: "./prompt.md",
        expectedFiles: ["src/value.txt"],
        graders: [
          { kind: "scope", mode: "subset" },
          { kind: "command", id: "check", argv, timeoutMs: 30000 },
        ],
      },
    ],
  });
}

let exp: TempExperiment;
let original: VerdictDocument;
let originalFiles: string[];

beforeAll(async () => {
  exp = await makeExperiment();
  ({ verdict: original } = await runManifest(exp.manifestPath, {
    outDir: exp.outDir,
    tempParent: exp.trialsDir,
  }));
  expect(original.status).toBe("accept");
  originalFiles = await listTree(exp.outDir);
});

afterAll(() => exp.cleanup());

describe("regrade", () => {
  it("with unchanged graders reproduces every outcome and says nothing changed", async () => {
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(result.stem).toBe("verdict.regrade-001");
    expect(result.changes).toEqual([]);
    expect(result.notes).toEqual([]);
    expect(result.verdict.status).toBe("accept");
    expect(result.verdict.regradeOf).toBe("verdict.json");
    expect(result.verdict.trials.map((t) => [t.artifactDir, t.outcome, t.score])).toEqual(
      original.trials.map((t) => [t.artifactDir, t.outcome, t.score]),
    );
    expect(result.summary).toEqual({ changes: [], up: 0, down: 0, other: 0, passRates: [] });
    // No grader of this run takes a contract.
    expect(result.contracts).toEqual([]);
    expect(result.verdict.graderContracts).toEqual([]);
  });

  it("after the grader changes, flips the outcomes, writes verdict.regrade-002.* beside the old and leaves the old untouched", async () => {
    // The check now passes only while the value is still "old": the fixer's trials fail.
    await exp.writeManifest(withCheck(["node", "check-old.mjs"]));
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(result.stem).toBe("verdict.regrade-002");
    // The note names what differs from the inputs the run recorded.
    expect(result.notes).toEqual([
      expect.stringMatching(
        /^changed since the run: the settings of grader check of task fix-value differ: sha256:[0-9a-f]{12}… then, sha256:[0-9a-f]{12}… now$/,
      ),
    ]);
    expect(result.verdict.status).toBe("reject");
    expect(result.changes).toHaveLength(4);
    for (const change of result.changes) {
      const flipped = change.artifactDir.startsWith("fixer/")
        ? { before: "passed", after: "failed", direction: "down" }
        : { before: "failed", after: "passed", direction: "up" };
      expect({
        before: change.before.outcome,
        after: change.after.outcome,
        direction: change.direction,
      }).toEqual(flipped);
    }
    expect(result.summary.passRates).toEqual([
      { variant: "baseline", before: 0, after: 1 },
      { variant: "fixer", before: 1, after: 0 },
    ]);
    const written = await listFiles(exp.outDir);
    for (const name of ["json", "md", "html"])
      expect(written).toContain(`verdict.regrade-002.${name}`);
    const stored = verdictDocumentSchema.parse(
      await readJson(exp.outDir, "verdict.regrade-002.json"),
    );
    expect(stored.status).toBe("reject");
    for (const trial of original.trials) {
      const validation = validationDocumentSchema.parse(
        await readJson(exp.outDir, `${trial.artifactDir}/validation.regrade-002.json`),
      );
      expect(validation.grades.find((g) => g.grader === "check")?.checks[0]?.detail).toContain(
        "node check-old.mjs",
      );
    }
    // Everything the run wrote is byte-identical; regrade only added files.
    const now = await listTree(exp.outDir);
    for (const line of originalFiles) expect(now).toContain(line);
    expect(await readFile(join(exp.outDir, "verdict.md"), "utf8")).toMatch(/^# Verdict: ACCEPT/);
    expect(await readFile(join(exp.outDir, "verdict.regrade-002.md"), "utf8")).toMatch(
      /^# Verdict: REJECT/,
    );
    expect(await filesContaining(exp.outDir, exp.trialsDir)).toEqual([]);
  });

  it("records a grader that cannot start as an infrastructure error, not a failure", async () => {
    await exp.writeManifest(withCheck(["harnesslab-no-such-program"]));
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(result.verdict.trials.every((t) => t.infraReason === "grader_failed")).toBe(true);
    expect(result.verdict.status).toBe("infrastructure_error");
    await exp.writeManifest(syntheticManifest());
  });

  it("re-grades from another manifest file when asked", async () => {
    const other = await exp.writeManifest(withCheck(["node", "check-old.mjs"]), "other.json");
    await exp.writeManifest(syntheticManifest());
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir, manifestPath: other });
    expect(result.verdict.status).toBe("reject");
  });

  it("refuses when the fixture is no longer the one the run used", async () => {
    const readme = join(exp.fixtureDir, "README.md");
    const text = await readFile(readme, "utf8");
    await writeFile(readme, `${text}changed\n`);
    try {
      const before = await listFiles(exp.outDir);
      await expect(regradeRun(exp.outDir, { tempParent: exp.trialsDir })).rejects.toThrow(
        InvalidInputError,
      );
      await expect(regradeRun(exp.outDir, { tempParent: exp.trialsDir })).rejects.toThrow(
        /not the one the run used/,
      );
      expect(await listFiles(exp.outDir)).toEqual(before);
    } finally {
      await writeFile(readme, text);
    }
  });

  it("refuses a directory that holds no finished run", async () => {
    await expect(regradeRun(exp.fixtureDir)).rejects.toThrow(InvalidInputError);
  });

  it("refuses while a live run holds the directory's lock, saying a run is in progress, and writes nothing", async () => {
    const lockPath = join(exp.outDir, ".harnesslab-run.lock");
    // A live process other than this one stands in for the run.
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], {
      stdio: "ignore",
    });
    const record = { pid: holder.pid, host: hostname(), startedAt: "now", token: "t0" };
    await writeFile(lockPath, JSON.stringify(record));
    // The run's verdict.json is not what a live run has yet: the lock is checked first.
    const verdictPath = join(exp.outDir, "verdict.json");
    const verdictText = await readFile(verdictPath, "utf8");
    await rm(verdictPath);
    const before = await listTree(exp.outDir);
    try {
      await expect(regradeRun(exp.outDir, { tempParent: exp.trialsDir })).rejects.toThrow(
        `a run is in progress in this directory (pid ${holder.pid}, started now); wait for it to finish, then regrade`,
      );
      expect(await listTree(exp.outDir)).toEqual(before);
    } finally {
      holder.kill("SIGKILL");
      await rm(lockPath, { force: true });
      await writeFile(verdictPath, verdictText);
    }
  });
});

describe("regrade of single trials", () => {
  it("refuses to re-grade a run whose patch.diff or metrics.json changed since the run, naming each trial, and writes nothing", async () => {
    await exp.writeManifest(syntheticManifest());
    const copy = exp.freshOut("out-bad-patch");
    await cp(exp.outDir, copy, { recursive: true });
    const edited = "fixer/fix-value/trial-001";
    const patchFile = join(copy, edited, "patch.diff");
    const patch = await readFile(patchFile, "utf8");
    expect(patch).toContain("-old");
    // As when patch.diff is edited by hand, or rewritten by code that reached --out.
    await writeFile(patchFile, patch.replace("-old", "-older"));
    // A forged outcome: the baseline's first trial claims it passed.
    const forged = "baseline/fix-value/trial-001";
    const metricsFile = join(copy, forged, "metrics.json");
    const metrics = JSON.parse(await readFile(metricsFile, "utf8")) as Record<string, unknown>;
    await writeFile(
      metricsFile,
      JSON.stringify({ ...metrics, outcome: "passed", score: 100, gradePassed: true }, null, 2),
    );
    const before = await readdir(copy);

    const error = await regradeRun(copy, { tempParent: exp.trialsDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    const problems = (error as InvalidInputError).problems;
    expect(problems.map((p) => p.path).sort()).toEqual([forged, edited].sort());
    expect(problems.find((p) => p.path === edited)?.message).toContain("patch.diff");
    expect(problems.find((p) => p.path === forged)?.message).toContain("not written by this run");
    expect((error as Error).message).toContain("--resume");
    expect(await readdir(copy)).toEqual(before);
  });

  it("keeps the record of a trial that never reached grading, and gives the new verdict its checks", async () => {
    const other = await makeExperiment();
    try {
      const inner = new ScriptedExecutor();
      const throwing: Executor = {
        host: "scripted",
        async run(input) {
          if (input.variant === "fixer" && input.trialIndex === 2)
            throw new Error("SDK transport closed unexpectedly");
          return inner.run(input);
        },
      };
      const { verdict } = await runManifest(other.manifestPath, {
        outDir: other.outDir,
        tempParent: other.trialsDir,
        executorFor: () => throwing,
      });
      const dir = "fixer/fix-value/trial-002";
      expect(verdict.trials.find((t) => t.artifactDir === dir)?.infraReason).toBe("executor_threw");
      const metricsBefore = await readFile(join(other.outDir, dir, "metrics.json"), "utf8");

      const result = await regradeRun(other.outDir, { tempParent: other.trialsDir });
      expect(result.changes).toEqual([]);
      const kept = result.verdict.trials.find((t) => t.artifactDir === dir);
      const recordedTrial = verdict.trials.find((t) => t.artifactDir === dir);
      expect(kept).toEqual(recordedTrial);
      expect(await readFile(join(other.outDir, dir, "metrics.json"), "utf8")).toBe(metricsBefore);
      expect(await readFile(join(other.outDir, dir, "validation.regrade-001.json"), "utf8")).toBe(
        await readFile(join(other.outDir, dir, "validation.json"), "utf8"),
      );
    } finally {
      await other.cleanup();
    }
  });
});
