// `harness compare run` killed at any point and then `--resume`d ends with the verdict an
// uninterrupted run gives; Ctrl-C stops cleanly (exit 130, no process or temporary directory
// left); one run at a time per --out. Real CLI processes, real signals, a small scripted
// experiment whose agents and grader leave marks so the test knows when to strike, and wait at
// gates the test opens, so what a run has finished when it is killed never depends on timing.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Experiment,
  mulberry32,
  trialArtifactDir,
  type VerdictDocument,
} from "../../src/compare/index.js";
import {
  listFiles,
  loadForRun,
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
  TRIAL_FILES,
} from "../support/experiment.js";
import { isRunning, markedCopies, pidsWorkingIn } from "../support/sandbox.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(REPO, "src", "cli", "bin.ts");
const LOCK = ".harnesslab-run.lock";

// Both agents note their start (when the test asks). With HL_TEST_GATE set, an agent then waits
// until the test creates the file <gate>/<variant>-<index>. With HL_TEST_SLEEPER set, trial 1 of
// the fixer first runs a long command through its Bash tool and tells the test its pid (as this
// machine sees it: inside its sandbox it has another) and its working directory. With
// HL_TEST_HOLD_GRADING set, the fixer also writes hold-grading, which holds the check in its
// grading copy until the test removes it. With HL_TEST_SPIN set, every agent spins in a busy loop
// while that file exists. A short pause lets a kill at a random moment land inside a trial. The
// agent runs in a thread of the harness's process, so it may look at /proc.
const AGENT_PRELUDE = `import { appendFileSync, existsSync, readdirSync, readFileSync, readlinkSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** This machine's pid of the process running the script in cwd, or "". */
function hostPid(cwd, script) {
  for (const entry of readdirSync("/proc")) {
    if (!/^\\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(\`/proc/\${entry}/cwd\`) !== cwd) continue;
      if (readFileSync(\`/proc/\${entry}/cmdline\`, "utf8").split("\\0").includes(script)) return entry;
    } catch {}
  }
  return "";
}

async function prelude({ tools, cwd, trial, signal }) {
  if (process.env.HL_TEST_AGENT_LOG)
    appendFileSync(process.env.HL_TEST_AGENT_LOG, \`started \${trial.variant}/\${trial.index}\\n\`);
  // A busy loop for as long as the file is there: nothing but ending its thread stops it.
  const spin = process.env.HL_TEST_SPIN;
  while (spin && existsSync(spin)) {}
  const sleeper = process.env.HL_TEST_SLEEPER;
  if (sleeper && trial.variant === "fixer" && trial.index === 1) {
    const script = process.env.HL_TEST_STUBBORN ? "stubborn.mjs" : "sleeper.mjs";
    const running = tools.bash("node " + script);
    for (let i = 0; i < 1000; i += 1) {
      const pid = existsSync(join(cwd, "sleeper.pid")) ? hostPid(cwd, script) : "";
      if (pid !== "") {
        // Whole or absent: the test reads it as soon as it exists.
        writeFileSync(sleeper + ".part", JSON.stringify({ pid: Number(pid), cwd }));
        renameSync(sleeper + ".part", sleeper);
        break;
      }
      await sleep(10);
    }
    await running;
  }
  const gate = process.env.HL_TEST_GATE;
  // The signal ends the wait once the run is over, so a stopped CLI is not kept alive by it.
  while (gate && !signal.aborted && !existsSync(join(gate, \`\${trial.variant}-\${trial.index}\`)))
    await sleep(10);
  await sleep(100);
}
`;

const SLOW_NOP = `${AGENT_PRELUDE}
export default async function slowNop(context) {
  await prelude(context);
  return "nothing to do";
}
`;

const SLOW_FIXER = `${AGENT_PRELUDE}
export default async function slowFixer(context) {
  await prelude(context);
  const write = await context.tools.write("src/value.txt", "fixed\\n");
  if (!write.ok) throw new Error("write refused");
  if (process.env.HL_TEST_HOLD_GRADING && !(await context.tools.write("hold-grading", "")).ok)
    throw new Error("hold-grading refused");
  return "fixed src/value.txt";
}
`;

