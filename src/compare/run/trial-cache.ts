// The trial cache (`harness ci --cache`): the finished trials of a setup that does not change
// between runs (a pull request's base) kept by everything they depended on, so that the next run
// of that setup on that task takes them instead of paying for them again. An entry is a trial's
// whole folder with a seal made with the cache's key (a secret kept outside the cache, the same
// on every CI machine) over its files, its metrics and its own name, which says its content key
// and trial number: an entry that does not verify (changed, planted, copied under another name,
// moved under another content key) is ignored and its trial runs. A trial taken from the cache is
// copied into --out, says so in its metrics (`cachedFrom`) and is sealed with the run's own key
// like any other record.
import { createHash, randomBytes } from "node:crypto";
import { cp, lstat, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type RunInputs, type TrialMetrics, trialMetricsSchema } from "../../artifacts/index.js";
import { canonicalJson, sha256Hex } from "../../ir/index.js";
import { readRegularFile, readValidJsonFile } from "../../shared/index.js";
import { outsideRecord, type RunKey, sealRecord, verifyRecord } from "../evidence/record-seal.js";
import type { AgentSpec, Experiment, RuntimeSpec, TrialJob } from "../experiment.js";
import { trialArtifactDir } from "./plan.js";

/** The variable holding the cache's secret (CI keeps it among its secrets). */
export const CACHE_KEY_VARIABLE = "HARNESSLAB_CACHE_KEY";

/** The folder under the cache directory that holds this layout's entries. */
const LAYOUT = "harnesslab-trials-v1";

/** The least a secret in HARNESSLAB_CACHE_KEY may be: a guessable one would let anyone seal entries. */
const MIN_SECRET_LENGTH = 32;

export interface TrialCache {
  /** Absolute path of the cache directory (CI restores and saves it between runs). */
  dir: string;
  /** The variants whose trials are taken from and kept in the cache (`harness ci`: the base). */
  variants: readonly string[];
  /** The secret entries are sealed with. */
  key: Buffer;
}

export class TrialCacheKeyError extends Error {}

/**
 * The cache's key: derived from $HARNESSLAB_CACHE_KEY when it is set (the same secret on every
 * machine, so entries written on one verify on the next), otherwise a key kept in the state
 * directory (entries then verify only on this machine). Returns where it came from.
 */
export async function loadTrialCacheKey(
  env: NodeJS.ProcessEnv,
  stateDir: string,
): Promise<{ key: Buffer; source: string }> {
  const secret = env[CACHE_KEY_VARIABLE];
  if (secret !== undefined && secret !== "") {
    if (secret.length < MIN_SECRET_LENGTH)
      throw new TrialCacheKeyError(
        `${CACHE_KEY_VARIABLE} holds ${secret.length} characters; use a random secret of at least ${MIN_SECRET_LENGTH} (e.g. the output of \`openssl rand -hex 32\`)`,
      );
    return {
      key: createHash("sha256").update(`harnesslab trial cache\0${secret}`).digest(),
      source: `$${CACHE_KEY_VARIABLE}`,
    };
  }
  const path = join(stateDir, "trial-cache.key");
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeFile(path, `${randomBytes(32).toString("hex")}\n`, { mode: 0o600, flag: "wx" }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    },
  );
  const read = await readRegularFile(path, 1024);
  const hex = read.ok ? read.value.toString("utf8").trim() : "";
  if (!/^[0-9a-f]{64}$/.test(hex))
    throw new TrialCacheKeyError(
      `${path} is not a trial cache key (${read.ok ? "not 64 hex digits" : read.error}); remove it to make a new one`,
    );
  return { key: Buffer.from(hex, "hex"), source: path };
}

/** What a variant's trial on a task depended on: trials with the same content key are draws of the same thing. */
export interface TrialContent {
  harnesslabVersion: string;
  /** The variant's `.harness` files and component sources (wherever they lie), and the revision they resolve to. */
  setupHash: string;
  revisionId: string;
  /** The scripted agent's module folder or the oracle patch (null for a real host). */
  agentHash: string | null;
  runtime: RuntimeSpec;
  /** The task as the run recorded it: fixture, prompt, forge seed, expected files, graders. */
  task: RunInputs["tasks"][string];
  containment: string;
  diskBudgetBytes: number;
  forge: unknown;
}

