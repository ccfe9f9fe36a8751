// One writer at a time per --out. `compare run` (and its --resume) and `compare regrade` hold a
// lock file there (pid, host, start time, and which of the two holds it) from their first
// write to their last. Another writer is refused while the holder lives; a lock whose process
// is gone (killed, crashed) is stale. A dead run's lock is taken over only by --resume, which
// finishes that run (a regrade of a half-done run would judge a subset of its trials); a dead
// regrade's lock by anyone, since a regrade leaves nothing that needs finishing. Without the
// lock a resume could delete the workspaces of trials still running.
import { randomBytes } from "node:crypto";
import { readFileSync, unlinkSync } from "node:fs";
import { link, lstat, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { ExperimentInputError } from "../errors.js";

export const RUN_LOCK_FILE = ".harnesslab-run.lock";

/** What holds the lock: a `compare run` (fresh or --resume) or a `compare regrade`. */
type LockHolderKind = "run" | "regrade";

const lockSchema = z.strictObject({
  pid: z.int(),
  host: z.string(),
  startedAt: z.string(),
  /** Tells this process's lock from another's with the same pid (another host, pid reuse). */
  token: z.string(),
  /** Locks written before regrades took the lock have none: they are runs'. */
  kind: z.enum(["run", "regrade"]).default("run"),
});
type LockRecord = z.infer<typeof lockSchema>;

type Holder =
  | { state: "none" }
  | { state: "live"; record: LockRecord; text: string }
  | { state: "stale"; record: LockRecord | undefined; text: string };

/** Tokens of the locks this process holds now, so its own pid in a lock proves nothing by itself. */
const heldTokens = new Set<string>();
/** Tokens of the locks this process is taking now (its drafts and set-aside files are in use). */
const takingTokens = new Set<string>();

/** A set-aside or draft lock left longer than this was abandoned: a live process keeps them for moments. */
const LEFTOVER_MAX_AGE_MS = 60_000;

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the process a lock names still runs. Our own pid counts only with a token this process
 * holds: in a container every start of the CLI may be pid 1, so a lock a killed earlier process
 * left can carry the pid this one has now.
 */
function holderIsAlive(record: LockRecord): boolean {
  // A process on another machine (a shared file system) cannot be checked from here.
  if (record.host !== hostname()) return true;
  if (record.pid === process.pid) return heldTokens.has(record.token);
  return processIsAlive(record.pid);
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
  // written by harnesslab and guards nothing.
  if (record === undefined) return { state: "stale", record, text };
  return holderIsAlive(record) ? { state: "live", record, text } : { state: "stale", record, text };
}

/** A path as one shell word, for commands the messages suggest. */
function shellWord(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}

/** The command that finishes an interrupted run (`<manifest>` when its manifest is not known). */
export function resumeCommand(outDir: string, manifestPath: string | undefined): string {
  const manifest = manifestPath === undefined ? "<manifest>" : shellWord(manifestPath);
  return `harness compare run ${manifest} --out ${shellWord(outDir)} --resume`;
}

export interface RunLockOptions {
  /**
   * Whether a dead run's lock may be taken over (`compare run --resume`, which finishes that
   * run). A dead regrade's lock is always taken over.
   */
  takeOverStale: boolean;
  /** Who takes the lock (default: a run). */
  kind?: LockHolderKind;
  /** The run's manifest, named in the advice to finish a run with --resume. */
  manifestPath?: string;
}

export interface RunLock {
  /** Where the lock file is. */
  readonly path: string;
  /** Throws ExperimentInputError when a live process holds the lock; reads only. */
  assertNotHeldByLiveRun(): Promise<void>;
  /** Throws ExperimentInputError when `acquire` would refuse the lock as it is now; reads only. */
  assertAvailable(): Promise<void>;
  /**
   * Takes the lock (creating the directory if needed). A stale lock is taken over when the
   * options allow; a live one, or a stale one otherwise, throws ExperimentInputError.
   */
  acquire(): Promise<void>;
  /** Gives the lock up if this process holds it. */
  release(): Promise<void>;
}

export function createRunLock(outDir: string, options: RunLockOptions): RunLock {
  const lockPath = join(outDir, RUN_LOCK_FILE);
  const kind = options.kind ?? "run";
  const token = randomBytes(12).toString("hex");
  const resume = resumeCommand(outDir, options.manifestPath);
  let held = false;
  // A process that exits without unwinding (process.exit on a second Ctrl-C) still gives the
  // lock up; after SIGKILL nothing runs, and the next writer finds it stale instead.
  const onExit = () => {
    if (!held) return;
    try {
      if (readFileSync(lockPath, "utf8").includes(token)) unlinkSync(lockPath);
    } catch {
      // gone already
    }
  };

  function refusal(message: string): ExperimentInputError {
    return kind === "run"
      ? new ExperimentInputError(outDir, [{ path: "--out", message }], "cannot write the run here")
      : new ExperimentInputError(
          outDir,
          [{ path: RUN_LOCK_FILE, message }],
          "cannot regrade the run here",
        );
  }

  function liveMessage(record: LockRecord): string {
    const where =
      record.host === hostname() ? `pid ${record.pid}` : `pid ${record.pid} on ${record.host}`;
    const holder = `${where}, started ${record.startedAt}`;
    if (record.kind === "run" && kind === "run")
      return `another run (${holder}) is writing to this directory; wait for it to end or stop it (Ctrl-C), then finish it with --resume. If no run is using it, delete ${lockPath}`;
    if (record.kind === "run")
      return `a run is in progress in this directory (${holder}); wait for it to finish, then regrade. If no run is using it, delete ${lockPath}`;
    const other = kind === "regrade" ? "another regrade" : "a regrade";
    return `${other} (${holder}) is writing to this directory; wait for it to end. If no regrade is using it, delete ${lockPath}`;
  }

  /** Why a stale lock is not taken over, or undefined when it may be. */
  function staleRefusal(record: LockRecord | undefined): string | undefined {
    if (record?.kind === "regrade") return undefined;
    if (record === undefined) {
      if (kind === "run" && options.takeOverStale) return undefined;
      return `${lockPath} is not a lock harnesslab wrote; if no run or regrade is using this directory, delete it`;
    }
    const holder = `pid ${record.pid}, started ${record.startedAt}`;
    if (kind === "regrade")
      return `the run that writes this directory (${holder}) stopped before it finished (its lock is still here); finish it with \`${resume}\`, then regrade`;
    if (options.takeOverStale) return undefined;
    return `a run that no longer exists (${holder}) left its lock here (${lockPath}); finish that run with \`${resume}\``;
  }

  function check(holder: Holder): void {
    if (holder.state === "live") throw refusal(liveMessage(holder.record));
    if (holder.state === "stale") {
      const refused = staleRefusal(holder.record);
      if (refused !== undefined) throw refusal(refused);
    }
  }

  async function tryCreate(): Promise<boolean> {
    const record: LockRecord = {
      pid: process.pid,
      host: hostname(),
      startedAt: new Date().toISOString(),
      token,
      kind,
    };
    const draft = `${lockPath}.${process.pid}.${token}.draft`;
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
   * Moves the stale lock aside and checks it is still the one judged stale: two writers racing
   * for it must not both win, and neither may remove a lock a third process just created. A
   * lock moved aside by mistake goes back with link(2), which never replaces a lock created
   * meanwhile.
   */
  async function takeOver(staleText: string): Promise<void> {
    const aside = `${lockPath}.${process.pid}.${token}.stale`;
    try {
      await rename(lockPath, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    const moved = await readFile(aside, "utf8").catch(() => "");
    if (moved !== staleText) await link(aside, lockPath).catch(() => {});
    await rm(aside, { force: true });
  }

  return {
    path: lockPath,
    async assertNotHeldByLiveRun() {
      const holder = await readHolder(lockPath);
      if (holder.state === "live") throw refusal(liveMessage(holder.record));
    },
    async assertAvailable() {
      check(await readHolder(lockPath));
    },
    async acquire() {
      if (held) return;
      await mkdir(outDir, { recursive: true });
      takingTokens.add(token);
      try {
        for (let round = 0; round < 5; round += 1) {
          if (await tryCreate()) {
            held = true;
            heldTokens.add(token);
            process.on("exit", onExit);
            await removeLockLeftovers(outDir);
            return;
          }
          const holder = await readHolder(lockPath);
          check(holder);
          if (holder.state === "stale") await takeOver(holder.text);
        }
      } finally {
        takingTokens.delete(token);
      }
      throw refusal(`could not take the lock ${lockPath}: other processes keep taking it`);
    },
    async release() {
      if (!held) return;
      held = false;
      process.off("exit", onExit);
      const holder = await readHolder(lockPath).catch(() => ({ state: "none" }) as const);
      if (holder.state !== "none" && holder.record?.token === token)
        await rm(lockPath, { force: true });
      heldTokens.delete(token);
    },
  };
}

const LEFTOVER = /^\.harnesslab-run\.lock\.(\d+)\.([0-9a-f]+)\.(draft|stale)$/;

/**
 * Drafts and set-aside locks of processes killed mid-way through taking the lock. Another
 * process's are removed only once it is dead, or when they are older than any live process keeps
 * one (its pid may have been reused); a live process may be using them right now.
 */
async function removeLockLeftovers(outDir: string): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(outDir).catch(() => [] as string[])) {
    const match = LEFTOVER.exec(name);
    if (!match) continue;
    const pid = Number(match[1]);
    const token = match[2] ?? "";
    const path = join(outDir, name);
    const dead =
      pid === process.pid
        ? !takingTokens.has(token) && !heldTokens.has(token)
        : !processIsAlive(pid);
    const old = await lstat(path).then(
      (stats) => now - stats.mtimeMs > LEFTOVER_MAX_AGE_MS,
      () => false,
    );
    if (dead || old) await rm(path, { force: true });
  }
}
