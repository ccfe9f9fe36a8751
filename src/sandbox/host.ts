// What the sandbox needs to know about this machine: where bwrap and prlimit are, the layout of
// the system directories it mirrors, and whether a sandbox really starts here (asked once).
import { constants, fstatSync, openSync, statSync } from "node:fs";
import { access, lstat, mkdtemp, readlink, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { runCommand } from "../shared/index.js";
import { bwrapArgs, type HostLayout, type SystemEntry } from "./bwrap-args.js";
import { statEvidenceFilter } from "./seccomp.js";
import type { SandboxSupport } from "./types.js";

const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** Variable that names the bwrap binary to use (also how tests make the sandbox unavailable). */
const BWRAP_VARIABLE = "HARNESSLAB_BWRAP";

async function findProgram(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]) {
    const candidate = join(dir, name);
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return undefined;
}

async function systemEntries(): Promise<SystemEntry[]> {
  const entries: SystemEntry[] = [];
  for (const path of SYSTEM_DIRS) {
    const stats = await lstat(path).catch(() => undefined);
    if (stats?.isSymbolicLink())
      entries.push({ path, kind: "symlink", target: await readlink(path) });
    else if (stats?.isDirectory()) entries.push({ path, kind: "dir" });
  }
  return entries;
}

/** The Node.js prefix (`…/bin/node` → `…`) when it is not under a system directory. */
async function nodePrefix(system: readonly SystemEntry[]): Promise<string | undefined> {
  const node = await realpath(process.execPath).catch(() => process.execPath);
  const prefix = dirname(dirname(node));
  const underSystem = system.some(
    (entry) => entry.kind === "dir" && (node === entry.path || node.startsWith(`${entry.path}/`)),
  );
  return underSystem ? undefined : prefix;
}

let layout: Promise<HostLayout> | undefined;

/** The host's layout as the sandbox mirrors it (read once per process). */
export function inspectHost(): Promise<HostLayout> {
  layout ??= (async () => {
    const system = await systemEntries();
    const prefix = await nodePrefix(system);
    return {
      system,
      ...(prefix === undefined ? {} : { nodePrefix: prefix }),
      path: [dirname(process.execPath), ...(process.env.PATH ?? "").split(delimiter)].join(":"),
    };
  })();
  return layout;
}

const probes = new Map<string, Promise<SandboxSupport>>();

const INSTALL_FIX =
  "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or run without containment at your own risk with --unsafe-no-sandbox";

/**
 * Whether commands can be contained on this machine: bwrap and prlimit are found, and a probe
 * sandbox built exactly as real ones are starts and runs `true`. The answer says what to do when
 * they cannot (install bubblewrap, allow user namespaces, use Linux).
 */
export function detectSandbox(): Promise<SandboxSupport> {
  const key = `${process.platform}|${process.env[BWRAP_VARIABLE] ?? ""}`;
  let known = probes.get(key);
  if (known === undefined) {
    known = probe();
    probes.set(key, known);
  }
  return known;
}

