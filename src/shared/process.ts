import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

export interface RunCommandOptions {
  cwd: string;
  /** The child's whole environment; nothing is inherited unless the caller passes it. */
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Bytes of stdout/stderr kept each (the tail is kept; earlier output is dropped). */
  maxOutputBytes?: number;
  /** Written to the command's stdin, then closed (bytes exactly as given). */
  input?: string | Uint8Array;
  signal?: AbortSignal;
  /**
   * How a timed-out or aborted command is stopped: `graceful` (default) sends SIGTERM to its
   * process group and SIGKILL after a grace period; `kill` sends SIGKILL at once (for a sandbox,
   * which ignores SIGTERM and whose processes all die with it).
   */
  stop?: "graceful" | "kill";
}

export interface CommandResult {
  argv: string[];
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the program could not be started at all (e.g. ENOENT). */
  spawnError?: string;
  stdout: string;
  stderr: string;
  /** True when stdout or stderr was longer than the kept tail (`maxOutputBytes`). */
  outputTruncated?: boolean;
  durationMs: number;
}

const DEFAULT_MAX_OUTPUT = 256 * 1024;

/** Keeps the last `limit` bytes of a stream. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly limit: number) {}
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 1) {
      const dropped = this.chunks.shift()!;
      this.size -= dropped.length;
      this.truncated = true;
    }
  }
  text(): string {
    let all = Buffer.concat(this.chunks);
    if (all.length > this.limit) {
      all = all.subarray(all.length - this.limit);
      this.truncated = true;
    }
    return (this.truncated ? "[… earlier output dropped …]\n" : "") + all.toString("utf8");
  }
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    // A negative pid signals the whole process group the child leads.
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/**
 * The children of `pid` (Linux; empty elsewhere). A sandbox's leader (bubblewrap) starts the
 * sandbox's first process in a session of its own, out of reach of the leader's group signal.
 */
function childrenOf(pid: number | undefined): number[] {
  if (pid === undefined || process.platform !== "linux") return [];
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return children;
}

/** Whether `pid` still runs (a zombie has finished: what it started is gone with it). */
function stillRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * Waits until each of `pids` has finished, for at most `limitMs`. The first process of a PID
 * namespace finishes only once the kernel has ended every other process in it, so a sandbox
 * whose first process has finished has nothing left running.
 */
async function untilFinished(pids: readonly number[], limitMs: number): Promise<void> {
  const deadline = performance.now() + limitMs;
  while (pids.some(stillRunning) && performance.now() < deadline) await sleep(10);
}

const DEFAULT_KILL_GRACE_MS = 2000;

/**
 * How long a stopped command may take to exit after SIGTERM before its group gets SIGKILL.
 * HARNESSLAB_KILL_GRACE_MS overrides it (whole milliseconds), so a test can keep a command that
 * ignores SIGTERM alive for as long as it needs to observe it, however slow the machine.
 */
function killGraceMs(): number {
  const configured = process.env.HARNESSLAB_KILL_GRACE_MS?.trim();
  const ms = configured ? Number(configured) : Number.NaN;
  return Number.isSafeInteger(ms) && ms >= 0 && ms <= 2_147_483_647 ? ms : DEFAULT_KILL_GRACE_MS;
}

/** Leaders of the process groups `runCommand` started that have not exited yet. */
const liveGroups = new Set<number>();

/**
 * Kills, at once and synchronously, every process group `runCommand` started that is still
 * running. For a process about to exit without waiting for its commands (a second Ctrl-C):
 * each group is detached from the terminal's, so nothing else would stop it.
 */
export function killRunningCommands(signal: NodeJS.Signals = "SIGKILL"): number {
  const pids = [...liveGroups];
  for (const pid of pids) killGroup(pid, signal);
  return pids.length;
}

/**
 * Runs `argv` without a shell, in its own process group, and kills the whole group
 * (children included) on timeout or abort. Never throws for the child's behaviour:
 * failures to start, non-zero exits and timeouts are all values.
 */
