// What a regrade must not do: judge a run that did not finish, read or write outside the
// folders the run gave its trials, write a credential into an artifact, leave anything behind
// when it is stopped, or trip over what a killed regrade left.
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ExperimentInputError,
  regradeRun,
  type VerdictDocument,
  verdictDocumentSchema,
} from "../../src/compare/index.js";
import { REGRADE_WORKSPACE_MARKER } from "../../src/compare/run/workspace-marker.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";
import { InvalidInputError } from "../../src/shared/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import { runHarness } from "../support/cli.js";
import {
  filesContaining,
  listFiles,
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";
import { isRunning, markedCopies, markThenWaitSource, pidsWorkingIn } from "../support/sandbox.js";

const LOCK = ".harnesslab-run.lock";

/** The synthetic manifest with its command grader running `argv` instead of `node check.mjs`. */
function withCheck(argv: string[], overrides: Record<string, unknown> = {}) {
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
    ...overrides,
  });
}

let exp: TempExperiment;
let original: VerdictDocument;
/** What the grader of `slow.json` leaves in its grading copy when it starts. */
const SLOW_GRADER_MARK = ".slow-grader-started";
let slowManifest: string;

beforeAll(async () => {
  exp = await makeExperiment();
  ({ verdict: original } = await runManifest(exp.manifestPath, {
    outDir: exp.outDir,
    tempParent: exp.trialsDir,
  }));
  expect(original.status).toBe("accept");
  // Notes that it started, then grades for a long time: a stop has to cut it short.
  const slowGrader = join(exp.base, "slow-grader.mjs");
  await writeFile(slowGrader, markThenWaitSource(SLOW_GRADER_MARK));
  slowManifest = await exp.writeManifest(withCheck(["node", slowGrader]), "slow.json");
});

afterAll(() => exp.cleanup());

/** A copy of the finished run, to change. */
async function copyOfRun(name: string): Promise<string> {
  const outDir = exp.freshOut(name);
  await cp(exp.outDir, outDir, { recursive: true });
  return outDir;
}

async function rejection(attempt: Promise<unknown>): Promise<InvalidInputError> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidInputError);
  return error as InvalidInputError;
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 3000; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Every file a regrade writes: new verdicts, trial checks, workspace notes. */
async function regradeFiles(outDir: string): Promise<string[]> {
  return (await listFiles(outDir)).filter(
    (path) =>
      /(^|\/)(verdict|validation)\.regrade-/.test(path) || path.endsWith(REGRADE_WORKSPACE_MARKER),
  );
}