/**
 * What a variant's agent is made of: for a scripted module, every file of its folder (a module
 * imports its neighbours; `node_modules` and hidden folders aside), for an oracle its patch;
 * null for a real host.
 */
export async function agentContentHash(agent: AgentSpec | undefined): Promise<string | null> {
  const digest = async (path: string) =>
    createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
  if (agent?.kind === "oracle") return `sha256:${await digest(agent.patchFile)}`;
  if (agent?.kind !== "module") return agent === undefined ? null : agent.kind;
  const folder = dirname(agent.modulePath);
  const files: Array<[string, string]> = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(join(folder, relative), { withFileTypes: true });
    for (const entry of entries) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.push([path, await digest(join(folder, path))]);
    }
  };
  await walk("");
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `sha256:${sha256Hex(canonicalJson({ module: basename(agent.modulePath), files }))}`;
}

/** The content key of a trial (hex sha256 of what it depended on). */
export function trialContentKey(content: TrialContent): string {
  return sha256Hex(canonicalJson({ cache: LAYOUT, ...content }));
}

/**
 * The record key an entry is sealed with: it names the entry, so an entry moved under another
 * content key or copied under another name does not verify.
 */
function entryKey(cache: TrialCache, contentKey: string, name: string): RunKey {
  return { runId: `cache:${contentKey}/${name}`, key: cache.key, path: cache.dir };
}

/** An entry's name: the trial number it ran as first (a scripted agent may depend on it), then where it came from. */
function entryName(trial: number, runId: string, variant: string, task: string): string {
  return `t${String(trial).padStart(3, "0")}-${runId}-${variant}-${task}`
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .slice(0, 200);
}

const trialPrefix = (trial: number) => `t${String(trial).padStart(3, "0")}-`;

/** An entry the cache held but the run did not take. */
interface IgnoredEntry {
  /** `<content key>/<entry>`, relative to the cache's layout folder. */
  entry: string;
  reason: string;
}

export interface CacheTake {
  taken: Map<number, TrialMetrics>;
  ignored: IgnoredEntry[];
}

const keyDir = (cache: TrialCache, contentKey: string) => join(cache.dir, LAYOUT, contentKey);

/**
 * Why the cache's own folders for `contentKey` cannot be used (a link there would take reads
 * and writes elsewhere), or null; folders that do not exist yet are fine.
 */
async function foldersProblem(cache: TrialCache, contentKey: string): Promise<string | null> {
  for (const dir of [cache.dir, join(cache.dir, LAYOUT), keyDir(cache, contentKey)]) {
    const stats = await lstat(dir).catch(() => undefined);
    if (stats === undefined) return null;
    if (!stats.isDirectory()) return `${dir} is not a folder (a link or a file)`;
  }
  return null;
}

/** The entries under a content key, by name; temporary folders of a writer are not entries. */
async function entriesOf(cache: TrialCache, contentKey: string): Promise<string[]> {
  const names = await readdir(keyDir(cache, contentKey)).catch(() => [] as string[]);
  return names.filter((name) => /^t\d{3,}-/.test(name)).sort();
}

/** The first thing in an entry that is not a folder or a regular file (a link, a FIFO), or null. */
async function notPlainFiles(dir: string): Promise<string | null> {
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() && !entry.isDirectory())
      return join(entry.parentPath, entry.name).slice(dir.length + 1);
  }
  return null;
}

/**
 * Fills the trials of the cache's variants that `pending` holds from the cache: the n-th such
 * trial of a task gets the n-th entry under its content key that verifies and that no trial of
 * this run took already (`used`: entries its resumed records came from). Each is copied to its
 * folder under --out, checked there against its seal, and sealed again with the run's key.
 */
