// Interrupted runs resume: an aborted run keeps its finished trials, `resume: true` runs only
// the missing ones, and the final verdict has the same statistics as an uninterrupted run.
import { spawn, spawnSync } from "node:child_process";
import {
  access,
  copyFile,
  cp,
  lstat,
  mkdir,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ExperimentInputError,
  type RunInputs,
  type RunManifest,
  type RunProgress,
  trialArtifactDir,
  type VerdictDocument,
} from "../../src/compare/index.js";
import { differingInputs } from "../../src/compare/run/run-inputs.js";
import {
  REGRADE_WORKSPACE_MARKER,
  WORKSPACE_MARKER,
} from "../../src/compare/run/workspace-marker.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import { runHarness } from "../support/cli.js";
import {
  listFiles,
  loadForRun,
  makeExperiment,
  recordingExecutor,
  runManifest,
  syntheticManifest,
  type TempExperiment,
  TRIAL_FILES,
} from "../support/experiment.js";

let exp: TempExperiment;
let full: VerdictDocument;

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** What must not depend on how the run was split: everything but wall-clock measurements. */
function comparable(verdict: VerdictDocument) {
  const stats = verdict.statistics!;
  const withoutDuration = <T extends { duration?: unknown }>(x: T) => ({ ...x, duration: null });
  return {
    status: verdict.status,
    reason: verdict.reason,
    comparisons: stats.comparisons,
    variants: stats.aggregates.variants.map(withoutDuration),
    cells: stats.aggregates.cells.map(withoutDuration),
    trials: verdict.trials.map((t) => ({
      seq: t.seq,
      variant: t.variant,
      trial: t.trial,
      outcome: t.outcome,
      score: t.score,
      changedFiles: t.changedFiles,
    })),
  };
}

async function finishedTrials(
  outDir: string,
  verdictLike: { trials: Array<{ artifactDir: string }> },
) {
  const finished: string[] = [];
  for (const t of verdictLike.trials)
    if (await exists(join(outDir, t.artifactDir, "metrics.json"))) finished.push(t.artifactDir);
  return finished;
}

beforeAll(async () => {
  exp = await makeExperiment({
    manifest: syntheticManifest({
      trials: { count: 3, seed: 11, order: "randomized" },
      concurrency: 1,
    }),
  });
  ({ verdict: full } = await runManifest(exp.manifestPath, {
    outDir: exp.freshOut("full"),
    tempParent: exp.trialsDir,
  }));
  expect(full.status).toBe("accept");
});

afterAll(() => exp.cleanup());

