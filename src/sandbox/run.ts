// Running one command contained (bubblewrap) or, when the user chose so, uncontained.
import { constants as fsConstants, statSync } from "node:fs";
import { access, mkdtemp, rm } from "node:fs/promises";
import { devNull } from "node:os";
import { delimiter, join } from "node:path";
import { type CommandResult, isPathInside, QUIET_NPM_ENV, runCommand } from "../shared/index.js";
import { bwrapArgs, SANDBOX_HOME, SANDBOX_TMP, sandboxPath } from "./bwrap-args.js";
import { inspectHost, SECCOMP_ARGS, withSeccomp } from "./host.js";
import {
  type CommandSandbox,
  DEFAULT_SANDBOX_LIMITS,
  type SandboxedResult,
  type SandboxLimitHit,
  type SandboxLimits,
  type SandboxRunOptions,
  type WrappedCommand,
} from "./types.js";

export interface CreateSandboxOptions {
  /**
   * Host paths no command may see even if they lie inside a directory the sandbox mirrors
   * read-only (the run's --out folder, the fixtures, the harness's own install, the user's home).
   */
  hidden?: readonly string[];
  limits?: Partial<SandboxLimits>;
}

/** How programs say fork failed, which the process limit shows as. */
const FORK_FAILED =
  /Cannot fork|\b(?:fork|spawn|clone)\b.*(?:Resource temporarily unavailable|EAGAIN)|\bspawn\b.*\bEAGAIN\b/i;

const SIGXCPU_STATUS = 128 + 24;
const SIGXFSZ_STATUS = 128 + 25;

/** Lines by which a program says it ran out of memory (the memory limit shows this way). */
const OUT_OF_MEMORY =
  /^.*(?:heap out of memory|allocation failed|Cannot allocate memory|std::bad_alloc|out of memory|ENOMEM).*$/im;

/** Which limits a finished command ran into, read from how it ended. */
export function limitsHit(
  result: CommandResult,
  limits: Omit<SandboxLimits, "memoryBytes"> & { memoryBytes: number | null },
): SandboxLimitHit[] {
  const hits: SandboxLimitHit[] = [];
  if (result.timedOut) hits.push({ limit: "wall-time", detail: "killed at the time limit" });
  const status = result.exitCode;
  if (status === SIGXCPU_STATUS || result.signal === "SIGXCPU" || /\bSIGXCPU\b/.test(result.stderr))
    hits.push({
      limit: "cpu-time",
      detail: `a process used its ${limits.cpuSeconds} s of CPU time and got SIGXCPU`,
    });
  if (status === SIGXFSZ_STATUS || result.signal === "SIGXFSZ" || /\bSIGXFSZ\b/.test(result.stderr))
    hits.push({
      limit: "file-size",
      detail: `a process wrote a file past ${limits.fileSizeBytes} bytes and got SIGXFSZ`,
    });
  if (status !== 0 && !result.timedOut) {
    const line = OUT_OF_MEMORY.exec(result.stderr)?.[0]?.trim();
    if (line !== undefined)
      hits.push({
        limit: "memory",
        detail: `out of memory (${limits.memoryBytes === null ? "no memory limit" : `limit ${limits.memoryBytes} bytes of writable memory per process`}): ${line.slice(0, 200)}`,
      });
  }
  if (status !== 0 && !result.timedOut && FORK_FAILED.test(result.stderr))
    hits.push({
      limit: "processes",
      detail: `a process could not start another: the sandbox allows ${limits.processes} processes at once`,
    });
  if (result.outputTruncated)
    hits.push({
      limit: "output",
      detail: `output past ${limits.outputBytes} bytes per stream was dropped (the tail is kept)`,
    });
  return hits;
}

/**
 * Why `program` cannot start inside, found before it runs, or null when it may. A program named
 * without a slash is looked up on the sandbox's PATH, and an absolute one outside every
 * writable directory is checked where it lies: the sandbox sees those directories exactly as
 * the host does. Nothing else is judged beforehand (a relative path, or one the command may
 * change, is the command's own business and fails as a command fails). What the command prints
 * never decides it: code that runs inside could print bubblewrap's own "execvp" words to turn
 * its failure into a program that "could not start".
 */
