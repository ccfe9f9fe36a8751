// A run shares each task's baseline between its trials and grading copies when it has a sandbox,
// and the verdict, every trial's outcome and every patch are what trials with baselines of their
// own give (a run without a sandbox shares nothing, so it is that reference). The shared
// baseline lives outside --out, beside the trials, only while the run does.
import { readdirSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunProgress, regradeRun, type VerdictDocument } from "../../src/compare/index.js";
import { EXAMPLE_DIR, RUN_FILES, runManifest } from "../support/experiment.js";

const MANIFEST = join(EXAMPLE_DIR, "experiment.json");

interface Observed {
  verdict: VerdictDocument;
  out: string;
  /** The harnesslab directories beside the trials each time a trial finished. */
  seen: string[][];
  /** Those directories once the run returned. */
  left: string[];
}

let base: string;
let shared: Observed;
let unshared: Observed;

async function observedRun(name: string, unsafeNoSandbox: boolean): Promise<Observed> {
  const out = join(base, `${name}-out`);
  const trials = join(base, `${name}-trials`);
  await mkdir(trials);
  const harnessDirs = () =>
    readdirSync(trials)
      .filter((entry) => entry.startsWith("harnesslab-"))
      .sort();
  const seen: string[][] = [];
  const { verdict } = await runManifest(MANIFEST, {
    outDir: out,
    tempParent: trials,
    concurrency: 2,
    ...(unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
    onProgress: (progress: RunProgress) => {
      if (progress.done > 0) seen.push(harnessDirs());
    },
  });
  return { verdict, out, seen, left: harnessDirs() };
}

/** A value without its timings (`…Ms`, `duration`), which no two runs share. */
function untimed(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(untimed);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !key.endsWith("Ms") && key !== "duration")
        .map(([key, v]) => [key, untimed(v)]),
    );
  return value;
}

/** What a trial's outcome is made of, without its timings. */
function outcomes(verdict: VerdictDocument) {
  return verdict.trials.map((t) => ({
    artifactDir: t.artifactDir,
    outcome: t.outcome,
    infraReason: t.infraReason,
    score: t.score,
    changedFiles: t.changedFiles,
    gradePassed: t.gradePassed,
    explanation: t.explanation,
  }));
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-shared-run-"));
  shared = await observedRun("shared", false);
  unshared = await observedRun("unshared", true);
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("compare run on examples/fix-the-bug with two trials at once", () => {
  it("reaches the verdict trials with baselines of their own reach", () => {
    expect(shared.verdict.containment).toMatchObject({ kind: "bwrap", unsafe: false });
    expect(unshared.verdict.containment).toMatchObject({ kind: "none", unsafe: true });
    expect(shared.verdict.status).toBe("accept");
    expect(shared.verdict.status).toBe(unshared.verdict.status);
    expect(shared.verdict.fixturesUnchanged).toBe(true);
    expect(untimed(shared.verdict.statistics)).toEqual(untimed(unshared.verdict.statistics));
    expect(outcomes(shared.verdict)).toEqual(outcomes(unshared.verdict));
  });

  it("records byte for byte the same patch and grades for every trial", async () => {
    expect(shared.verdict.trials).toHaveLength(10);
    for (const trial of shared.verdict.trials) {
      const [mine, reference] = await Promise.all(
        [shared.out, unshared.out].map((out) =>
          readFile(join(out, trial.artifactDir, "patch.diff")),
        ),
      );
      expect(mine, trial.artifactDir).toEqual(reference);
      const grades = async (out: string) =>
        (
          JSON.parse(await readFile(join(out, trial.artifactDir, "validation.json"), "utf8")) as {
            grades: Array<{ grader: string; passed: boolean; score: number }>;
          }
        ).grades.map(({ grader, passed, score }) => ({ grader, passed, score }));
      expect(await grades(shared.out), trial.artifactDir).toEqual(await grades(unshared.out));
    }
  });

  it("keeps the shared baseline beside the trials while the run lasts, never in --out, and removes it at the end", async () => {
    const baselines = (dirs: string[]) => dirs.filter((d) => d.startsWith("harnesslab-baseline-"));
    expect(shared.seen.length).toBe(10);
    expect(shared.seen.every((dirs) => baselines(dirs).length === 1)).toBe(true);
    expect(shared.left).toEqual([]);
    expect((await readdir(shared.out)).sort()).toEqual(
      [...RUN_FILES, "baseline", "verified"].sort(),
    );
  });

  it("shares the baseline between a regrade's grading copies too, which regrade every trial as before and leave nothing", async () => {
    const trials = join(base, "shared-trials");
    const seen: string[][] = [];
    const { verdict, changes } = await regradeRun(shared.out, {
      tempParent: trials,
      onProgress: () => seen.push(readdirSync(trials).filter((d) => d.startsWith("harnesslab-"))),
    });
    expect(changes).toEqual([]);
    expect(outcomes(verdict)).toEqual(outcomes(shared.verdict));
    expect(seen.some((dirs) => dirs.some((d) => d.startsWith("harnesslab-baseline-")))).toBe(true);
    expect(await readdir(trials)).toEqual([]);
    expect((await readdir(shared.out)).filter((name) => name.startsWith("."))).toEqual([]);
  });

  it("shares nothing without a sandbox", () => {
    expect(unshared.seen.flat().filter((d) => d.startsWith("harnesslab-baseline-"))).toEqual([]);
    expect(unshared.left).toEqual([]);
  });
});