export async function takeCachedTrials(args: {
  cache: TrialCache;
  experiment: Pick<Experiment, "layout">;
  pending: readonly TrialJob[];
  /** Content key per `variant\0task`. */
  contentKeys: ReadonlyMap<string, string>;
  used: ReadonlySet<string>;
  /** This run's id: the entries it kept itself are not taken again. */
  runId: string;
  outDir: string;
  seal: (artifactDir: string, metrics: TrialMetrics) => Promise<TrialMetrics>;
}): Promise<CacheTake> {
  const { cache, experiment, outDir } = args;
  const taken = new Map<number, TrialMetrics>();
  const ignored: IgnoredEntry[] = [];
  const refused = new Set<string>();
  const used = new Set(args.used);
  const groups = new Map<string, TrialJob[]>();
  for (const job of args.pending) {
    if (!cache.variants.includes(job.variant)) continue;
    const group = `${job.variant}\0${job.task}`;
    groups.set(group, [...(groups.get(group) ?? []), job]);
  }
  for (const [group, jobs] of groups) {
    const contentKey = args.contentKeys.get(group);
    if (contentKey === undefined) continue;
    const folders = await foldersProblem(cache, contentKey);
    if (folders !== null) {
      if (!refused.has(folders)) ignored.push({ entry: contentKey, reason: folders });
      refused.add(folders);
      continue;
    }
    // Entries this run kept (an interrupted run resumed) are its own trials, not other draws.
    const entries = (await entriesOf(cache, contentKey)).filter(
      (name) => !used.has(`${contentKey}/${name}`) && !name.includes(args.runId),
    );
    for (const job of jobs.sort((a, b) => a.trialIndex - b.trialIndex)) {
      const artifactDir = join(
        outDir,
        trialArtifactDir(experiment, job.variant, job.task, job.trialIndex),
      );
      // A trial takes only entries that ran as the same trial number: a scripted agent sees it.
      for (const name of entries.filter((n) => n.startsWith(trialPrefix(job.trialIndex)))) {
        const entry = `${contentKey}/${name}`;
        if (used.has(entry)) continue;
        used.add(entry);
        const problem = await copyEntry(cache, contentKey, name, artifactDir).catch(
          (error: unknown) => `it cannot be copied: ${(error as Error).message}`,
        );
        if (typeof problem === "string") {
          ignored.push({ entry, reason: problem });
          await rm(artifactDir, { recursive: true, force: true });
          continue;
        }
        const { seal: _theirs, ...record } = problem;
        const metrics: TrialMetrics = {
          ...record,
          seq: job.seq,
          task: job.task,
          variant: job.variant,
          trial: job.trialIndex,
          cachedFrom: { entry, contentKey: `sha256:${contentKey}` },
        };
        taken.set(job.seq, await args.seal(artifactDir, metrics));
        break;
      }
    }
  }
  return { taken, ignored };
}

/** The most bytes an entry's metrics.json may have. */
const MAX_METRICS_BYTES = 4 * 1024 * 1024;

/** Copies an entry to `artifactDir` and checks the copy: its metrics, or why it cannot be used. */
async function copyEntry(
  cache: TrialCache,
  contentKey: string,
  name: string,
  artifactDir: string,
): Promise<TrialMetrics | string> {
  const source = join(keyDir(cache, contentKey), name);
  const stats = await lstat(source).catch(() => undefined);
  if (!stats?.isDirectory()) return "it is not a folder";
  const odd = await notPlainFiles(source);
  if (odd !== null) return `it holds ${odd}, which is not a regular file`;
  await rm(artifactDir, { recursive: true, force: true });
  await mkdir(dirname(artifactDir), { recursive: true });
  await cp(source, artifactDir, { recursive: true, verbatimSymlinks: true });
  // Files a record's seal does not cover (a regrade's, a workspace note) are not the trial's.
  await dropOutsideRecord(artifactDir);
  const metrics = await readValidJsonFile(
    join(artifactDir, "metrics.json"),
    trialMetricsSchema,
    MAX_METRICS_BYTES,
  );
  if (metrics === undefined) return "its metrics.json is missing or not a trial's metrics";
  const check = await verifyRecord(artifactDir, metrics, entryKey(cache, contentKey, name));
  if (!check.ok)
    return check.reason.startsWith("it is sealed for another run")
      ? `it is sealed as ${metrics.seal?.runId}, not as this entry (copied or moved from another entry, setup or run)`
      : check.reason.includes("metrics.json was not written by this run")
        ? "its seal does not verify with this cache's key (written with another key, or changed)"
        : check.reason;
  if (metrics.outcome === "infrastructure_error") return "it records an infrastructure error";
  return metrics;
}

