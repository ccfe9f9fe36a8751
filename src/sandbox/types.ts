import type { CommandResult } from "../shared/index.js";

/**
 * Resource limits of one sandboxed command. CPU time, writable memory and file size are kernel
 * limits of every process the command starts (each process has its own budget); the private
 * temporary directory is a size-capped tmpfs; output is cut to its last `outputBytes` per stream.
 */
export interface SandboxLimits {
  /** CPU seconds per process (RLIMIT_CPU); past it the process gets SIGXCPU. */
  cpuSeconds: number;
  /**
   * Writable memory per process in bytes (RLIMIT_DATA: heap, buffers, stacks of threads);
   * allocations past it fail. Address space reserved but never written does not count: V8
   * reserves gigabytes for each WebAssembly memory, so an address-space limit (RLIMIT_AS) would
   * stop tools built on WebAssembly (vitest's bundler, esbuild-wasm) before they use a byte.
   */
  memoryBytes: number;
  /** Largest file a process may write, in bytes (RLIMIT_FSIZE); past it the write gets SIGXFSZ. */
  fileSizeBytes: number;
  /** Size of the private /tmp (which holds HOME), in bytes. */
  tmpBytes: number;
  /** Bytes of stdout and of stderr kept (the tail). */
  outputBytes: number;
  /**
   * Processes the command may have at once (RLIMIT_NPROC, set inside the sandbox's own user
   * namespace, so it counts only the sandbox's processes). The kernel exempts root: run as root,
   * a command's processes are not limited.
   */
  processes: number;
}

export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = {
  cpuSeconds: 600,
  memoryBytes: 4 * 1024 ** 3,
  fileSizeBytes: 256 * 1024 ** 2,
  tmpBytes: 512 * 1024 ** 2,
  outputBytes: 256 * 1024,
  processes: 1024,
};

/** Which limit ended or cut a command. */
type SandboxLimitKind = "wall-time" | "cpu-time" | "memory" | "file-size" | "output" | "processes";

export interface SandboxLimitHit {
  limit: SandboxLimitKind;
  /** What was seen, for a person: the signal, the exit status, the matching error line. */
  detail: string;
}

/** A command's result plus how it was contained and which limits it ran into. */
export interface SandboxedResult extends CommandResult {
  sandbox: SandboxKind;
  limitsHit: SandboxLimitHit[];
}

/** `bwrap`: contained by bubblewrap. `none`: run as a plain child process (--unsafe-no-sandbox). */
export type SandboxKind = "bwrap" | "none";

export interface SandboxRunOptions {
  /** Working directory; must lie inside one of `writable` or `readOnly`. */
  cwd: string;
  /** Directories the command may change, bound at the same path. */
  writable: readonly string[];
  /** Further directories it may read (bound read-only at the same path). */
  readOnly?: readonly string[];
  /**
   * Folders of programs put first on the command's PATH (bound read-only at the same path): a
   * forge task's program, run by its name.
   */
  programDirs?: readonly string[];
  /** Paths inside `writable` that stay read-only (a trial's `.git`); missing ones are skipped. */
  protect?: readonly string[];
  /**
   * Variables on top of the sandbox's own PATH, HOME and TMPDIR. Nothing of the harness's
   * environment is passed otherwise; callers give no secrets here.
   */
  env?: Readonly<Record<string, string>>;
  timeoutMs: number;
  signal?: AbortSignal;
  input?: string;
  /** Overrides the sandbox's output limit for this command. */
  maxOutputBytes?: number;
  /**
   * Overrides limits for this command (an agent host's own process needs more time than a test
   * run, and some runtimes need more memory: `memoryBytes: null` sets no memory limit).
   */
  limits?: Partial<Omit<SandboxLimits, "memoryBytes">> & { memoryBytes?: number | null };
  /** Single files or sockets bound at another path inside (a model endpoint's socket). */
  binds?: readonly { source: string; target: string; writable?: boolean }[];
  /**
   * Lets the command start a sandbox of its own inside this one (Codex's): keeps the one
   * capability a nested user namespace needs when the harness runs as root.
   */
  allowNestedSandbox?: boolean;
  /**
   * A harness-owned directory outside every writable path. The unsandboxed kind makes the
   * command's private HOME and TMPDIR below it; bubblewrap gives them a tmpfs instead.
   */
  privateDir: string;
}

/** Runs commands contained: the one way agent-influenced code is started. */
export interface CommandSandbox {
  readonly kind: SandboxKind;
  /** For reports: `bubblewrap 0.8.0`, or why there is none. */
  readonly description: string;
  readonly limits: Readonly<SandboxLimits>;
  /**
   * Whether a contained command cannot change a file without the file's stat data showing it
   * (its ctime moves): true under bubblewrap with the seccomp filter, false without containment.
   * Only then may a tree a command could write be checked by stat data instead of its content.
   */
  readonly changesShowInStat: boolean;
  run(argv: readonly string[], options: SandboxRunOptions): Promise<SandboxedResult>;
  /**
   * The command line and environment that run `argv` contained, for a caller that must start
   * the process itself (an SDK that spawns its own CLI). `timeoutMs`, `signal`, `input` and
   * the output limit are the caller's to enforce then.
   */
  wrap(argv: readonly string[], options: SandboxRunOptions): Promise<WrappedCommand>;
}

export interface WrappedCommand {
  argv: string[];
  env: Record<string, string>;
  /** Removes what the wrapping made (a private HOME of the unsandboxed kind). */
  dispose(): Promise<void>;
}

/** Whether this machine can contain commands, and if not, what to do about it. */
export type SandboxSupport =
  | {
      available: true;
      bwrap: string;
      prlimit: string;
      version: string;
      /**
       * The seccomp program every command runs under (see seccomp.ts), when the kernel takes it:
       * a file's content then cannot change without its stat data changing.
       */
      seccompFilter?: string;
    }
  | { available: false; reason: string; fix: string };