async function unstartable(
  program: string,
  path: string,
  writable: readonly string[],
): Promise<string | null> {
  const changeable = (file: string) => writable.some((dir) => isPathInside(dir, file));
  const executable = (file: string) =>
    access(file, fsConstants.X_OK).then(
      () => true,
      () => false,
    );
  if (!program.includes("/")) {
    const dirs = path.split(":").filter((dir) => dir.startsWith("/"));
    for (const dir of dirs) {
      if (changeable(dir) || (await executable(join(dir, program)))) return null;
    }
    return `${program}: not found on the sandbox's PATH (${dirs.join(":")})`;
  }
  if (!program.startsWith("/") || changeable(program)) return null;
  return (await executable(program)) ? null : `${program}: no such executable file`;
}

/** The limits of one command: the sandbox's, with the command's own overrides. */
function effectiveLimits(
  base: SandboxLimits,
  run: SandboxRunOptions,
): Omit<SandboxLimits, "memoryBytes"> & { memoryBytes: number | null } {
  const { memoryBytes, ...rest } = run.limits ?? {};
  return {
    ...base,
    ...rest,
    memoryBytes: memoryBytes === undefined ? base.memoryBytes : memoryBytes,
    outputBytes: run.maxOutputBytes ?? rest.outputBytes ?? base.outputBytes,
  };
}

/** A sandbox that contains every command with bubblewrap, limited by prlimit. */
export function createBwrapSandbox(
  programs: { bwrap: string; prlimit: string; version: string; seccompFilter?: string },
  options: CreateSandboxOptions = {},
): CommandSandbox {
  const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
  const hidden = [...(options.hidden ?? [])];
  // What each hidden path is decides how it is covered; one that does not exist yet (an --out
  // made later) is a directory.
  const hiddenFiles = hidden.filter((path) => {
    try {
      return !statSync(path).isDirectory();
    } catch {
      return false;
    }
  });
  const wrap = async (argv: readonly string[], run: SandboxRunOptions): Promise<WrappedCommand> => {
    if (argv.length === 0) throw new Error("sandbox: empty argv");
    const layout = await inspectHost();
    const own = effectiveLimits(limits, run);
    const plan = {
      layout,
      cwd: run.cwd,
      writable: run.writable,
      readOnly: [...(run.readOnly ?? []), ...(run.programDirs ?? [])],
      protect: run.protect ?? [],
      hidden,
      hiddenFiles,
      tmpBytes: own.tmpBytes,
      ...(run.binds ? { binds: run.binds } : {}),
      ...(run.allowNestedSandbox ? { allowNestedSandbox: true } : {}),
      asRoot: process.getuid?.() === 0,
    };
    const env = {
      ...run.env,
      PATH: [...(run.programDirs ?? []), sandboxPath(plan)].join(":"),
      HOME: SANDBOX_HOME,
      TMPDIR: SANDBOX_TMP,
    };
    const filter = programs.seccompFilter;
    return {
      argv: withSeccomp(filter, [
        programs.prlimit,
        `--cpu=${own.cpuSeconds}:${own.cpuSeconds + 2}`,
        ...(own.memoryBytes === null ? [] : [`--data=${own.memoryBytes}`]),
        `--fsize=${own.fileSizeBytes}`,
        "--core=0",
        "--",
        programs.bwrap,
        ...bwrapArgs(plan),
        ...(filter === undefined ? [] : SECCOMP_ARGS),
        "--",
        // Set inside: a process limit set before bwrap would also cap the user namespace bwrap
        // makes, and with it every process of the harness's user on this machine.
        programs.prlimit,
        `--nproc=${own.processes}`,
        "--",
        ...argv,
      ]),
      env,
      dispose: async () => {},
    };
  };
  return {
    kind: "bwrap",
    // Recorded with the run: whether its grading copies could be put back by their stat data.
    description: `${programs.version}${programs.seccompFilter === undefined ? "" : " with its seccomp filter"}`,
    limits,
    changesShowInStat: programs.seccompFilter !== undefined,
    wrap,
    async run(argv: readonly string[], run: SandboxRunOptions): Promise<SandboxedResult> {
      const wrapped = await wrap(argv, run);
      const own = effectiveLimits(limits, run);
      const cannotStart = await unstartable(
        argv[0] as string,
        wrapped.env.PATH ?? "",
        run.writable,
      );
      if (cannotStart !== null) {
        const result: CommandResult = {
          argv: [...argv],
          exitCode: null,
          signal: null,
          stdout: "",
          stderr: "",
          timedOut: false,
          aborted: false,
          durationMs: 0,
          spawnError: cannotStart,
        };
        return { ...result, sandbox: "bwrap", limitsHit: [] };
      }
      const [program, ...rest] = wrapped.argv;
      const result = await runCommand([program as string, ...rest], {
        cwd: run.cwd,
        env: wrapped.env,
        // bwrap ignores SIGTERM; SIGKILL takes it and, with it, every process of the sandbox.
        stop: "kill",
        timeoutMs: run.timeoutMs,
        maxOutputBytes: own.outputBytes,
        ...(run.input === undefined ? {} : { input: run.input }),
        ...(run.signal === undefined ? {} : { signal: run.signal }),
      });
      const shown: CommandResult = { ...result, argv: [...argv] };
      return { ...shown, sandbox: "bwrap", limitsHit: limitsHit(shown, own) };
    },
  };
}