describe("resume", () => {
  it("finishes an aborted run by running only the missing trials, with the full run's statistics", async () => {
    const outDir = exp.freshOut("aborted-between-trials");
    const controller = new AbortController();
    const firstCalls: string[] = [];
    const { verdict: interrupted } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      signal: controller.signal,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), firstCalls),
      onProgress: (p: RunProgress) => {
        if (p.done === 2) controller.abort();
      },
    });
    expect(firstCalls).toHaveLength(2);
    expect(interrupted.status).toBe("infrastructure_error");
    expect(interrupted.reason).toContain("interrupted after 2 of 6 trials");
    expect(interrupted.trials).toHaveLength(2);

    const resumedCalls: string[] = [];
    const progress: RunProgress[] = [];
    const { verdict: resumed, experiment } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), resumedCalls),
      onProgress: (p) => progress.push(p),
    });
    expect(resumedCalls).toHaveLength(4);
    expect(resumedCalls.filter((c) => firstCalls.includes(c))).toEqual([]);
    expect(progress[0]).toMatchObject({ done: 2, reused: 2, total: 6 });
    expect(comparable(resumed)).toEqual(comparable(full));
    for (const t of resumed.trials)
      expect(t.artifactDir).toBe(trialArtifactDir(experiment, t.variant, t.task, t.trial));
  });

  it("runs again a trial the abort interrupted in flight, and never keeps its partial result", async () => {
    const outDir = exp.freshOut("aborted-in-flight");
    const controller = new AbortController();
    const inner = new ScriptedExecutor();
    let runs = 0;
    // Two lanes; the third trial to start pulls the plug while its own workspace is ready.
    const interrupting: Executor = {
      host: "scripted",
      run(input) {
        runs += 1;
        if (runs === 3) controller.abort();
        return inner.run(input);
      },
    };
    const { verdict: interrupted } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      signal: controller.signal,
      concurrency: 2,
      executorFor: () => interrupting,
    });
    expect(interrupted.status).toBe("infrastructure_error");
    expect(interrupted.trials.every((t) => t.infraReason !== "run_aborted")).toBe(true);
    const finished = await finishedTrials(outDir, interrupted);
    expect(finished.sort()).toEqual(interrupted.trials.map((t) => t.artifactDir).sort());
    // The trial that freed the lane finished; the other lane's trial may have been cut short.
    expect(finished.length).toBeGreaterThanOrEqual(1);
    expect(finished.length).toBeLessThan(6);
    expect(await readdir(exp.trialsDir)).toEqual([]);

    const resumedCalls: string[] = [];
    const { verdict: resumed } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), resumedCalls),
    });
    expect(resumedCalls).toHaveLength(6 - finished.length);
    expect(comparable(resumed)).toEqual(comparable(full));
  });

  it("re-runs nothing when resuming a finished run", async () => {
    const outDir = exp.freshOut("finished");
    await runManifest(exp.manifestPath, { outDir, tempParent: exp.trialsDir });
    const calls: string[] = [];
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), calls),
    });
    expect(calls).toEqual([]);
    expect(comparable(verdict)).toEqual(comparable(full));
  });

  it("refuses to resume with a different manifest or trial count, and changes nothing", async () => {
    const outDir = exp.freshOut("refused");
    const controller = new AbortController();
    await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done === 1) controller.abort();
      },
    });
    const before = await listTree(outDir);
    const other = await exp.writeManifest(
      syntheticManifest({ trials: { count: 3, seed: 12, order: "randomized" }, concurrency: 1 }),
      "other.json",
    );
    const attempt = (manifestPath: string, trials?: number) =>
      runManifest(manifestPath, {
        outDir,
        tempParent: exp.trialsDir,
        resume: true,
        ...(trials === undefined ? {} : { trials }),
      });
    await expect(attempt(other)).rejects.toThrow(ExperimentInputError);
    await expect(attempt(other)).rejects.toThrow(/different inputs/);
    await expect(attempt(exp.manifestPath, 2)).rejects.toThrow(/trial count/);
    expect(await listTree(outDir)).toEqual(before);
    // The same experiment still resumes.
    const { experiment } = await loadForRun(exp.manifestPath);
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
    });
    expect(verdict.trials).toHaveLength(experiment.trials.count * 2);
  });
});

const README_CONTRACT = fileURLToPath(
  new URL("../../examples/readme-compare/contract.json", import.meta.url),
);

/** The refusal's problems (one per differing input) and its whole message. */
async function refusal(attempt: Promise<unknown>): Promise<{ lines: string[]; message: string }> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExperimentInputError);
  const input = error as ExperimentInputError;
  return { lines: input.problems.map((p) => p.message), message: input.message };
}

const HASH = "sha256:[0-9a-f]{12}…";

