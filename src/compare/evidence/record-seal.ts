// Trial records only the harness can have written. Each run has a secret key, kept outside --out
// (in the user's state directory, which no sandboxed command can see); every finished trial's
// metrics.json carries an HMAC over its own content and the digest of every file of its folder.
// --resume and regrade accept a record only when its seal verifies with the run's key: a
// metrics.json planted in --out by code the agent ran cannot be made to, nor can a changed
// patch.diff or response.txt slip into a regrade.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { lstat, mkdir, readdir, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import type { RecordSeal, TrialMetrics } from "../../artifacts/index.js";
import { canonicalJson } from "../../ir/index.js";
import { readRegularFile } from "../../shared/index.js";
import { REGRADE_WORKSPACE_MARKER, WORKSPACE_MARKER } from "../run/workspace-marker.js";

/** Variable naming the directory that holds run keys (default: the user's state directory). */
export const STATE_DIR_VARIABLE = "HARNESSLAB_STATE_DIR";

/** Where run keys are kept: $HARNESSLAB_STATE_DIR, $XDG_STATE_HOME/harnesslab, or the platform's default. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[STATE_DIR_VARIABLE]?.trim();
  if (configured) return configured;
  if (process.platform === "win32")
    return join(env.LOCALAPPDATA ?? join(homedir(), "AppData", "Local"), "harnesslab");
  const xdg = env.XDG_STATE_HOME?.trim();
  return join(xdg ? xdg : join(homedir(), ".local", "state"), "harnesslab");
}

const RUN_ID = /^run_[0-9a-f]{32}$/;

export interface RunKey {
  runId: string;
  key: Buffer;
  /** The file it is kept in (named in messages when it is missing). */
  path: string;
}

function runKeyPath(stateDir: string, runId: string): string {
  return join(stateDir, "run-keys", `${runId}.key`);
}

/** A new run id and key, the key written (owner-only) before any record is sealed with it. */
export async function createRunKey(stateDir: string): Promise<RunKey> {
  const runId = `run_${randomBytes(16).toString("hex")}`;
  const key = randomBytes(32);
  const path = runKeyPath(stateDir, runId);
  await mkdir(join(stateDir, "run-keys"), { recursive: true, mode: 0o700 });
  await writeFile(path, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  return { runId, key, path };
}

/** The key of an earlier run, or why it cannot be used. */
export async function loadRunKey(
  stateDir: string,
  runId: string | undefined,
): Promise<{ ok: true; key: RunKey } | { ok: false; reason: string }> {
  if (runId === undefined || !RUN_ID.test(runId))
    return {
      ok: false,
      reason: "the run recorded no run id (it was written before records were sealed)",
    };
  const path = runKeyPath(stateDir, runId);
  const read = await readRegularFile(path, 1024);
  if (!read.ok)
    return {
      ok: false,
      reason: `the run's key ${path} ${read.error === "no such file" ? "is not on this machine" : read.error} (copy it from the machine that ran the experiment, or set ${STATE_DIR_VARIABLE})`,
    };
  const hex = read.value.toString("utf8").trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) return { ok: false, reason: `${path} is not a run key` };
  return { ok: true, key: { runId, key: Buffer.from(hex, "hex"), path } };
}

/** Files of a trial folder that are not part of its record (written later, or by the lock-holder). */
export function outsideRecord(name: string): boolean {
  return (
    name === "metrics.json" ||
    name === WORKSPACE_MARKER ||
    name === REGRADE_WORKSPACE_MARKER ||
    /^validation\.regrade-\d+\.json$/.test(name) ||
    // A half-written metrics.json of a killed process (see shared/atomic-file.ts).
    /^\..+\.\d+\.[0-9a-f]{12}\.partial$/.test(name)
  );
}

/** `relative path → sha256 hex` of every file in a trial folder that belongs to its record. */
async function recordFiles(dir: string, prefix = ""): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const entries = await readdir(join(dir, prefix), { withFileTypes: true });
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (prefix === "" && outsideRecord(entry.name)) continue;
    if (entry.isDirectory()) Object.assign(files, await recordFiles(dir, relative));
    else {
      // Anything but a regular file (a link, a FIFO) is listed without being opened, and
      // makes the record fail to verify.
      const stats = await lstat(join(dir, relative));
      if (!stats.isFile()) files[relative] = `not-a-file:${stats.mode}`;
      else {
        const read = await readRegularFile(join(dir, relative), Number.MAX_SAFE_INTEGER);
        files[relative] = read.ok
          ? createHash("sha256").update(read.value).digest("hex")
          : `unreadable:${read.error}`;
      }
    }
  }
  return files;
}

function mac(
  key: Buffer,
  runId: string,
  metrics: TrialMetrics,
  files: Record<string, string>,
): string {
  const { seal: _seal, ...unsealed } = metrics;
  return createHmac("sha256", key)
    .update(canonicalJson({ runId, metrics: unsealed, files }))
    .digest("hex");
}

/** The seal of a finished trial: call it after every other file of the folder is written. */
export async function sealRecord(
  dir: string,
  metrics: TrialMetrics,
  key: RunKey,
): Promise<RecordSeal> {
  const files = await recordFiles(dir);
  return {
    algorithm: "hmac-sha256",
    runId: key.runId,
    files,
    mac: mac(key.key, key.runId, metrics, files),
  };
}

export type SealCheck = { ok: true } | { ok: false; reason: string };

/**
 * Whether a trial's record is the one the harness wrote: its seal verifies with the run's key,
 * over its metrics and every file of its folder. The reason names what does not match.
 */
export async function verifyRecord(
  dir: string,
  metrics: TrialMetrics,
  key: RunKey | undefined,
): Promise<SealCheck> {
  const seal = metrics.seal;
  if (seal === undefined) return { ok: false, reason: "it carries no seal" };
  if (key === undefined) return { ok: false, reason: "the run's key is not available" };
  if (seal.runId !== key.runId)
    return { ok: false, reason: `it is sealed for another run (${seal.runId})` };
  const files = await recordFiles(dir);
  const expected = Buffer.from(mac(key.key, key.runId, metrics, files), "hex");
  const given = Buffer.from(/^[0-9a-f]{64}$/.test(seal.mac) ? seal.mac : "00".repeat(32), "hex");
  if (expected.length === given.length && timingSafeEqual(expected, given)) return { ok: true };
  const changed = [
    ...Object.keys(files).filter((name) => seal.files[name] !== files[name]),
    ...Object.keys(seal.files).filter((name) => !(name in files)),
  ];
  return {
    ok: false,
    reason:
      changed.length > 0
        ? `its files differ from what the harness wrote (${[...new Set(changed)].slice(0, 5).join(", ")})`
        : "its seal does not match (metrics.json was not written by this run)",
  };
}