/**
 * No containment (--unsafe-no-sandbox): a plain child process in its own process group with the
 * given environment, a private HOME and TMPDIR, a timeout and an output cap, and nothing more.
 */
export function createUnsandboxed(
  options: Pick<CreateSandboxOptions, "limits"> = {},
): CommandSandbox {
  const limits: SandboxLimits = { ...DEFAULT_SANDBOX_LIMITS, ...options.limits };
  const wrap = async (argv: readonly string[], run: SandboxRunOptions): Promise<WrappedCommand> => {
    const home = await mkdtemp(join(run.privateDir, "home-"));
    return {
      argv: [...argv],
      env: {
        ...run.env,
        PATH: [...(run.programDirs ?? []), process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"].join(
          delimiter,
        ),
        HOME: home,
        TMPDIR: home,
      },
      dispose: () => rm(home, { recursive: true, force: true }).catch(() => {}),
    };
  };
  return {
    kind: "none",
    description:
      "none (--unsafe-no-sandbox): commands run with the harness's user, files and network",
    limits,
    changesShowInStat: false,
    wrap,
    async run(argv: readonly string[], run: SandboxRunOptions): Promise<SandboxedResult> {
      const wrapped = await wrap(argv, run);
      try {
        const own = effectiveLimits(limits, run);
        const result = await runCommand(wrapped.argv, {
          cwd: run.cwd,
          env: wrapped.env,
          timeoutMs: run.timeoutMs,
          maxOutputBytes: own.outputBytes,
          ...(run.input === undefined ? {} : { input: run.input }),
          ...(run.signal === undefined ? {} : { signal: run.signal }),
        });
        return { ...result, sandbox: "none", limitsHit: limitsHit(result, own) };
      } finally {
        await wrapped.dispose();
      }
    },
  };
}

/**
 * The variables a contained command gets besides PATH, HOME and TMPDIR (which the sandbox sets):
 * the host's locale, no system or user git configuration and no git prompts, and an npm that
 * stays quiet and offline. Built from constants, never from the harness's environment, so no
 * secret can reach a command through it.
 */
export function commandEnvironment(
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["LANG", "LC_ALL"]) {
    const value = process.env[key];
    if (value !== undefined && /^[\w.@-]*$/.test(value)) env[key] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: devNull,
    GIT_TERMINAL_PROMPT: "0",
    ...QUIET_NPM_ENV,
    // The environment outranks a project's .npmrc: a trial's `script-shell=/bin/true` must not
    // turn `npm test` into a command that passes without running anything.
    ...(process.platform === "win32" ? {} : { npm_config_script_shell: "/bin/sh" }),
    // npm's global config is covered inside (it may hold tokens) and unreadable there; an npm
    // that tried to read it would fail.
    npm_config_globalconfig: devNull,
    ...extra,
  };
}