const HOLD_GRADING = "hold-grading";
/** What the check leaves in its grading copy when it starts. */
const GRADING_STARTED = ".grading-started";

/**
 * The check the command grader runs, in its sandbox (which sees only its grading copy): notes
 * that grading started there, waits while the copy holds hold-grading, then checks.
 */
const CHECK_SCRIPT = `import { existsSync, readFileSync, writeFileSync } from "node:fs";
writeFileSync(${JSON.stringify(GRADING_STARTED)}, "");
while (existsSync(${JSON.stringify(HOLD_GRADING)})) await new Promise((resolve) => setTimeout(resolve, 10));
if (readFileSync("src/value.txt", "utf8") !== "fixed\\n") process.exit(1);
console.log("ok");
`;

const SLEEPER = `import { writeFileSync } from "node:fs";
writeFileSync("sleeper.pid", String(process.pid));
setTimeout(() => {}, 30000);
`;
// Ignores SIGTERM (noting that it got one in its working directory) and lives for ten minutes.
const STUBBORN = `import { writeFileSync } from "node:fs";
process.on("SIGTERM", () => writeFileSync("got-sigterm", ""));
writeFileSync("sleeper.pid", String(process.pid));
setTimeout(() => {}, 600000);
`;
const GOT_SIGTERM = "got-sigterm";

let exp: TempExperiment;
let experiment: Experiment;
let signals: string;
/** One tsx compile cache for every CLI the tests start (see `tmpDir`). */
let tsxCache: string;
let uninterrupted: VerdictDocument;
const children = new Set<ChildProcess>();
const strays = new Set<number>();

// tsx keeps its compile cache in $TMPDIR/tsx-<user>; every scenario has a TMPDIR of its own.
const TSX_CACHE_NAME = `tsx-${process.geteuid?.() ?? userInfo().username}`;

beforeAll(async () => {
  exp = await makeExperiment();
  const base = await realpath(exp.base);
  signals = join(base, "signals");
  tsxCache = join(base, "tsx-cache");
  await mkdir(signals);
  await mkdir(tsxCache);
  const fixture = {
    "check.mjs": CHECK_SCRIPT,
    "sleeper.mjs": SLEEPER,
    "stubborn.mjs": STUBBORN,
  };
  for (const [path, content] of Object.entries(fixture))
    await writeFile(join(exp.fixtureDir, path), content);
  await exp.writeAgent("slow-nop.mjs", SLOW_NOP);
  await exp.writeAgent("slow-fixer.mjs", SLOW_FIXER);
  const task = (syntheticManifest().tasks as Array<Record<string, unknown>>)[0]!;
  await exp.writeManifest(
    syntheticManifest({
      tasks: [{ ...task, expectedFiles: ["src/value.txt", HOLD_GRADING] }],
      variants: [
        { id: "baseline", composition: "plain", agent: "./agents/slow-nop.mjs" },
        { id: "fixer", composition: "careful", agent: "./agents/slow-fixer.mjs" },
      ],
      runtime: {
        host: "scripted",
        timeoutMs: 30000,
        validationCommands: [
          ["node", "check.mjs"],
          ["node", "sleeper.mjs"],
          ["node", "stubborn.mjs"],
        ],
      },
      trials: { count: 2, seed: 7, order: "randomized" },
      concurrency: 2,
    }),
  );
  ({ experiment } = await loadForRun(exp.manifestPath));
  // Compiles the CLI into the shared cache while the reference run goes on in this process.
  const warmUp = spawnCli(await tmpDir("warm-up"), ["--help"]);
  ({ verdict: uninterrupted } = await runManifest(exp.manifestPath, {
    outDir: exp.freshOut("uninterrupted"),
    tempParent: exp.trialsDir,
    concurrency: 4,
  }));
  expect(uninterrupted.trials.map((t) => t.outcome).sort()).toEqual([
    "failed",
    "failed",
    "passed",
    "passed",
  ]);
  expect((await warmUp.exited).code).toBe(0);
});

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  await exp.cleanup();
});

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