/** Removes the top-level files of a trial folder that are not part of its record (metrics.json stays). */
async function dropOutsideRecord(dir: string): Promise<void> {
  for (const name of await readdir(dir))
    if (name !== "metrics.json" && outsideRecord(name))
      await rm(join(dir, name), { recursive: true, force: true });
}

/**
 * Keeps the finished trials of the cache's variants that ran in this run (not those it took from
 * the cache) as new entries, each sealed with the cache's key; an entry already there (a resumed
 * run storing again) is left as it is. Infrastructure errors are not kept. Returns how many were
 * stored, and what could not be (the run does not fail for it).
 */
export async function storeCachedTrials(args: {
  cache: TrialCache;
  experiment: Pick<Experiment, "layout">;
  metrics: readonly TrialMetrics[];
  contentKeys: ReadonlyMap<string, string>;
  /** What each content key was made of, written beside its entries for a person. */
  contents: ReadonlyMap<string, TrialContent>;
  runId: string;
  outDir: string;
}): Promise<{ stored: number; failures: string[] }> {
  const { cache, experiment } = args;
  let stored = 0;
  const failures: string[] = [];
  for (const m of args.metrics) {
    if (!cache.variants.includes(m.variant) || m.cachedFrom !== undefined) continue;
    if (m.outcome === "infrastructure_error") continue;
    const contentKey = args.contentKeys.get(`${m.variant}\0${m.task}`);
    if (contentKey === undefined) continue;
    const folders = await foldersProblem(cache, contentKey);
    if (folders !== null) {
      failures.push(`${m.variant}/${m.task} trial ${m.trial}: ${folders}`);
      continue;
    }
    const name = entryName(m.trial, args.runId, m.variant, m.task);
    const dir = keyDir(cache, contentKey);
    const entry = join(dir, name);
    if (
      await lstat(entry).then(
        () => true,
        () => false,
      )
    )
      continue;
    const staging = join(dir, `.${name}.${randomBytes(6).toString("hex")}.partial`);
    try {
      await mkdir(dir, { recursive: true });
      await writeAbout(dir, args.contents.get(contentKey));
      await cp(
        join(args.outDir, trialArtifactDir(experiment, m.variant, m.task, m.trial)),
        staging,
        {
          recursive: true,
          verbatimSymlinks: true,
        },
      );
      await rm(join(staging, "metrics.json"), { force: true });
      await dropOutsideRecord(staging);
      const { seal: _run, ...record } = m;
      const sealed = {
        ...record,
        seal: await sealRecord(staging, record, entryKey(cache, contentKey, name)),
      };
      await writeFile(join(staging, "metrics.json"), `${JSON.stringify(sealed, null, 2)}\n`);
      await rename(staging, entry);
      stored += 1;
    } catch (error) {
      await rm(staging, { recursive: true, force: true }).catch(() => {});
      failures.push(`${m.variant}/${m.task} trial ${m.trial}: ${(error as Error).message}`);
    }
  }
  return { stored, failures };
}

/** `about.json`: what a content key stands for (read by people; never trusted). */
async function writeAbout(dir: string, content: TrialContent | undefined): Promise<void> {
  if (content === undefined) return;
  await writeFile(join(dir, "about.json"), `${JSON.stringify(content, null, 2)}\n`, {
    flag: "wx",
  }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
}