async function probe(): Promise<SandboxSupport> {
  if (process.platform !== "linux")
    return {
      available: false,
      reason: `the OS sandbox (bubblewrap) needs Linux; this is ${process.platform}`,
      fix: "run harnesslab inside a Linux VM or container, or run without containment at your own risk with --unsafe-no-sandbox",
    };
  const configured = process.env[BWRAP_VARIABLE]?.trim();
  const bwrap = configured ? configured : await findProgram("bwrap");
  if (bwrap === undefined)
    return { available: false, reason: "bubblewrap (bwrap) is not installed", fix: INSTALL_FIX };
  const prlimit = await findProgram("prlimit");
  if (prlimit === undefined)
    return {
      available: false,
      reason: "prlimit (util-linux) is not installed; it sets the sandbox's resource limits",
      fix: "install util-linux (Debian/Ubuntu: apt-get install util-linux)",
    };
  const version = await runCommand([bwrap, "--version"], {
    cwd: "/",
    env: { PATH: "/usr/bin:/bin" },
    timeoutMs: 15_000,
  });
  if (version.spawnError !== undefined || version.exitCode !== 0)
    return {
      available: false,
      reason: `${bwrap} cannot be run (${version.spawnError ?? version.stderr.trim() ?? `exit ${version.exitCode}`})`,
      fix: INSTALL_FIX,
    };
  const host = await inspectHost();
  const args = bwrapArgs({
    layout: host,
    cwd: "/",
    writable: [],
    readOnly: [],
    protect: [],
    hidden: [],
    tmpBytes: 1024 * 1024,
  });
  const start = (filter?: string) =>
    runCommand(
      withSeccomp(filter, [bwrap, ...args, ...(filter ? SECCOMP_ARGS : []), "--", "true"]),
      {
        cwd: "/",
        env: { PATH: "/usr/bin:/bin" },
        timeoutMs: 15_000,
      },
    );
  const started = await start();
  if (started.exitCode !== 0) {
    const said = started.spawnError ?? started.stderr.trim().split("\n").slice(-1)[0] ?? "";
    const namespaces = /namespace|permission|not permitted|uid map|setting up uid/i.test(said);
    return {
      available: false,
      reason: `bubblewrap cannot start a sandbox here: ${said || `exit ${started.exitCode}`}`,
      fix: namespaces
        ? "allow unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+ also kernel.apparmor_restrict_unprivileged_userns=0), or run inside a VM or container that allows them; or run without containment at your own risk with --unsafe-no-sandbox"
        : INSTALL_FIX,
    };
  }
  const filter = await writeSeccompFilter();
  // A kernel without seccomp filters still contains commands; trees are then checked by content.
  const filtered = filter !== undefined && (await start(filter)).exitCode === 0;
  return {
    available: true,
    bwrap,
    prlimit,
    version: version.stdout.trim() || "bubblewrap",
    ...(filtered ? { seccompFilter: filter } : {}),
  };
}

/** bwrap reads its seccomp program from this descriptor, which `withSeccomp` opens. */
const SECCOMP_FD = 3;
export const SECCOMP_ARGS: readonly string[] = ["--seccomp", String(SECCOMP_FD)];

/**
 * `argv` started with the filter file open as descriptor 3, by a shell, so that a caller that
 * spawns the command itself (an SDK) needs no descriptor of its own to pass.
 */
export function withSeccomp(filter: string | undefined, argv: readonly string[]): string[] {
  if (filter === undefined) return [...argv];
  // The shell runs outside the sandbox: bash's SHELLOPTS (xtrace, with a PS4 of its choosing)
  // would run code in it. Run as `sh -c`, neither bash nor dash reads BASH_ENV or ENV.
  return [
    "/usr/bin/env",
    ...SHELL_STARTUP_VARIABLES.flatMap((name) => ["-u", name]),
    "/bin/sh",
    "-c",
    `exec "$@" ${SECCOMP_FD}<"$0"`,
    filter,
    ...argv,
  ];
}

const SHELL_STARTUP_VARIABLES = ["SHELLOPTS", "BASHOPTS"];

/**
 * The filter, as a path the shell in front of each command can open: written once per process to
 * a file that is opened and then removed at once, so nothing stays on disk whatever ends the
 * process; the path is this process's descriptor for it under /proc.
 */
async function writeSeccompFilter(): Promise<string | undefined> {
  const program = statEvidenceFilter(process.arch);
  if (program === undefined) return undefined;
  let dir: string | undefined;
  try {
    dir = await mkdtemp(join(tmpdir(), "harnesslab-seccomp-"));
    const file = join(dir, "filter.bpf");
    await writeFile(file, program, { mode: 0o400 });
    // Kept open for the process's life (a number, so no garbage collection closes it).
    const descriptor = openSync(file, "r");
    const path = `/proc/${process.pid}/fd/${descriptor}`;
    // The path must lead to this very file (a /proc of another pid namespace would not).
    const [held, named] = [fstatSync(descriptor), statSync(path)];
    return held.dev === named.dev && held.ino === named.ino ? path : undefined;
  } catch {
    // No temporary directory, no /proc: commands are contained without the filter.
    return undefined;
  } finally {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }
}
