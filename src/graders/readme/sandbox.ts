import { realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname } from "node:path";
import type { CommandSandbox, SandboxedResult } from "../../sandbox/index.js";
import { runCommand } from "../../shared/index.js";

/**
 * Runs Node on agent-written code under the permission model: read-only access to the
 * trial root and nothing else (no writes, child processes, workers, addons or WASI),
 * no code generation from strings, the network globals removed, an environment of just
 * PATH and an empty temporary HOME, its own process group and a timeout.
 * Node 20–22.12 spell the switch `--experimental-permission`; 22.13+, 23.5+ and 24+
 * `--permission` (24 no longer accepts the old spelling).
 */
export function permissionFlag(nodeVersion: string): "--permission" | "--experimental-permission" {
  const [major = 0, minor = 0] = nodeVersion.replace(/^v/, "").split(".").map(Number);
  if (major >= 24) return "--permission";
  if (major === 23) return minor >= 5 ? "--permission" : "--experimental-permission";
  if (major === 22) return minor >= 13 ? "--permission" : "--experimental-permission";
  if (major >= 20) return "--experimental-permission";
  throw new Error(`Node ${nodeVersion} has no permission model; Node 20 or newer is required`);
}

/** Deletes the network globals before any user code runs (the permission model does not cover the network before Node 25). */
const NETWORK_LOCKDOWN = `for (const name of ["fetch", "WebSocket", "EventSource", "XMLHttpRequest"]) delete globalThis[name];`;

function supportsImportFlag(nodeVersion: string): boolean {
  const [major = 0, minor = 0] = nodeVersion.replace(/^v/, "").split(".").map(Number);
  return major > 20 || (major === 20 && minor >= 6);
}

/** The Node flags of the sandbox for a given Node version, granting read access to `readRoot` only. */
export function sandboxNodeFlags(nodeVersion: string, readRoot: string): string[] {
  // Node 20 splits --allow-fs-read on commas, which would grant the wrong directories.
  if (readRoot.includes(",") || readRoot.includes("*"))
    throw new Error(`cannot sandbox ${readRoot}: the path contains "," or "*"`);
  const flags = [
    permissionFlag(nodeVersion),
    `--allow-fs-read=${readRoot}`,
    "--no-addons",
    "--disallow-code-generation-from-strings",
    "--no-warnings",
  ];
  if (supportsImportFlag(nodeVersion))
    flags.push(`--import=data:text/javascript,${encodeURIComponent(NETWORK_LOCKDOWN)}`);
  return flags;
}

const versions = new Map<string, Promise<string>>();

/** The version of the Node binary at `execPath` (asked once per binary). */
function nodeVersionOf(execPath: string): Promise<string> {
  if (execPath === process.execPath) return Promise.resolve(process.versions.node);
  let known = versions.get(execPath);
  if (known === undefined) {
    known = runCommand([execPath, "-p", "process.versions.node"], {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "" },
      timeoutMs: 15_000,
    }).then((result) => {
      const version = result.stdout.trim();
      if (result.exitCode !== 0 || !/^\d+\.\d+\.\d+/.test(version))
        throw new Error(`cannot determine the version of ${execPath}: ${result.stderr.trim()}`);
      return version;
    });
    versions.set(execPath, known);
  }
  return known;
}

/** Evidence-friendly argv: no machine-specific binary path, the preload named rather than spelled out. */
export function displaySandboxArgv(argv: readonly string[]): string[] {
  return argv.map((arg, index) => {
    if (index === 0) return "node";
    if (arg.startsWith("--import=data:")) return "--import=<network-globals lockdown>";
    return arg;
  });
}

export interface PermissionModelRun {
  /** Node binary to use (default: the one running the harness). */
  nodeExecutable: string;
  /** Realpath of the trial root: the working directory and the only readable tree. */
  realRoot: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Contains the process (bubblewrap); the permission model is a second wall inside it. */
  sandbox: CommandSandbox;
  /** Harness-owned directory outside the trial (the unsandboxed kind's private HOME goes here). */
  privateDir: string;
  /** Given on stdin. */
  input?: string;
}

/**
 * Runs Node on agent-written code under the permission model, inside the grading sandbox, with
 * the trial mounted read-only: the example can read the package and nothing else, write nothing,
 * start nothing and reach no network.
 */
export async function runPermissionModelNode(
  args: readonly string[],
  run: PermissionModelRun,
): Promise<SandboxedResult> {
  const version = await nodeVersionOf(run.nodeExecutable);
  const nodeInstall =
    run.nodeExecutable === process.execPath
      ? []
      : [dirname(dirname(await realpath(run.nodeExecutable).catch(() => run.nodeExecutable)))];
  return run.sandbox.run(
    [run.nodeExecutable, ...sandboxNodeFlags(version, run.realRoot), ...args],
    {
      cwd: run.realRoot,
      writable: [],
      readOnly: [run.realRoot, ...nodeInstall],
      env: {},
      timeoutMs: run.timeoutMs,
      maxOutputBytes: 64 * 1024,
      privateDir: run.privateDir,
      ...(run.signal === undefined ? {} : { signal: run.signal }),
      ...(run.input === undefined ? {} : { input: run.input }),
    },
  );
}