export function runCommand(
  argv: readonly string[],
  options: RunCommandOptions,
): Promise<CommandResult> {
  const [program, ...args] = argv;
  if (program === undefined) throw new Error("runCommand: empty argv");
  const started = performance.now();
  const limit = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const stdout = new TailBuffer(limit);
  const stderr = new TailBuffer(limit);
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let child: ReturnType<typeof spawn>;
    const finish = (
      exitCode: number | null,
      signal: NodeJS.Signals | null,
      spawnError?: string,
    ) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({
        argv: [...argv],
        exitCode,
        signal,
        timedOut,
        aborted,
        ...(spawnError === undefined ? {} : { spawnError }),
        stdout: stdout.text(),
        stderr: stderr.text(),
        outputTruncated: stdout.truncated || stderr.truncated,
        durationMs: Math.round(performance.now() - started),
      });
    };
    const stop = () => {
      if (options.stop === "kill") {
        killGroup(child.pid, "SIGKILL");
        return;
      }
      killGroup(child.pid, "SIGTERM");
      // Escalate if anything in the group ignores SIGTERM.
      setTimeout(() => killGroup(child.pid, "SIGKILL"), killGraceMs()).unref();
    };
    const onAbort = () => {
      aborted = true;
      stop();
    };
    try {
      child = spawn(program, args, {
        cwd: options.cwd,
        env: options.env ?? {},
        detached: process.platform !== "win32",
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
      });
    } catch (error) {
      const timer = setTimeout(() => {}, 0);
      clearTimeout(timer);
      resolve({
        argv: [...argv],
        exitCode: null,
        signal: null,
        timedOut: false,
        aborted: false,
        spawnError: (error as Error).message,
        stdout: "",
        stderr: "",
        durationMs: 0,
      });
      return;
    }
    const leader = child.pid;
    if (leader !== undefined) liveGroups.add(leader);
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout?.on("data", (c: Buffer) => stdout.push(c));
    child.stderr?.on("data", (c: Buffer) => stderr.push(c));
    child.on("error", (error) => finish(null, null, error.message));
    child.on("close", (code, signal) => {
      // The leader exited; nothing it left running in its group (a server started in the
      // background by a test script, say) may outlive the command.
      killGroup(child.pid, "SIGKILL");
      if (leader !== undefined) liveGroups.delete(leader);
      finish(code, signal);
    });
    child.stdin?.on("error", () => {});
    child.stdin?.end(options.input ?? "");
  });
}

/** A long-running process in a group of its own (a server that lives as long as a trial). */
export interface ProcessGroup {
  /** Its pipes: the caller speaks the process's protocol over stdin and stdout. */
  child: ChildProcessWithoutNullStreams;
  /** Kept output of stderr (the last `maxStderrBytes`). */
  stderr(): string;
  /** Settles when the leader has exited (and its group was killed). */
  exited: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; error?: string }>;
  /** Kills the whole group at once and waits for the leader to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `argv` without a shell in a process group of its own, for a process the caller talks to
 * while it runs. Nothing of the group outlives it: when the leader exits, or `stop` is called,
 * the whole group is killed (and `killRunningCommands` reaches it too).
 */
export function startProcessGroup(
  argv: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; maxStderrBytes?: number },
): ProcessGroup {
  const [program, ...args] = argv;
  if (program === undefined) throw new Error("startProcessGroup: empty argv");
  const stderr = new TailBuffer(options.maxStderrBytes ?? 16 * 1024);
  const child = spawn(program, args, {
    cwd: options.cwd,
    env: options.env,
    detached: process.platform !== "win32",
    stdio: ["pipe", "pipe", "pipe"],
    windowsHide: true,
  });
  const leader = child.pid;
  if (leader !== undefined) liveGroups.add(leader);
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  child.stdin.on("error", () => {});
  const exited = new Promise<{
    exitCode: number | null;
    signal: NodeJS.Signals | null;
    error?: string;
  }>((resolve) => {
    child.once("error", (error) => {
      if (leader !== undefined) liveGroups.delete(leader);
      resolve({ exitCode: null, signal: null, error: error.message });
    });
    child.once("close", (exitCode, signal) => {
      killGroup(leader, "SIGKILL");
      if (leader !== undefined) liveGroups.delete(leader);
      resolve({ exitCode, signal });
    });
  });
  return {
    child,
    stderr: () => stderr.text(),
    exited,
    stop: async () => {
      // The sandbox's first process (a child of the leader, in a session of its own) dies with
      // the leader; the group is stopped only once it, and so everything in its sandbox, has.
      const inner = childrenOf(leader);
      killGroup(leader, "SIGKILL");
      for (const pid of inner) killGroup(pid, "SIGKILL");
      await exited;
      await untilFinished(inner, 10_000);
    },
  };
}

/** Environment variables a harness-spawned tool may see by default: enough to find programs, no secrets. */
export function minimalEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ["PATH", "HOME", "TMPDIR", "LANG", "SystemRoot", "TEMP", "TMP"]) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...extra };
}

/**
 * Switches that keep npm quiet and offline for commands the harness or an agent runs
 * (validation commands and graders often call npm; it must not look for updates, funding or
 * audits on the network).
 */
export const QUIET_NPM_ENV: Readonly<Record<string, string>> = {
  NO_UPDATE_NOTIFIER: "1",
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
};

/** The argv that starts npm without a shell (on Windows through its npm-cli.js entry point). */
export function npmArgv(args: readonly string[]): string[] {
  if (process.platform === "win32") {
    const npmCli = process.env.npm_execpath;
    if (npmCli?.endsWith(".js")) return [process.execPath, npmCli, ...args];
    const guess = `${process.execPath.replace(/node\.exe$/i, "")}node_modules\\npm\\bin\\npm-cli.js`;
    return [process.execPath, guess, ...args];
  }
  return ["npm", ...args];
}