describe("a refused resume names the input that differs", () => {
  let inputs: TempExperiment;
  let outDir: string;
  let before: string[];

  const attempt = (options: { trials?: number; concurrency?: number } = {}) =>
    runManifest(inputs.manifestPath, {
      outDir,
      tempParent: inputs.trialsDir,
      resume: true,
      // Nothing needs to run: only the check of the inputs is under test.
      signal: AbortSignal.abort(),
      ...options,
    });

  /** Changes a file, expects exactly `expected` as the refusal, and puts the file back. */
  async function refusedAfter(file: string, change: (text: string) => string, expected: RegExp) {
    const original = await readFile(file, "utf8");
    await writeFile(file, change(original));
    try {
      const { lines, message } = await refusal(attempt());
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(expected);
      expect(message).toContain("choose a new --out");
      expect(await listTree(outDir)).toEqual(before);
    } finally {
      await writeFile(file, original);
    }
  }

  beforeAll(async () => {
    inputs = await makeExperiment();
    await copyFile(README_CONTRACT, join(inputs.dir, "contract.json"));
    const manifest = syntheticManifest();
    const [task] = manifest.tasks as Array<Record<string, unknown>>;
    task!.graders = [
      { kind: "scope", mode: "subset" },
      { kind: "readme-package-v1", contract: "./contract.json" },
    ];
    await inputs.writeManifest(manifest);
    outDir = inputs.freshOut("out");
    await runManifest(inputs.manifestPath, {
      outDir,
      tempParent: inputs.trialsDir,
      signal: AbortSignal.abort(),
    });
    before = await listTree(outDir);
  });
  afterAll(() => inputs.cleanup());

  it("the manifest file", async () => {
    await refusedAfter(
      inputs.manifestPath,
      (text) => text.replace('"concurrency": 2', '"concurrency": 1'),
      new RegExp(`^the manifest file differs: ${HASH} then, ${HASH} now$`),
    );
  });

  it("the harness", async () => {
    await refusedAfter(
      join(inputs.dir, "compare.harness"),
      (text) => `${text}// one more line\n`,
      new RegExp(`^the harness differs: ${HASH} then, ${HASH} now$`),
    );
  });

  it("a task's fixture and prompt", async () => {
    await refusedAfter(
      join(inputs.fixtureDir, "README.md"),
      (text) => `${text}more\n`,
      new RegExp(
        `^the fixture of task fix-value differs: ${HASH} then, ${HASH} now \\(changed README\\.md\\)$`,
      ),
    );
    await refusedAfter(
      join(inputs.dir, "prompt.md"),
      (text) => `${text}Be quick.\n`,
      new RegExp(`^the prompt of task fix-value differs: ${HASH} then, ${HASH} now$`),
    );
  });

  it("a grader contract (readme-package-v1)", async () => {
    await refusedAfter(
      join(inputs.dir, "contract.json"),
      (text) => text.replace('"Testing"]', '"Testing", "Changelog"]'),
      new RegExp(
        `^the grader contract of task fix-value \\(grader readme-package-v1\\) differs: ${HASH} then, ${HASH} now$`,
      ),
    );
  });

  it("a variant's agent module", async () => {
    await refusedAfter(
      join(inputs.dir, "agents", "fixer.mjs"),
      (text) => `${text}// changed\n`,
      new RegExp(`^the agent of variant fixer differs: ${HASH} then, ${HASH} now$`),
    );
  });

  it("the trial count, but not the concurrency", async () => {
    const { lines } = await refusal(attempt({ trials: 1 }));
    expect(lines).toEqual(["the trial count differs: 2 then, 1 now"]);
    expect(await listTree(outDir)).toEqual(before);
    await expect(attempt({ concurrency: 1 })).resolves.toBeDefined();
  });

  it("every input that differs, through the CLI (exit 2)", async () => {
    const harness = join(inputs.dir, "compare.harness");
    const agent = join(inputs.dir, "agents", "fixer.mjs");
    const originals = [await readFile(harness, "utf8"), await readFile(agent, "utf8")];
    await writeFile(harness, `${originals[0]}// changed\n`);
    await writeFile(agent, `${originals[1]}// changed\n`);
    const snapshot = await listTree(outDir);
    try {
      const run = await runHarness([
        "compare",
        "run",
        inputs.manifestPath,
        "--out",
        outDir,
        "--resume",
        "--trials",
        "1",
      ]);
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toContain(
        "cannot resume: the earlier run here used different inputs; resume only the same experiment with the same inputs, or choose a new --out for this one",
      );
      const listed = run.stderr.split("\n").filter((line) => line.startsWith("  changed input: "));
      expect(listed.map((line) => line.replace(/sha256:\S+/g, "#"))).toEqual([
        "  changed input: the harness differs: # then, # now",
        "  changed input: the agent of variant fixer differs: # then, # now",
        "  changed input: the trial count differs: 2 then, 1 now",
      ]);
      expect(await listTree(outDir)).toEqual(snapshot);
    } finally {
      await writeFile(harness, originals[0]!);
      await writeFile(agent, originals[1]!);
    }
  });

  it("without detail for a run recorded before the inputs were, but still refused (and the same inputs still resume)", async () => {
    const manifestJson = join(outDir, "manifest.json");
    const recorded = JSON.parse(await readFile(manifestJson, "utf8")) as RunManifest;
    delete recorded.evidence.inputs;
    await writeFile(manifestJson, `${JSON.stringify(recorded, null, 2)}\n`);
    const { lines } = await refusal(attempt({ trials: 1 }));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/different inputs .*its record does not say which/);
    // The same inputs still resume: the overall hash is the check.
    await expect(attempt()).resolves.toBeDefined();
  });
});

