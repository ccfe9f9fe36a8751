// Finding the Codex CLI the SDK will run, and the pre-flight that runs it before a thread
// starts: `codex --version` (the binary runs at all) and `codex login status` (a login exists).
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { runCommand } from "../../shared/index.js";
import type { InfraReason } from "../receipt.js";
import { installedPackageDir } from "../sdk/common.js";

const SDK_PACKAGE = "@openai/codex-sdk";
const CLI_PACKAGE = "@openai/codex";

/** The per-platform packages the CLI package depends on (as the SDK looks them up). */
const PLATFORM_PACKAGES: Readonly<Record<string, { triple: string; pkg: string }>> = {
  "linux-x64": { triple: "x86_64-unknown-linux-musl", pkg: "@openai/codex-linux-x64" },
  "linux-arm64": { triple: "aarch64-unknown-linux-musl", pkg: "@openai/codex-linux-arm64" },
  "darwin-x64": { triple: "x86_64-apple-darwin", pkg: "@openai/codex-darwin-x64" },
  "darwin-arm64": { triple: "aarch64-apple-darwin", pkg: "@openai/codex-darwin-arm64" },
  "win32-x64": { triple: "x86_64-pc-windows-msvc", pkg: "@openai/codex-win32-x64" },
  "win32-arm64": { triple: "aarch64-pc-windows-msvc", pkg: "@openai/codex-win32-arm64" },
};

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export type LocatedBinary = { ok: true; path: string } | { ok: false; error: string };

/**
 * The native Codex binary the installed SDK would run, found the way the SDK finds it
 * (SDK → `@openai/codex` → its platform package → `vendor/<triple>/bin/codex`).
 */
export function locateCodexBinary(): LocatedBinary {
  const platform = PLATFORM_PACKAGES[`${process.platform}-${process.arch}`];
  if (!platform) {
    return { ok: false, error: `Codex has no binary for ${process.platform}-${process.arch}` };
  }
  const name = process.platform === "win32" ? "codex.exe" : "codex";
  try {
    const sdkDir = installedPackageDir(SDK_PACKAGE);
    if (sdkDir === null) {
      return { ok: false, error: `${SDK_PACKAGE} is not installed` };
    }
    const cliJson = createRequire(join(sdkDir, "package.json")).resolve(
      `${CLI_PACKAGE}/package.json`,
    );
    const platformJson = createRequire(cliJson).resolve(`${platform.pkg}/package.json`);
    const root = join(dirname(platformJson), "vendor", platform.triple);
    for (const candidate of [join(root, "bin", name), join(root, "codex", name)]) {
      if (isFile(candidate)) return { ok: true, path: candidate };
    }
    return {
      ok: false,
      error: `the Codex CLI binary is missing under ${root}; reinstall ${CLI_PACKAGE} with its optional dependencies`,
    };
  } catch (error) {
    return {
      ok: false,
      error: `cannot find the Codex CLI binary (${CLI_PACKAGE} and ${platform.pkg} must be installed next to ${SDK_PACKAGE}): ${(error as Error).message}`,
    };
  }
}

export type PreflightResult =
  | { ok: true; version: string | null; loggedIn: boolean; loginText: string }
  | { ok: false; infraReason: InfraReason; error: string };

/**
 * Runs the binary twice with the run's own environment (isolated CODEX_HOME): `--version` and
 * `login status`. A binary that cannot start is `binary_missing`/`spawn_failed`; the login state
 * is reported, not judged (an API key or an endpoint may stand in for a login).
 */
export async function preflight(
  binary: string,
  env: Record<string, string>,
  cwd: string,
  signal?: AbortSignal,
): Promise<PreflightResult> {
  if (!existsSync(binary)) {
    return { ok: false, infraReason: "binary_missing", error: `no Codex binary at ${binary}` };
  }
  const options = {
    cwd,
    env,
    // Generous: a loaded machine starts a large static binary slowly, and the run's own
    // deadline (the signal) still bounds it.
    timeoutMs: 30_000,
    maxOutputBytes: 16 * 1024,
    ...(signal ? { signal } : {}),
  };
  // One after the other: both set up the same fresh CODEX_HOME on first start, and a
  // `--version` racing `login status` there once answered without its version.
  const version = await runCommand([binary, "--version"], options);
  const login = await runCommand([binary, "login", "status"], options);
  for (const result of [version, login]) {
    if (result.spawnError !== undefined) {
      const missing = /ENOENT/.test(result.spawnError);
      return {
        ok: false,
        infraReason: missing ? "binary_missing" : "spawn_failed",
        error: `cannot run the Codex binary ${binary}: ${result.spawnError}`,
      };
    }
    if (result.timedOut) {
      return {
        ok: false,
        infraReason: "spawn_failed",
        error: `\`${result.argv.slice(1).join(" ")}\` of the Codex binary did not answer within 30 s`,
      };
    }
  }
  if (version.exitCode !== 0) {
    return {
      ok: false,
      infraReason: "spawn_failed",
      error: `\`codex --version\` exited with ${version.exitCode ?? version.signal}: ${version.stderr.trim().slice(-500)}`,
    };
  }
  const match =
    /codex-cli (\d+\.\d+\.\d+[\w.+-]*)/.exec(`${version.stdout}\n${version.stderr}`) ??
    /(\d+\.\d+\.\d+[\w.+-]*)/.exec(version.stdout);
  const loginText = `${login.stdout}\n${login.stderr}`
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("WARNING:"))
    .join(" ");
  return {
    ok: true,
    version: match?.[1] ?? null,
    loggedIn: login.exitCode === 0 && !/not logged in/i.test(loginText),
    loginText,
  };
}
