// `harness compare regrade` stopped by a signal, in a real CLI process: Ctrl-C (SIGINT) or
// SIGTERM stops the graders, removes the regrade's workspaces and writes nothing (exit 130 or
// 143); killed outright (SIGKILL) it leaves its lock and workspaces, which the next regrade
// clears. The grader notes its start, so the test strikes while it grades, never on a timer.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, readdir, readFile, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { regradeRun } from "../../src/compare/index.js";
import { REGRADE_WORKSPACE_MARKER } from "../../src/compare/run/workspace-marker.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import {
  listFiles,
  makeExperiment,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";
import { isRunning, markedCopies, markThenWaitSource, pidsWorkingIn } from "../support/sandbox.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(REPO, "src", "cli", "bin.ts");
const LOCK = ".harnesslab-run.lock";

let exp: TempExperiment;
const children = new Set<ChildProcess>();
/** Graders a SIGKILLed CLI left running (their groups are their own). */
const strays = new Set<number>();

beforeAll(async () => {
  exp = await makeExperiment();
  await runManifest(exp.manifestPath, { outDir: exp.outDir, tempParent: exp.trialsDir });
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

/** One regrade to interrupt: a copy of the run, the CLI's TMPDIR, and where its grader notes starts. */
interface Scenario {
  out: string;
  tmp: string;
  /** A manifest whose command grader leaves GRADER_MARK in its copy, then grades for a minute. */
  slowManifest: string;
}

const GRADER_MARK = ".slow-grader-started";

async function scenario(name: string): Promise<Scenario> {
  const out = exp.freshOut(name);
  await cp(exp.outDir, out, { recursive: true });
  const tmp = join(exp.base, `tmp-${name}`);
  await mkdir(tmp);
  // Kept outside the fixture: the sandbox shows it read-only. Its mark goes into its grading
  // copy, the only place it may write.
  const grader = join(exp.base, `slow-grader-${name}.mjs`);
  await writeFile(grader, markThenWaitSource(GRADER_MARK));
  const slowManifest = await exp.writeManifest(
    syntheticManifest({
      tasks: [
        {
          id: "fix-value",
          fixture: "./fixture",
          prompt: "./prompt.md",
          expectedFiles: ["src/value.txt"],
          graders: [
            { kind: "scope", mode: "subset" },
            { kind: "command", id: "check", argv: ["node", grader], timeoutMs: 120000 },
          ],
        },
      ],
    }),
    `slow-${name}.json`,
  );
  return { out, tmp: await realpath(tmp), slowManifest };
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startRegrade(where: Scenario): { child: ChildProcess; exited: Promise<Exit> } {
  const args = ["compare", "regrade", where.out, "--manifest", where.slowManifest];
  const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
    cwd: REPO,
    env: { ...process.env, TMPDIR: where.tmp },
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
    child.on("close", (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, exited };
}

/** This machine's pids of the graders started in the scenario's grading copies. */
async function graderPids(where: Scenario): Promise<number[]> {
  return pidsWorkingIn(markedCopies(where.tmp, GRADER_MARK));
}

/** Polls every 10 ms; the bound only guards against a hang, it times nothing. */
async function graderStarted(where: Scenario, exited: Promise<Exit>): Promise<number[]> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  for (let i = 0; i < 3000; i += 1) {
    const pids = await graderPids(where);
    if (pids.length > 0) return pids;
    if (gone) throw new Error(`the CLI exited before a grader started: ${(await exited).stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("timed out waiting for a grader to start");
}

/** Polls every 10 ms; the bound only guards against a hang. */
async function waitUntil(check: () => boolean): Promise<void> {
  for (let i = 0; i < 3000 && !check(); i += 1)
    await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

const workspaces = async (where: Scenario) =>
  (await readdir(where.tmp)).filter((name) => name.startsWith("harnesslab-trial-"));

/** What only a regrade writes in --out: new verdicts, trial checks and workspace notes. */
async function regradeFiles(out: string): Promise<string[]> {
  return (await listFiles(out)).filter(
    (path) =>
      /(^|\/)(verdict|validation)\.regrade-/.test(path) ||
      path.endsWith(REGRADE_WORKSPACE_MARKER) ||
      path === LOCK,
  );
}

describe.concurrent("compare regrade stopped by a signal", () => {
  for (const [signal, code, word] of [
    ["SIGINT", 130, "interrupted"],
    ["SIGTERM", 143, "terminated"],
  ] as const) {
    it(`${signal}: exits ${code}, its graders and workspaces gone, nothing written, and the next regrade works`, async () => {
      const where = await scenario(signal.toLowerCase());
      const before = await listTree(where.out);
      const cli = startRegrade(where);
      const graders = await graderStarted(where, cli.exited);
      cli.child.kill(signal);
      const exit = await cli.exited;

      expect(exit.code, exit.stderr).toBe(code);
      expect(exit.stdout).toBe("");
      expect(exit.stderr).toContain(`${word}: stopping the regrade`);
      expect(exit.stderr).toContain(
        "the regrade was stopped before it finished: no new verdict was written",
      );
      for (const pid of graders) expect(isRunning(pid)).toBe(false);
      expect(await workspaces(where)).toEqual([]);
      expect(await regradeFiles(where.out)).toEqual([]);
      expect(await listTree(where.out)).toEqual(before);

      const next = await regradeRun(where.out, { tempParent: where.tmp });
      expect(next.stem).toBe("verdict.regrade-001");
      expect(next.changes).toEqual([]);
    });
  }

  it("SIGKILL: the lock and workspaces it leaves are cleared by the next regrade, which takes the lock over", async () => {
    const where = await scenario("sigkill");
    const cli = startRegrade(where);
    const graders = await graderStarted(where, cli.exited);
    for (const pid of graders) strays.add(pid);
    cli.child.kill("SIGKILL");
    await cli.exited;

    // What the killed regrade left: its lock (naming it a regrade), a workspace per trial it
    // was grading, each noted in its trial's folder.
    const lock = JSON.parse(await readFile(join(where.out, LOCK), "utf8")) as {
      pid: number;
      kind: string;
    };
    expect(lock).toMatchObject({ pid: cli.child.pid, kind: "regrade" });
    const left = await workspaces(where);
    expect(left.length).toBeGreaterThan(0);
    const notes = (await listFiles(where.out)).filter((p) => p.endsWith(REGRADE_WORKSPACE_MARKER));
    // A note is written before its directory exists.
    expect(notes.length).toBeGreaterThanOrEqual(left.length);
    // The graders' sandboxes died with the regrade (bubblewrap's --die-with-parent).
    for (const pid of graders) await waitUntil(() => !isRunning(pid));

    const next = await regradeRun(where.out, { tempParent: where.tmp });
    expect(next.stem).toBe("verdict.regrade-001");
    expect(await workspaces(where)).toEqual([]);
    expect(existsSync(join(where.out, LOCK))).toBe(false);
    expect(
      (await listFiles(where.out)).filter((p) => p.endsWith(REGRADE_WORKSPACE_MARKER)),
    ).toEqual([]);
  });
});