describe("what a resume does not count", () => {
  /** A copy of the finished run of `full` (3 trials × 2 variants), to tamper with. */
  async function copyOfFullRun(name: string): Promise<string> {
    const outDir = exp.freshOut(name);
    await cp(exp.freshOut("full"), outDir, { recursive: true });
    return outDir;
  }
  const dirOf = (outDir: string, t: { variant: string; task: string; trial: number }) =>
    join(outDir, `${t.variant}/${t.task}/trial-00${t.trial}`);

  it("re-runs a trial whose record is half-written or belongs to another trial, and keeps the rest", async () => {
    const outDir = await copyOfFullRun("tampered-records");
    const [a, b, c] = full.trials;
    // Half a record: what a non-atomic write cut short by SIGKILL would leave.
    const aFile = join(dirOf(outDir, a!), "metrics.json");
    const aText = await readFile(aFile, "utf8");
    await writeFile(aFile, aText.slice(0, aText.length / 2));
    // Whole records, but not of the trial the plan puts in these folders.
    const bFile = join(dirOf(outDir, b!), "metrics.json");
    await writeFile(bFile, (await readFile(bFile, "utf8")).replace(/"seq": \d+/, '"seq": 99'));
    const cFile = join(dirOf(outDir, c!), "metrics.json");
    const cRecord = JSON.parse(await readFile(cFile, "utf8")) as { variant: string };
    cRecord.variant = cRecord.variant === "fixer" ? "baseline" : "fixer";
    await writeFile(cFile, JSON.stringify(cRecord));

    const calls: string[] = [];
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      concurrency: 3,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), calls),
    });
    expect(calls.sort()).toEqual(
      [a!, b!, c!].map((t) => `${t.variant}/${t.task}/${t.trial}`).sort(),
    );
    expect(comparable(verdict)).toEqual(comparable(full));
    for (const t of verdict.trials)
      expect(await listFiles(dirOf(outDir, t))).toEqual([...TRIAL_FILES]);
  });

  it("counts only records the run sealed: a forged outcome, an edited patch and a planted record are set aside and run again", async () => {
    const outDir = await copyOfFullRun("forged-records");
    const [a, b, c] = full.trials.filter((t) => t.variant === "baseline");
    await rm(join(outDir, "verdict.json"));
    // A forged outcome: a baseline trial that failed now claims it passed.
    const aFile = join(dirOf(outDir, a!), "metrics.json");
    const aRecord = JSON.parse(await readFile(aFile, "utf8")) as Record<string, unknown>;
    expect(aRecord.outcome).toBe("failed");
    await writeFile(
      aFile,
      JSON.stringify({ ...aRecord, outcome: "passed", score: 100, gradePassed: true }, null, 2),
    );
    // A patch changed after the record was sealed.
    await writeFile(join(dirOf(outDir, b!), "patch.diff"), "diff --git a/x b/x\n");
    // A whole record planted where the trial never finished, seal and all, copied from another.
    await rm(dirOf(outDir, c!), { recursive: true });
    await cp(dirOf(outDir, full.trials.find((t) => t.variant === "fixer")!), dirOf(outDir, c!), {
      recursive: true,
    });
    const cFile = join(dirOf(outDir, c!), "metrics.json");
    const cRecord = JSON.parse(await readFile(cFile, "utf8")) as Record<string, unknown>;
    await writeFile(
      cFile,
      JSON.stringify({ ...cRecord, variant: c!.variant, trial: c!.trial, seq: c!.seq }, null, 2),
    );

    const calls: string[] = [];
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), calls),
    });
    const ids = [a!, b!, c!].map((t) => `${t.variant}/${t.task}/${t.trial}`).sort();
    expect(calls.sort()).toEqual(ids);
    expect(comparable(verdict)).toEqual(comparable(full));
    expect(verdict.rejectedRecords.map((r) => r.artifactDir).sort()).toEqual(
      [a!, b!, c!].map((t) => t.artifactDir).sort(),
    );
    const reasons = new Map(verdict.rejectedRecords.map((r) => [r.artifactDir, r.reason]));
    expect(reasons.get(a!.artifactDir)).toMatch(/not written by this run/);
    expect(reasons.get(b!.artifactDir)).toMatch(/patch\.diff/);
    // What was found is kept as evidence, and the reports say so.
    for (const r of verdict.rejectedRecords) {
      expect(r.movedTo).toMatch(/^rejected-records\//);
      expect(await exists(join(outDir, r.movedTo, "metrics.json"))).toBe(true);
    }
    expect(await readFile(join(outDir, "verdict.md"), "utf8")).toContain("Records set aside");
  });

  it("runs every trial again when the run's key is not on this machine, saying where it was looked for", async () => {
    const outDir = await copyOfFullRun("no-key");
    await rm(join(outDir, "verdict.json"));
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      stateDir: join(exp.base, "another-machine-state"),
    });
    expect(verdict.rejectedRecords).toHaveLength(full.trials.length);
    expect(verdict.rejectedRecords[0]?.reason).toMatch(/is not on this machine/);
    expect(comparable(verdict)).toEqual(comparable(full));
  });

  it("refuses --resume into a folder that holds files but no run, and writes nothing", async () => {
    const outDir = exp.freshOut("not-a-run");
    await mkdir(outDir);
    await writeFile(join(outDir, "notes.txt"), "the user's own file\n");
    const before = await listTree(outDir);
    const error = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExperimentInputError);
    expect((error as Error).message).toMatch(/no run harnesslab started/);
    expect(await listTree(outDir)).toEqual(before);
  });

  it("removes the workspace a killed trial left only when its note names a trial directory in the temp parent", async () => {
    const outDir = await copyOfFullRun("abandoned-workspaces");
    const [a, b, c, d] = full.trials;
    const note = (t: typeof a, tempDir: string) =>
      writeFile(
        join(dirOf(outDir, t!), WORKSPACE_MARKER),
        JSON.stringify({ tempDir, pid: 999999 }),
      );
    for (const t of [a, b, c, d]) await rm(join(dirOf(outDir, t!), "metrics.json"));
    // A real leftover: removed.
    const leftover = join(exp.trialsDir, "harnesslab-trial-abc123");
    await mkdir(join(leftover, "trial", "src"), { recursive: true });
    await writeFile(join(leftover, "trial", "src", "value.txt"), "fixed\n");
    await note(a, leftover);
    // Anything else a note might name is left alone: a directory elsewhere, or a link that has
    // the right name but points elsewhere.
    const victim = join(exp.base, "victim");
    await mkdir(victim);
    await writeFile(join(victim, "keep.txt"), "keep\n");
    await note(b, victim);
    const link = join(exp.trialsDir, "harnesslab-trial-link1");
    await symlink(victim, link);
    await note(c, link);
    const otherName = join(exp.trialsDir, "not-a-trial");
    await mkdir(otherName);
    await note(d, otherName);
    // A verdict cut short by SIGKILL mid-write.
    await writeFile(join(outDir, ".verdict.json.4242.0123456789ab.partial"), '{"status');

    const calls: string[] = [];
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      concurrency: 3,
      executorFor: () => recordingExecutor(new ScriptedExecutor(), calls),
    });
    expect(calls).toHaveLength(4);
    expect(comparable(verdict)).toEqual(comparable(full));
    expect(await exists(leftover)).toBe(false);
    expect(await readFile(join(victim, "keep.txt"), "utf8")).toBe("keep\n");
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await exists(otherName)).toBe(true);
    await rm(link);
    await rm(otherName, { recursive: true });
    expect(await readdir(exp.trialsDir)).toEqual([]);
    expect((await readdir(outDir)).filter((name) => name.startsWith("."))).toEqual([]);
    for (const t of verdict.trials)
      expect(await listFiles(dirOf(outDir, t))).toEqual([...TRIAL_FILES]);
  });
});

