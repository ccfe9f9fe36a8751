// One run at a time per --out. `compare run` holds a lock file there (pid, host, start time)
// from its first write to its last; a second run or resume into the same directory is refused
// while the holder lives, and a lock whose process is gone (killed, crashed) is stale: --resume
// takes it over. Without this a resume could delete the workspaces of trials still running.
import { randomBytes } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { link, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ExperimentInputError } from "./errors.js";

export const RUN_LOCK_FILE = ".harnesslab-run.lock";

const lockSchema = z.strictObject({
  pid: z.int(),
  host: z.string(),
  startedAt: z.string(),
  /** Tells this process's lock from another's with the same pid (another host, pid reuse). */
  token: z.string(),
});
type LockRecord = z.infer<typeof lockSchema>;

type Holder =
  | { state: "none" }
  | { state: "live"; record: LockRecord; text: string }
  | { state: "stale"; record: LockRecord | undefined; text: string };

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function readHolder(lockPath: string): Promise<Holder> {
  let text: string;
  try {
    text = await readFile(lockPath, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOTDIR: --out is not a directory, which the --out checks report in their own words.
    if (code === "ENOENT" || code === "ENOTDIR") return { state: "none" };
    throw error;
  }
  let record: LockRecord | undefined;
  try {
    const parsed = lockSchema.safeParse(JSON.parse(text));
    record = parsed.success ? parsed.data : undefined;
  } catch {
    record = undefined;
  }
  // The lock is created complete (hard link of a written file), so an unreadable one was not
  // written by a run and guards nothing.
  if (record === undefined) return { state: "stale", record, text };
  // A process on another machine (a shared file system) cannot be checked from here.
  const alive = record.host !== hostname() || processIsAlive(record.pid);
  return alive ? { state: "live", record, text } : { state: "stale", record, text };
}

function refusal(outDir: string, message: string): ExperimentInputError {
  return new ExperimentInputError(
    outDir,
    [{ path: "--out", message }],
    "cannot write the run here",
  );
}

function liveMessage(lockPath: string, record: LockRecord): string {
  const where =
    record.host === hostname() ? `pid ${record.pid}` : `pid ${record.pid} on ${record.host}`;
  return `another run (${where}, started ${record.startedAt}) is writing to this directory; wait for it to end or stop it (Ctrl-C), then finish it with --resume. If no run is using it, delete ${lockPath}`;
}

/** Drafts and set-aside locks of processes killed mid-way through taking the lock. */
async function removeLockLeftovers(outDir: string, ownToken: string): Promise<void> {
  const leftover = /^\.harnesslab-run\.lock\.([0-9a-f]+)\.(draft|stale)$/;
  for (const name of await readdir(outDir).catch(() => [] as string[])) {
    const match = leftover.exec(name);
    if (match && match[1] !== ownToken) await rm(join(outDir, name), { force: true });
  }
}

export interface RunLock {
  /** Where the lock file is. */
  readonly path: string;
  /** Throws ExperimentInputError when a live run holds the lock; reads only. */
  assertNotHeldByLiveRun(): Promise<void>;
  /**
   * Takes the lock (creating the directory if needed). A stale lock is taken over when
   * `takeOverStale`; a live one, or a stale one otherwise, throws ExperimentInputError.
   */
  acquire(): Promise<void>;
  /** Gives the lock up if this process holds it. */
  release(): Promise<void>;
}

export function createRunLock(outDir: string, options: { takeOverStale: boolean }): RunLock {
  const lockPath = join(outDir, RUN_LOCK_FILE);
  const token = randomBytes(12).toString("hex");
  let held = false;
  // A process that exits without unwinding (process.exit on a second Ctrl-C) still gives the
  // lock up; after SIGKILL nothing runs, and the next --resume finds it stale instead.
  const onExit = () => {
    if (!held) return;
    try {
      if (readFileSync(lockPath, "utf8").includes(token)) unlinkSync(lockPath);
    } catch {
      // gone already
    }
  };

  async function tryCreate(): Promise<boolean> {
    const record: LockRecord = {
      pid: process.pid,
      host: hostname(),
      startedAt: new Date().toISOString(),
      token,
    };
    const draft = `${lockPath}.${token}.draft`;
    await writeFile(draft, `${JSON.stringify(record, null, 2)}\n`);
    try {
      // link(2) fails when the target exists, and the file it publishes is already complete.
      await link(draft, lockPath);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    } finally {
      await rm(draft, { force: true });
    }
  }

  /**
   * Moves the stale lock aside and checks it is still the one judged stale: two resumes racing
   * for it must not both win, and neither may remove a lock a third process just created.
   */
  async function takeOver(staleText: string): Promise<void> {
    const aside = `${lockPath}.${token}.stale`;
    try {
      await rename(lockPath, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    const moved = await readFile(aside, "utf8").catch(() => "");
    if (moved === staleText) await rm(aside, { force: true });
    else await rename(aside, lockPath).catch(() => {});
  }

  return {
    path: lockPath,
    async assertNotHeldByLiveRun() {
      const holder = await readHolder(lockPath);
      if (holder.state === "live") throw refusal(outDir, liveMessage(lockPath, holder.record));
    },
    async acquire() {
      if (held) return;
      await mkdir(outDir, { recursive: true });
      for (let round = 0; round < 5; round += 1) {
        if (await tryCreate()) {
          held = true;
          process.on("exit", onExit);
          await removeLockLeftovers(outDir, token);
          return;
        }
        const holder = await readHolder(lockPath);
        if (holder.state === "live") throw refusal(outDir, liveMessage(lockPath, holder.record));
        if (holder.state === "stale") {
          if (!options.takeOverStale)
            throw refusal(
              outDir,
              `a run that no longer exists left its lock here (${lockPath}); finish that run with --resume`,
            );
          await takeOver(holder.text);
        }
      }
      throw refusal(
        outDir,
        `could not take the run lock ${lockPath}: other processes keep taking it`,
      );
    },
    async release() {
      if (!held) return;
      held = false;
      process.off("exit", onExit);
      const holder = await readHolder(lockPath).catch(() => ({ state: "none" }) as const);
      if (holder.state !== "none" && holder.record?.token === token)
        await rm(lockPath, { force: true });
    },
  };
}
