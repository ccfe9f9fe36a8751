// The --out lock: who holds it (a run or a regrade), which stale locks are taken over by whom,
// that a lock naming this very pid but not a lock this process holds is stale (a container's
// pid 1 after a restart), and that only abandoned drafts of other processes are cleared.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { ExperimentInputError } from "../../src/compare/index.js";
import { createRunLock, RUN_LOCK_FILE } from "../../src/compare/run/run-lock.js";

let dir: string;

/** A pid that belonged to a process that has exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid as number;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-lock-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

// A live process other than this one, to stand in for another writer.
const live: ChildProcess = spawn(process.execPath, ["-e", "setTimeout(() => {}, 120000)"], {
  stdio: "ignore",
});
afterAll(() => {
  live.kill("SIGKILL");
});

async function writeLock(record: Record<string, unknown>): Promise<void> {
  const full = {
    host: hostname(),
    startedAt: "2026-01-01T00:00:00.000Z",
    token: "ab12",
    ...record,
  };
  await writeFile(join(dir, RUN_LOCK_FILE), JSON.stringify(full));
}

async function lockRecord(): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(dir, RUN_LOCK_FILE), "utf8")) as Record<string, unknown>;
}

/** The one problem message of the refusal `attempt` ends with. */
async function refusal(attempt: Promise<unknown>): Promise<string> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ExperimentInputError);
  const problems = (error as ExperimentInputError).problems;
  expect(problems).toHaveLength(1);
  return problems[0]?.message ?? "";
}

describe("the lock records who holds it", () => {
  it("as a run by default and as a regrade when a regrade takes it, and is gone once released", async () => {
    for (const kind of ["run", "regrade"] as const) {
      const lock =
        kind === "run"
          ? createRunLock(dir, { takeOverStale: false })
          : createRunLock(dir, { kind, takeOverStale: false });
      await lock.acquire();
      expect(await lockRecord()).toMatchObject({ pid: process.pid, host: hostname(), kind });
      await lock.release();
      expect(await readdir(dir)).toEqual([]);
    }
  });
});

describe("a live holder is refused with words that name it", () => {
  const cases = [
    {
      holder: "run",
      taker: "run",
      message:
        /^another run \(pid \d+, started 2026-01-01T00:00:00\.000Z\) is writing to this directory; wait for it to end or stop it \(Ctrl-C\), then finish it with --resume/,
    },
    {
      holder: "run",
      taker: "regrade",
      message:
        /^a run is in progress in this directory \(pid \d+, started 2026-01-01T00:00:00\.000Z\); wait for it to finish, then regrade/,
    },
    {
      holder: "regrade",
      taker: "run",
      message:
        /^a regrade \(pid \d+, started 2026-01-01T00:00:00\.000Z\) is writing to this directory; wait for it to end/,
    },
    {
      holder: "regrade",
      taker: "regrade",
      message:
        /^another regrade \(pid \d+, started 2026-01-01T00:00:00\.000Z\) is writing to this directory; wait for it to end/,
    },
  ] as const;
  for (const c of cases) {
    it(`a live ${c.holder} refuses a ${c.taker}, and the lock stays`, async () => {
      await writeLock({ pid: live.pid, kind: c.holder });
      const before = await readFile(join(dir, RUN_LOCK_FILE), "utf8");
      const lock = createRunLock(dir, { kind: c.taker, takeOverStale: true });
      expect(await refusal(lock.assertAvailable())).toMatch(c.message);
      expect(await refusal(lock.acquire())).toMatch(c.message);
      expect(await readFile(join(dir, RUN_LOCK_FILE), "utf8")).toBe(before);
    });
  }

  it("a lock written before locks recorded their holder counts as a run's", async () => {
    await writeFile(
      join(dir, RUN_LOCK_FILE),
      JSON.stringify({ pid: live.pid, host: hostname(), startedAt: "then", token: "ab12" }),
    );
    const lock = createRunLock(dir, { kind: "regrade", takeOverStale: false });
    expect(await refusal(lock.acquire())).toMatch(/^a run is in progress in this directory/);
  });

  it("another lock this process holds is live", async () => {
    const first = createRunLock(dir, { takeOverStale: true });
    await first.acquire();
    try {
      const second = createRunLock(dir, { takeOverStale: true });
      expect(await refusal(second.acquire())).toMatch(
        new RegExp(`^another run \\(pid ${process.pid}, `),
      );
    } finally {
      await first.release();
    }
  });
});