describe("one run at a time per --out", () => {
  const LOCK = ".harnesslab-run.lock";
  const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;
  const lockText = (pid: number) =>
    JSON.stringify({ pid, host: hostname(), startedAt: "2026-01-01T00:00:00.000Z", token: "ab12" });

  it("refuses to run or resume where a live run holds the lock, and changes nothing", async () => {
    const outDir = exp.freshOut("locked-live");
    await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      signal: AbortSignal.abort(),
    });
    // A live process other than this one stands in for the live run (this process's own pid
    // in a lock it does not hold would be a dead process's: see run-lock.test.ts).
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], {
      stdio: "ignore",
    });
    try {
      await writeFile(join(outDir, LOCK), lockText(holder.pid!));
      const snapshot = await listTree(outDir);
      for (const resume of [true, false]) {
        const { lines } = await refusal(
          runManifest(exp.manifestPath, { outDir, tempParent: exp.trialsDir, resume }),
        );
        expect(lines).toEqual([
          expect.stringContaining(
            `another run (pid ${holder.pid}, started 2026-01-01T00:00:00.000Z) is writing to this directory`,
          ),
        ]);
      }
      expect(await listTree(outDir)).toEqual(snapshot);
    } finally {
      holder.kill("SIGKILL");
    }
  });

  it("takes over the lock of a run that died on --resume, and gives it up at the end", async () => {
    const outDir = exp.freshOut("locked-stale");
    await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      signal: AbortSignal.abort(),
    });
    await writeFile(join(outDir, LOCK), lockText(deadPid()));
    await expect(
      runManifest(exp.manifestPath, { outDir, tempParent: exp.trialsDir }),
    ).rejects.toThrow(/holds a run already.*add --resume/);
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      concurrency: 3,
    });
    expect(comparable(verdict)).toEqual(comparable(full));
    expect(await exists(join(outDir, LOCK))).toBe(false);
  });

  it("takes over the lock of a regrade that died, and removes the workspaces it noted", async () => {
    const outDir = exp.freshOut("dead-regrade");
    await cp(exp.freshOut("full"), outDir, { recursive: true });
    const dead = deadPid();
    await writeFile(
      join(outDir, LOCK),
      JSON.stringify({ ...JSON.parse(lockText(dead)), kind: "regrade" }),
    );
    const leftover = join(exp.trialsDir, "harnesslab-trial-regrade9");
    await mkdir(join(leftover, "trial"), { recursive: true });
    const trialDir = join(outDir, full.trials[0]!.artifactDir);
    await writeFile(
      join(trialDir, REGRADE_WORKSPACE_MARKER),
      JSON.stringify({ kind: "regrade", tempDir: leftover, pid: dead }),
    );
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
    });
    expect(comparable(verdict)).toEqual(comparable(full));
    expect(await exists(leftover)).toBe(false);
    expect(await exists(join(trialDir, REGRADE_WORKSPACE_MARKER))).toBe(false);
    expect(await exists(join(outDir, LOCK))).toBe(false);
  });
});