interface CliProcess {
  child: ChildProcess;
  exited: Promise<Exit>;
  /** Everything written to stderr so far. */
  stderr(): string;
}

/**
 * One interrupted run: its --out; the CLI's TMPDIR, where its trials' workspaces go; and a
 * folder for the gates its agents wait at (when the test passes HL_TEST_GATE).
 */
interface Scenario {
  out: string;
  tmp: string;
  gate: string;
}

async function scenario(name: string): Promise<Scenario> {
  const gate = join(exp.base, `gate-${name}`);
  await mkdir(gate);
  return { out: exp.freshOut(name), tmp: await tmpDir(name), gate };
}

/** A TMPDIR for one CLI run, linked to the shared tsx cache. */
async function tmpDir(name: string): Promise<string> {
  const tmp = join(exp.base, `tmp-${name}`);
  await mkdir(tmp);
  // Spares each CLI compiling the sources afresh (it runs from TypeScript through tsx).
  await symlink(tsxCache, join(tmp, TSX_CACHE_NAME), "dir");
  return realpath(tmp);
}

let spawned = 0;

/** Starts `compare run` of the experiment into the scenario's --out; `agentLog` receives a line per agent start. */
function startCli(
  where: Scenario,
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
): CliProcess & { agentLog: string } {
  const args = ["compare", "run", exp.manifestPath, "--out", where.out, ...extra];
  return spawnCli(where.tmp, args, env);
}