describe("a stale lock", () => {
  it("of a dead regrade is taken over by the next regrade, and by a run", async () => {
    for (const taker of [
      { kind: "regrade", takeOverStale: false },
      { kind: "run", takeOverStale: false },
    ] as const) {
      await writeLock({ pid: deadPid(), kind: "regrade" });
      const lock = createRunLock(dir, taker);
      await lock.acquire();
      expect(await lockRecord()).toMatchObject({ pid: process.pid, kind: taker.kind });
      await lock.release();
    }
  });

  it("of a dead run is refused to a regrade, which is told to finish the run with --resume", async () => {
    await writeLock({ pid: deadPid(), kind: "run" });
    const lock = createRunLock(dir, {
      kind: "regrade",
      takeOverStale: false,
      manifestPath: "/experiments/my exp.json",
    });
    const message = `the run that writes this directory (pid ${(await lockRecord()).pid}, started 2026-01-01T00:00:00.000Z) stopped before it finished (its lock is still here); finish it with \`harness compare run '/experiments/my exp.json' --out ${dir} --resume\`, then regrade`;
    expect(await refusal(lock.assertAvailable())).toBe(message);
    expect(await refusal(lock.acquire())).toBe(message);
  });

  it("of a dead run is refused to a run that may not take it over, and taken over by one that may (--resume)", async () => {
    await writeLock({ pid: deadPid(), kind: "run" });
    expect(await refusal(createRunLock(dir, { takeOverStale: false }).acquire())).toMatch(
      /^a run that no longer exists \(pid \d+, .*\) left its lock here .*; finish that run with `harness compare run <manifest> --out .* --resume`$/,
    );
    const resume = createRunLock(dir, { takeOverStale: true });
    await resume.acquire();
    expect(await lockRecord()).toMatchObject({ pid: process.pid, kind: "run" });
    await resume.release();
  });

  it("naming this process's own pid under a token it does not hold is stale (a restarted container's pid 1)", async () => {
    await writeLock({ pid: process.pid, kind: "run", token: "left-by-an-earlier-process" });
    const regrade = createRunLock(dir, { kind: "regrade", takeOverStale: false });
    expect(await refusal(regrade.acquire())).toMatch(/stopped before it finished/);
    const resume = createRunLock(dir, { takeOverStale: true });
    await resume.acquire();
    expect((await lockRecord()).token).not.toBe("left-by-an-earlier-process");
    await resume.release();

    await writeLock({ pid: process.pid, kind: "regrade", token: "left-by-an-earlier-process" });
    const next = createRunLock(dir, { kind: "regrade", takeOverStale: false });
    await next.acquire();
    await next.release();
    expect(await readdir(dir)).toEqual([]);
  });

  it("that is not a lock harnesslab wrote is refused to a regrade, naming the file to delete", async () => {
    await writeFile(join(dir, RUN_LOCK_FILE), "not json");
    expect(
      await refusal(createRunLock(dir, { kind: "regrade", takeOverStale: false }).acquire()),
    ).toBe(
      `${join(dir, RUN_LOCK_FILE)} is not a lock harnesslab wrote; if no run or regrade is using this directory, delete it`,
    );
  });
});

describe("leftovers of processes killed while taking the lock", () => {
  it("are removed only for dead processes or when older than a minute", async () => {
    const dead = deadPid();
    const names = {
      deadDraft: `${RUN_LOCK_FILE}.${dead}.0a1b.draft`,
      deadAside: `${RUN_LOCK_FILE}.${dead}.0a1c.stale`,
      liveDraft: `${RUN_LOCK_FILE}.${live.pid}.0a1d.draft`,
      liveAside: `${RUN_LOCK_FILE}.${live.pid}.0a1e.stale`,
      oldLiveDraft: `${RUN_LOCK_FILE}.${live.pid}.0a1f.draft`,
      ownPidOtherToken: `${RUN_LOCK_FILE}.${process.pid}.0a20.draft`,
    };
    for (const name of Object.values(names)) await writeFile(join(dir, name), "{}");
    const longAgo = new Date(Date.now() - 5 * 60_000);
    await utimes(join(dir, names.oldLiveDraft), longAgo, longAgo);

    const lock = createRunLock(dir, { takeOverStale: false });
    await lock.acquire();
    await lock.release();
    // This process takes no lock with that token now: the draft is a dead process's with our pid.
    expect((await readdir(dir)).sort()).toEqual([names.liveAside, names.liveDraft].sort());
  });
});