describe("differingInputs", () => {
  const h = (c: string) => `sha256:${c.repeat(64)}`;
  const base: RunInputs = {
    manifest: h("1"),
    harness: h("2"),
    tasks: {
      readme: {
        fixture: h("3"),
        prompt: h("4"),
        expectedFiles: ["README.md"],
        graders: { readme: { kind: "readme-package-v1", contract: h("5"), settings: h("6") } },
      },
    },
    agents: { baseline: null, candidate: h("7") },
    trials: { count: 3, seed: 1, order: "randomized" },
    runtime: h("8"),
    verdictPolicy: h("9"),
  };
  const changed = (edit: (inputs: RunInputs) => void) => {
    const now = structuredClone(base);
    edit(now);
    return differingInputs(base, now);
  };

  it("is empty for the same inputs", () => {
    expect(differingInputs(base, structuredClone(base))).toEqual([]);
  });

  it("names each differing input with its value then and now", () => {
    expect(
      changed((now) => {
        now.tasks.readme!.graders.readme!.contract = h("a");
        now.tasks.readme!.expectedFiles = ["README.md", "docs/api.md"];
        now.trials = { count: 3, seed: 2, order: "sequential" };
        now.runtime = h("b");
        now.verdictPolicy = h("c");
      }),
    ).toEqual([
      "the expected files of task readme differ: README.md then, README.md, docs/api.md now",
      "the grader contract of task readme (grader readme) differs: sha256:555555555555… then, sha256:aaaaaaaaaaaa… now",
      "the trial seed differs: 1 then, 2 now",
      "the trial order differs: randomized then, sequential now",
      "the runtime settings differ: sha256:888888888888… then, sha256:bbbbbbbbbbbb… now",
      "the verdict policy differs: sha256:999999999999… then, sha256:cccccccccccc… now",
    ]);
  });

  it("names tasks, graders and variants that came or went", () => {
    expect(
      changed((now) => {
        now.tasks.other = structuredClone(now.tasks.readme!);
        now.tasks.readme!.graders = { scope: { kind: "scope", contract: null, settings: h("d") } };
        now.agents = { baseline: h("e"), added: null };
      }),
    ).toEqual([
      "grader scope of task readme was not in the earlier run",
      "grader readme of task readme of the earlier run is not in the manifest now",
      "task other was not in the earlier run",
      "the agent of variant baseline differs: none then, sha256:eeeeeeeeeeee… now",
      "variant added was not in the earlier run",
      "variant candidate of the earlier run is not in the manifest now",
    ]);
  });
});