/** Starts the real CLI with `args`, TMPDIR `tmp` and `env` on top of this process's environment. */
function spawnCli(
  tmp: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): CliProcess & { agentLog: string } {
  spawned += 1;
  const agentLog = join(signals, `agents-${spawned}.log`);
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    cwd: REPO,
    env: { ...process.env, TMPDIR: tmp, HL_TEST_AGENT_LOG: agentLog, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<Exit>((resolve) => {
    child.on("close", (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, exited, stderr: () => stderr, agentLog };
}

/**
 * Polls `check` every 10 ms. The bound (at least 90 s; a loaded CI machine once took over 20 s
 * to start a trial's command) is only a safety net against a hang: a slow machine makes the wait
 * longer, never the test wrong.
 */
async function waitFor(what: string, check: () => boolean | Promise<boolean>, cli?: CliProcess) {
  let exited = false;
  void cli?.exited.then(() => {
    exited = true;
  });
  for (let i = 0; i < 9000; i += 1) {
    if (await check()) return;
    if (exited) throw new Error(`the CLI exited before ${what}: ${cli?.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const lines = (path: string) =>
  existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];

/** `variant/index` of each agent that started, in order. */
const agentsStarted = (cli: { agentLog: string }) =>
  lines(cli.agentLog).map((line) => line.replace(/^started /, ""));

/** Lets the agent of one trial (`variant/index`) go on past its gate. */
const openGate = (where: Scenario, trial: string) =>
  writeFile(join(where.gate, trial.replace("/", "-")), "");

/** The grading copies (their roots) in which the check started, in this scenario's TMPDIR. */
const gradings = (where: Scenario) => markedCopies(where.tmp, GRADING_STARTED);

function trialDirs(out: string): string[] {
  return uninterrupted.trials.map((t) =>
    join(out, trialArtifactDir(experiment, t.variant, t.task, t.trial)),
  );
}

const finishedCount = (out: string) =>
  trialDirs(out).filter((dir) => existsSync(join(dir, "metrics.json"))).length;

async function trialTemps(where: Scenario): Promise<string[]> {
  return (await readdir(where.tmp)).filter((name) => name.startsWith("harnesslab-trial-"));
}

/** Everything of the harness's there: trials' workspaces and the run's shared baselines. */
async function harnessTemps(where: Scenario): Promise<string[]> {
  return (await readdir(where.tmp)).filter((name) => name.startsWith("harnesslab-"));
}

async function kill(cli: CliProcess): Promise<Exit> {
  cli.child.kill("SIGKILL");
  return cli.exited;
}

/** Everything but timings, which no two runs share. */
function comparable(verdict: VerdictDocument) {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value !== null && typeof value === "object")
      return Object.fromEntries(
        Object.entries(value)
          .filter(([key]) => !["duration", "durationMs", "agentWallTimeMs"].includes(key))
          .map(([key, v]) => [key, strip(v)]),
      );
    return value;
  };
  return {
    status: verdict.status,
    reason: verdict.reason,
    statistics: strip(verdict.statistics),
    trials: strip(verdict.trials),
  };
}

/** Resumes the run; checks that it ends as the uninterrupted run did, and what it must leave. */
async function resumeAndCheck(where: Scenario) {
  const { out } = where;
  const kept = await finishedRecords(out);
  const unfinished = trialDirs(out).filter((dir) => !kept.has(dir)).length;
  // Concurrency is not an input: the resume may use another.
  const resumed = startCli(where, ["--resume", "--concurrency", "4"]);
  const exit = await resumed.exited;
  expect(exit.code, exit.stderr).toBe(
    ["accept", "need_more_work"].includes(uninterrupted.status) ? 0 : 1,
  );
  // Only the trials without a finished record ran again, each once.
  expect(lines(resumed.agentLog)).toHaveLength(unfinished);
  const verdict = (await readJson(out, "verdict.json")) as VerdictDocument;
  expect(comparable(verdict)).toEqual(comparable(uninterrupted));
  const ids = verdict.trials.map((t) => `${t.variant}/${t.task}/${t.trial}`);
  expect(new Set(ids).size).toBe(ids.length);
  expect(verdict.trials.map((t) => t.seq).sort()).toEqual([1, 2, 3, 4]);
  for (const dir of trialDirs(out)) expect(await listFiles(dir)).toEqual([...TRIAL_FILES]);
  // Finished records were kept byte for byte.
  for (const [dir, text] of kept)
    expect(await readFile(join(dir, "metrics.json"), "utf8")).toBe(text);
  // No lock, no half-written file, no workspace left.
  expect((await readdir(out)).filter((name) => name.startsWith("."))).toEqual([]);
  expect(await harnessTemps(where)).toEqual([]);
}

async function finishedRecords(out: string): Promise<Map<string, string>> {
  const records = new Map<string, string>();
  for (const dir of trialDirs(out)) {
    const path = join(dir, "metrics.json");
    if (existsSync(path)) records.set(dir, await readFile(path, "utf8"));
  }
  return records;
}

// Each scenario has its own --out and TMPDIR, so they all run side by side.
// Generous: the waits inside are bounded at 90 s each, for a heavily loaded machine.
describe.concurrent("an interrupted compare run", { timeout: 300_000 }, () => {
  describe("killed with SIGKILL, then --resume", () => {
    it("before any trial finished: its stale lock and its trials' workspaces are taken over", async () => {
      const where = await scenario("kill-early");
      // No gate is ever opened: no agent can finish before the kill.
      const cli = startCli(where, [], { HL_TEST_GATE: where.gate });
      await waitFor("an agent to start", () => agentsStarted(cli).length > 0, cli);
      await kill(cli);
      expect(finishedCount(where.out)).toBe(0);
      // What the killed run left: its lock and the workspaces of the trials it was running.
      const lock = JSON.parse(await readFile(join(where.out, LOCK), "utf8")) as { pid: number };
      expect(lock.pid).toBe(cli.child.pid);
      expect((await trialTemps(where)).length).toBeGreaterThan(0);
      await resumeAndCheck(where);
    });

    it("mid-run, with some trials finished: they are kept and only the rest run", async () => {
      const where = await scenario("kill-mid");
      const cli = startCli(where, [], { HL_TEST_GATE: where.gate });
      await waitFor("an agent to start", () => agentsStarted(cli).length > 0, cli);
      const [first] = agentsStarted(cli);
      await openGate(where, first!);
      // Its lane takes the next trial: one trial finished, two waiting at their gates, one not begun.
      await waitFor(
        "one trial to finish and the next to start",
        () => finishedCount(where.out) === 1 && agentsStarted(cli).length === 3,
        cli,
      );
      await kill(cli);
      const finished = await finishedRecords(where.out);
      expect(finished.size).toBe(1);
      expect((await trialTemps(where)).length).toBe(2);
      // And the shared baseline of the fixture, which the resumed run removes as well.
      expect((await harnessTemps(where)).length).toBe(3);
      await resumeAndCheck(where);
    });

    it("while a command grader runs: the grader dies with the run, and --resume grades again", async () => {
      const where = await scenario("kill-grading");
      // The fixer's gradings in this scenario wait while their copy holds hold-grading.
      const cli = startCli(where, [], { HL_TEST_HOLD_GRADING: "1" });
      const held = () =>
        gradings(where).filter((root) => existsSync(join(root, HOLD_GRADING))).length > 0;
      await waitFor("a held grading", held, cli);
      const graders = pidsWorkingIn(gradings(where));
      expect(graders.length).toBeGreaterThan(0);
      for (const pid of graders) strays.add(pid);
      await kill(cli);
      // The held trial cannot have finished (a baseline trial beside it may have).
      expect(finishedCount(where.out)).toBeLessThan(4);
      // Its sandbox dies with the run (bubblewrap's --die-with-parent): no grader is left over.
      await waitFor("the graders to die with the run", () => !graders.some(isRunning));
      await resumeAndCheck(where);
    });

    it("after the last trial, around the writing of the verdict", async () => {
      const where = await scenario("kill-verdict");
      const cli = startCli(where);
      await waitFor("every trial to finish", () => finishedCount(where.out) === 4, cli);
      await kill(cli);
      await resumeAndCheck(where);
    });

    it("again and again at seeded random moments", async () => {
      const where = await scenario("kill-random");
      const random = mulberry32(20260901);
      for (let round = 0; round < 3; round += 1) {
        // Once the run has written anything, it can only be continued.
        const cli = startCli(where, existsSync(where.out) ? ["--resume"] : []);
        const delay = 300 + Math.floor(random() * 1200);
        const ended = await Promise.race([
          cli.exited.then(() => true),
          new Promise<false>((resolve) => setTimeout(() => resolve(false), delay)),
        ]);
        if (!ended) await kill(cli);
      }
      await resumeAndCheck(where);
    });
  });

  describe("by Ctrl-C or SIGTERM", () => {
    it("Ctrl-C aborts the running agents, kills their commands, removes their workspaces and exits 130; --resume finishes the run", async () => {
      const where = await scenario("sigint");
      const sleeperFile = join(signals, "sleeper-sigint.json");
      const cli = startCli(where, [], { HL_TEST_SLEEPER: sleeperFile });
      await waitFor("the long command to start", () => existsSync(sleeperFile), cli);
      const { pid: sleeper } = JSON.parse(readFileSync(sleeperFile, "utf8")) as { pid: number };
      strays.add(sleeper);
      expect(isRunning(sleeper)).toBe(true);

      // One run at a time: a second run or resume into its --out is refused while it lives.
      const second = startCli(where, ["--resume"]);
      const refused = await second.exited;
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`another run (pid ${cli.child.pid}`);
      expect(lines(second.agentLog)).toEqual([]);

      cli.child.kill("SIGINT");
      const exit = await cli.exited;
      expect(exit.code, exit.stderr).toBe(130);
      expect(exit.stderr).toContain("interrupted");
      expect(isRunning(sleeper)).toBe(false);
      expect(await harnessTemps(where)).toEqual([]);
      expect(existsSync(join(where.out, LOCK))).toBe(false);
      const verdict = (await readJson(where.out, "verdict.json")) as VerdictDocument;
      expect(verdict.status).toBe("infrastructure_error");
      expect(verdict.reason).toMatch(/interrupted after \d of 4 trials; run again with --resume/);
      // The trial cut short has no finished record: it is not in the verdict and runs again.
      expect(verdict.trials.every((t) => t.infraReason !== "run_aborted")).toBe(true);

      await resumeAndCheck(where);
    });

    it("SIGTERM (a supervisor stopping the run) stops it the same clean way and exits 143", async () => {
      const where = await scenario("sigterm");
      const sleeperFile = join(signals, "sleeper-sigterm.json");
      const cli = startCli(where, [], { HL_TEST_SLEEPER: sleeperFile });
      await waitFor("the long command to start", () => existsSync(sleeperFile), cli);
      const { pid: sleeper } = JSON.parse(readFileSync(sleeperFile, "utf8")) as { pid: number };
      strays.add(sleeper);

      cli.child.kill("SIGTERM");
      const exit = await cli.exited;
      expect(exit.code, exit.stderr).toBe(143);
      expect(exit.stderr).toContain("terminated: stopping the running trials");
      expect(isRunning(sleeper)).toBe(false);
      expect(await harnessTemps(where)).toEqual([]);
      expect(existsSync(join(where.out, LOCK))).toBe(false);

      await resumeAndCheck(where);
    });

    it("Ctrl-C ends at once a command that ignores SIGTERM (its sandbox goes as a whole); --resume finishes the run", async () => {
      const where = await scenario("sigint-stubborn");
      const sleeperFile = join(signals, "sleeper-stubborn.json");
      const cli = startCli(where, [], {
        HL_TEST_SLEEPER: sleeperFile,
        HL_TEST_STUBBORN: "1",
        // Were the command only sent SIGTERM, nothing would kill it for ten minutes.
        HARNESSLAB_KILL_GRACE_MS: "600000",
      });
      await waitFor("the long command to start", () => existsSync(sleeperFile), cli);
      const { pid: sleeper, cwd } = JSON.parse(readFileSync(sleeperFile, "utf8")) as {
        pid: number;
        cwd: string;
      };
      strays.add(sleeper);

      cli.child.kill("SIGINT");
      const exit = await cli.exited;
      expect(exit.code, exit.stderr).toBe(130);
      expect(isRunning(sleeper)).toBe(false);
      // Killed, not asked: it never saw a SIGTERM it could ignore.
      expect(existsSync(join(cwd, GOT_SIGTERM))).toBe(false);
      expect(await harnessTemps(where)).toEqual([]);
      expect(existsSync(join(where.out, LOCK))).toBe(false);

      await resumeAndCheck(where);
    });

    it("Ctrl-C ends agents spinning in busy loops (exit 130, nothing left behind); --resume finishes the run", async () => {
      const where = await scenario("sigint-spinning");
      const spin = join(where.gate, "spin");
      await writeFile(spin, "");
      const cli = startCli(where, [], { HL_TEST_SPIN: spin });
      // Concurrency 2: both trials that started spin, and the harness's own thread stays free.
      await waitFor("two agents to spin", () => agentsStarted(cli).length === 2, cli);
      cli.child.kill("SIGINT");
      const exit = await cli.exited;
      expect(exit.code, exit.stderr).toBe(130);
      expect(exit.stderr).toContain("interrupted");
      expect(await harnessTemps(where)).toEqual([]);
      expect(existsSync(join(where.out, LOCK))).toBe(false);
      await rm(spin);
      await resumeAndCheck(where);
    });

    it("a second Ctrl-C quits at once; --resume clears what was left", async () => {
      const where = await scenario("sigint-twice");
      const cli = startCli(where, [], { HL_TEST_GATE: where.gate });
      await waitFor("an agent to start", () => agentsStarted(cli).length > 0, cli);
      // Both signals arrive before the run can unwind.
      cli.child.kill("SIGINT");
      cli.child.kill("SIGINT");
      const exit = await cli.exited;
      expect(exit.code).toBe(130);
      expect(existsSync(join(where.out, LOCK))).toBe(false);
      await resumeAndCheck(where);
    });
  });
});