describe("regrade of a run that did not finish", () => {
  it("is refused when the run was interrupted, pointing to --resume, and writes nothing", async () => {
    const outDir = exp.freshOut("interrupted");
    const controller = new AbortController();
    const inner = new ScriptedExecutor();
    let calls = 0;
    // The third trial to start is where Ctrl-C lands: two of four are finished.
    const interrupting: Executor = {
      host: "scripted",
      run(input) {
        calls += 1;
        if (calls === 3) controller.abort(new Error("stopped by SIGINT"));
        return inner.run(input);
      },
    };
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir,
      tempParent: exp.trialsDir,
      concurrency: 1,
      signal: controller.signal,
      executorFor: () => interrupting,
    });
    expect(verdict.interrupted).toBe(true);
    expect(verdict.trials).toHaveLength(2);
    const before = await listTree(outDir);
    const error = await rejection(regradeRun(outDir, { tempParent: exp.trialsDir }));
    expect(error.message).toBe(
      `${join(outDir, "verdict.json")}: cannot regrade a run that did not finish\n  interrupted: the run in ${outDir} was interrupted after 2 of 4 trials; finish it with \`harness compare run ${exp.manifestPath} --out ${outDir} --resume\` first, then regrade`,
    );
    expect(await listTree(outDir)).toEqual(before);

    const cli = await runHarness(["compare", "regrade", outDir]);
    expect(cli.exitCode).toBe(2);
    expect(cli.stderr).toContain("was interrupted after 2 of 4 trials; finish it with");
    expect(await listTree(outDir)).toEqual(before);
  });

  it("is refused when its verdict lists fewer trials than it planned without having stopped early", async () => {
    const outDir = await copyOfRun("fewer-trials");
    const verdictPath = join(outDir, "verdict.json");
    const verdict = verdictDocumentSchema.parse(await readJson(outDir, "verdict.json"));
    // A verdict written before `interrupted` existed, of a run that was cut short.
    await writeFile(verdictPath, JSON.stringify({ ...verdict, trials: verdict.trials.slice(1) }));
    const error = await rejection(regradeRun(outDir, { tempParent: exp.trialsDir }));
    expect(error.problems).toEqual([
      {
        path: "trials",
        message: expect.stringMatching(/was interrupted after 3 of 4 trials; finish it with `/),
      },
    ]);
    expect(await regradeFiles(outDir)).toEqual([]);
  });

  it("is refused, saying the run did not finish, when there is no verdict.json", async () => {
    const outDir = await copyOfRun("no-verdict");
    await rm(join(outDir, "verdict.json"));
    const error = await rejection(regradeRun(outDir, { tempParent: exp.trialsDir }));
    expect(error.message).toBe(
      `${outDir}: no finished run in this directory (verdict.json not found: the run stopped before it finished; finish it with \`harness compare run ${exp.manifestPath} --out ${outDir} --resume\`)`,
    );
  });

  it("that stopped early (--stop-early) goes ahead, keeps the stopped-early status and says so", async () => {
    const early = await makeExperiment({
      manifest: syntheticManifest({
        trials: { count: 5, seed: 1, order: "sequential" },
        concurrency: 1,
        verdict: { policy: "paired-v1", alpha: 0.05, minTrials: 2, maxCostRatio: 1.25 },
      }),
    });
    try {
      const { verdict } = await runManifest(early.manifestPath, {
        outDir: early.outDir,
        tempParent: early.trialsDir,
        stopEarly: true,
      });
      expect(verdict.reason).toMatch(/^stopped early after 9 of 10 trials/);
      const same = await regradeRun(early.outDir, { tempParent: early.trialsDir, concurrency: 4 });
      expect(same.notes).toEqual([
        "the run stopped early (--stop-early) after 9 of 10 trials; the new verdict judges those 9",
      ]);
      expect(same.verdict.status).toBe(verdict.status);
      expect(same.verdict.reason).toBe(verdict.reason);

      // Every trial passes now: settled again, on another status.
      const manifest = (verdict: Record<string, unknown>, check = ["node", "check.mjs"]) =>
        syntheticManifest({
          trials: { count: 5, seed: 1, order: "sequential" },
          concurrency: 1,
          verdict: { policy: "paired-v1", minTrials: 2, maxCostRatio: 1.25, ...verdict },
          tasks: [
            {
              id: "fix-value",
              fixture: "./fixture",
              prompt: "./prompt.md",
              expectedFiles: ["src/value.txt"],
              graders: [{ kind: "command", id: "check", argv: check }],
            },
          ],
        });
      await early.writeManifest(manifest({ alpha: 0.05 }, ["node", "-e", "0"]));
      const allPass = await regradeRun(early.outDir, {
        tempParent: early.trialsDir,
        concurrency: 4,
      });
      expect(allPass.verdict.status).toBe("need_more_work");
      expect(allPass.verdict.reason).toMatch(
        /^stopped early after 9 of 10 trials, the status being settled: the verdict is need_more_work whatever/,
      );

      // A stricter policy: the trial the run did not run could now change the status, which
      // the trials that ran cannot decide.
      await early.writeManifest(manifest({ alpha: 0.01 }));
      const open = await regradeRun(early.outDir, { tempParent: early.trialsDir, concurrency: 4 });
      expect(open.verdict.trials).toHaveLength(9);
      expect(open.verdict.status).toBe("need_more_work");
      expect(open.verdict.reason).toMatch(
        /^the run stopped early after 9 of 10 trials, but under the new grades the trials it did not run could change the status \(the 1 remaining trial can still change the verdict: need_more_work if the candidates fail them all, accept if they pass them all\); run the experiment in full to decide\. The trials that ran: fixer /,
      );
    } finally {
      await early.cleanup();
    }
  });
});

describe("regrade reads and writes only the folders the run gave its trials", () => {
  it("refuses a verdict.json whose trial names another folder, and touches nothing", async () => {
    const outDir = await copyOfRun("moved-trial");
    const victim = join(exp.base, "victim");
    await mkdir(victim, { recursive: true });
    await writeFile(join(victim, "keep.txt"), "keep\n");
    const verdict = verdictDocumentSchema.parse(await readJson(outDir, "verdict.json"));
    const [first, second] = verdict.trials;
    const edited = {
      ...verdict,
      trials: [
        { ...first, artifactDir: "../victim" },
        { ...second, artifactDir: first?.artifactDir },
        ...verdict.trials.slice(2),
      ],
    };
    await writeFile(join(outDir, "verdict.json"), JSON.stringify(edited));
    const before = await listTree(outDir);
    const error = await rejection(regradeRun(outDir, { tempParent: exp.trialsDir }));
    expect(error.message).toContain(
      "the verdict's trials are not where the run puts them; regrade only verdicts harnesslab wrote",
    );
    expect(error.problems).toEqual([
      {
        path: "trials[0].artifactDir",
        message: `is "../victim", but trial ${first?.trial} of ${first?.variant} on fix-value lives in ${first?.artifactDir}`,
      },
      {
        path: "trials[1].artifactDir",
        message: `is "${first?.artifactDir}", but trial ${second?.trial} of ${second?.variant} on fix-value lives in ${second?.artifactDir}`,
      },
    ]);
    expect(await listTree(outDir)).toEqual(before);
    expect(await readdir(victim)).toEqual(["keep.txt"]);
  });

  it("refuses a trial folder whose record is another trial's", async () => {
    const outDir = await copyOfRun("swapped-records");
    const [a, b] = original.trials;
    const aFile = join(outDir, a!.artifactDir, "metrics.json");
    const bFile = join(outDir, b!.artifactDir, "metrics.json");
    const [aText, bText] = [await readFile(aFile, "utf8"), await readFile(bFile, "utf8")];
    await writeFile(aFile, bText);
    await writeFile(bFile, aText);
    const error = await rejection(regradeRun(outDir, { tempParent: exp.trialsDir }));
    expect(error.message).toContain(`${aFile}: invalid input`);
    expect(error.message).toContain("but verdict.json puts trial");
    expect(await regradeFiles(outDir)).toEqual([]);
  });
});

describe("regrade masks credentials as the run does", () => {
  const SECRET = "hlsecretvalue0123456789abc";
  const env = { ...process.env, HL_TEST_API_KEY: SECRET };

  it("in checks, errors and explanations, so no artifact holds the value", async () => {
    const outDir = await copyOfRun("secrets");
    // The value in a check's command line (its detail and evidence).
    const inArgv = await exp.writeManifest(
      withCheck(["node", "-e", "process.exit(1)", SECRET]),
      "secret-argv.json",
    );
    const first = await regradeRun(outDir, {
      tempParent: exp.trialsDir,
      manifestPath: inArgv,
      env,
    });
    const dir = original.trials[0]!.artifactDir;
    const checks = await readFile(join(outDir, dir, "validation.regrade-001.json"), "utf8");
    expect(checks).toContain("[REDACTED]");
    expect(first.verdict.trials.every((t) => t.outcome === "failed")).toBe(true);

    // The value as a program that cannot start: in the error and the trial's explanation.
    const asProgram = await exp.writeManifest(withCheck([SECRET]), "secret-program.json");
    const second = await regradeRun(outDir, {
      tempParent: exp.trialsDir,
      manifestPath: asProgram,
      env,
    });
    expect(second.verdict.trials.every((t) => t.infraReason === "grader_failed")).toBe(true);
    expect(second.verdict.trials[0]?.explanation).toContain("could not start [REDACTED]");
    const failed = JSON.parse(
      await readFile(join(outDir, dir, "validation.regrade-002.json"), "utf8"),
    ) as { error: string };
    expect(failed.error).toContain("could not start [REDACTED]");
    expect(await filesContaining(outDir, SECRET)).toEqual([]);
    expect(await filesContaining(exp.trialsDir, SECRET)).toEqual([]);
  });
});

describe("a stopped regrade", () => {
  it("stops its graders, removes its workspaces and checks, writes no verdict and gives up the lock", async () => {
    const outDir = await copyOfRun("stopped");
    const before = await listTree(outDir);
    const controller = new AbortController();
    const regrade = regradeRun(outDir, {
      tempParent: exp.trialsDir,
      manifestPath: slowManifest,
      concurrency: 2,
      signal: controller.signal,
    });
    const graderPids = () => pidsWorkingIn(markedCopies(exp.trialsDir, SLOW_GRADER_MARK));
    await waitFor("a grader to start", () => graderPids().length > 0);
    const graders = graderPids();
    // While it grades, it holds --out: a resume there is refused, naming the regrade.
    await expect(
      runManifest(exp.manifestPath, { outDir, tempParent: exp.trialsDir, resume: true }),
    ).rejects.toThrow(new RegExp(`a regrade \\(pid ${process.pid}, started [^)]*\\) is writing`));
    controller.abort(new Error("stopped by SIGINT"));
    await expect(regrade).rejects.toThrow("stopped by SIGINT");

    expect(graders.length).toBeGreaterThan(0);
    for (const pid of graders) expect(isRunning(pid)).toBe(false);
    expect(await readdir(exp.trialsDir)).toEqual([]);
    expect(await listTree(outDir)).toEqual(before);
    expect(existsSync(join(outDir, LOCK))).toBe(false);

    const next = await regradeRun(outDir, { tempParent: exp.trialsDir });
    expect(next.stem).toBe("verdict.regrade-001");
    expect(next.changes).toEqual([]);
  });

  it("killed outright leaves what the next regrade clears: its lock, workspaces, checks and half-written files", async () => {
    const outDir = await copyOfRun("killed");
    const [a, b] = original.trials;
    // As a regrade killed with SIGKILL while grading would leave it.
    const deadPid = 2 ** 22 + 12345;
    await writeFile(
      join(outDir, LOCK),
      JSON.stringify({
        pid: deadPid,
        host: hostname(),
        startedAt: "2026-01-01T00:00:00.000Z",
        token: "dead",
        kind: "regrade",
      }),
    );
    const workspace = join(exp.trialsDir, "harnesslab-trial-killed01");
    await mkdir(join(workspace, "trial"), { recursive: true });
    await writeFile(
      join(outDir, a!.artifactDir, REGRADE_WORKSPACE_MARKER),
      JSON.stringify({ kind: "regrade", tempDir: workspace, pid: deadPid }),
    );
    await writeFile(join(outDir, b!.artifactDir, "validation.regrade-001.json"), '{"grades": [');
    await writeFile(join(outDir, `.verdict.regrade-001.json.${deadPid}.0123456789ab.partial`), "{");

    const result = await regradeRun(outDir, { tempParent: exp.trialsDir });
    expect(result.stem).toBe("verdict.regrade-001");
    expect(existsSync(workspace)).toBe(false);
    expect((await readdir(outDir)).filter((name) => name.startsWith("."))).toEqual([]);
    expect(existsSync(join(outDir, a!.artifactDir, REGRADE_WORKSPACE_MARKER))).toBe(false);
    const checks = JSON.parse(
      await readFile(join(outDir, b!.artifactDir, "validation.regrade-001.json"), "utf8"),
    ) as { grades: unknown[] };
    expect(checks.grades.length).toBeGreaterThan(0);
  });

  it("is refused while a run of the same --out is killed half-way, pointing to --resume", async () => {
    const outDir = await copyOfRun("dead-run");
    await writeFile(
      join(outDir, LOCK),
      JSON.stringify({
        pid: 2 ** 22 + 12346,
        host: hostname(),
        startedAt: "2026-01-01T00:00:00.000Z",
        token: "dead",
        kind: "run",
      }),
    );
    const error = await rejection(regradeRun(outDir, { tempParent: exp.trialsDir }));
    expect(error).toBeInstanceOf(ExperimentInputError);
    expect(error.problems[0]?.message).toContain(
      `stopped before it finished (its lock is still here); finish it with \`harness compare run ${exp.manifestPath} --out ${outDir} --resume\`, then regrade`,
    );
  });
});
