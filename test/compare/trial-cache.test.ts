// The trial cache's key and content keys: a secret from the environment gives the same key on
// every machine; without one a key is kept, owner-only, in the state directory; a content key
// changes with anything a trial depended on.
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  loadTrialCacheKey,
  type TrialCache,
  TrialCacheKeyError,
  type TrialMetrics,
} from "../../src/compare/index.js";
import {
  storeCachedTrials,
  type TrialContent,
  takeCachedTrials,
  trialContentKey,
} from "../../src/compare/run/trial-cache.js";
import { passedTrialMetrics } from "../support/metrics.js";

const dirs: string[] = [];
const stateDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "hl-cache-key-"));
  dirs.push(dir);
  return join(dir, "state");
};
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe("loadTrialCacheKey", () => {
  it("derives the key from HARNESSLAB_CACHE_KEY: the same secret, the same key anywhere", async () => {
    const secret = "s".repeat(40);
    const a = await loadTrialCacheKey({ HARNESSLAB_CACHE_KEY: secret }, await stateDir());
    const b = await loadTrialCacheKey({ HARNESSLAB_CACHE_KEY: secret }, await stateDir());
    const c = await loadTrialCacheKey({ HARNESSLAB_CACHE_KEY: `${secret}x` }, await stateDir());
    expect(a.key.equals(b.key)).toBe(true);
    expect(a.key.equals(c.key)).toBe(false);
    expect(a.source).toBe("$HARNESSLAB_CACHE_KEY");
    // The secret itself is not the key.
    expect(a.key.toString("utf8")).not.toContain("ssss");
  });

  it("refuses a short secret, naming the variable and what is allowed", async () => {
    const loading = loadTrialCacheKey({ HARNESSLAB_CACHE_KEY: "short" }, await stateDir());
    await expect(loading).rejects.toBeInstanceOf(TrialCacheKeyError);
    await expect(loading).rejects.toThrow(
      "HARNESSLAB_CACHE_KEY holds 5 characters; use a random secret of at least 32",
    );
  });

  it("without a secret, keeps a key owner-only in the state directory and reuses it", async () => {
    const dir = await stateDir();
    const first = await loadTrialCacheKey({}, dir);
    const second = await loadTrialCacheKey({}, dir);
    expect(first.key.equals(second.key)).toBe(true);
    expect(first.source).toBe(join(dir, "trial-cache.key"));
    expect((await stat(first.source)).mode & 0o777).toBe(0o600);
    expect((await readFile(first.source, "utf8")).trim()).toBe(first.key.toString("hex"));
    expect((await loadTrialCacheKey({}, await stateDir())).key.equals(first.key)).toBe(false);
  });
});

describe("trialContentKey", () => {
  const content: TrialContent = {
    harnesslabVersion: "0.1.0",
    setupHash: `sha256:${"1".repeat(64)}`,
    revisionId: "hr_1",
    agentHash: null,
    runtime: { host: "scripted", timeoutMs: 1000, network: "deny", validationCommands: [] },
    task: {
      fixture: `sha256:${"2".repeat(64)}`,
      prompt: `sha256:${"3".repeat(64)}`,
      expectedFiles: ["src/index.js"],
      graders: { scope: { kind: "scope", contract: null, settings: `sha256:${"4".repeat(64)}` } },
    },
    containment: "bwrap",
    diskBudgetBytes: 1e9,
    forge: null,
  };

  it("is the same for the same content, in any key order", () => {
    const reordered = Object.fromEntries(Object.entries(content).reverse()) as TrialContent;
    expect(trialContentKey(reordered)).toBe(trialContentKey(content));
    expect(trialContentKey(content)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("changes with anything a trial depended on", () => {
    const base = trialContentKey(content);
    const changes: Partial<TrialContent>[] = [
      { harnesslabVersion: "0.1.1" },
      { setupHash: `sha256:${"5".repeat(64)}` },
      { revisionId: "hr_2" },
      { agentHash: `sha256:${"6".repeat(64)}` },
      { runtime: { ...content.runtime, timeoutMs: 2000 } },
      { task: { ...content.task, prompt: `sha256:${"7".repeat(64)}` } },
      {
        task: {
          ...content.task,
          graders: {
            scope: { kind: "scope", contract: `sha256:${"8".repeat(64)}`, settings: "x" },
          },
        },
      },
      { containment: "none" },
      { diskBudgetBytes: 2e9 },
      { forge: { access: "mcp" } },
    ];
    const keys = changes.map((change) => trialContentKey({ ...content, ...change }));
    for (const key of keys) expect(key).not.toBe(base);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe("storeCachedTrials and takeCachedTrials", () => {
  const metricsOf = (trial: number): TrialMetrics =>
    passedTrialMetrics({ task: "t", variant: "base", trial, seq: trial });
  const contentKey = "a".repeat(64);
  const contentKeys = new Map([["base\0t", contentKey]]);
  const experiment = { layout: "v2" as const };

  /** A finished run's folder with trial 1 of `base` on `t`, and a cache beside it. */
  async function setUp(): Promise<{ outDir: string; cache: TrialCache; root: string }> {
    const root = dirname(await stateDir());
    const outDir = join(root, "out");
    await mkdir(join(outDir, "base", "t", "trial-001"), { recursive: true });
    await writeFile(join(outDir, "base", "t", "trial-001", "patch.diff"), "");
    await writeFile(join(outDir, "base", "t", "trial-001", ".workspace-in-use.json"), "{}");
    const cache = { dir: join(root, "cache"), variants: ["base"], key: Buffer.alloc(32, 7) };
    return { outDir, cache, root };
  }
  /** Keeps trial 1, as run `run_a` ran it. */
  const store = (cache: TrialCache, outDir: string) =>
    storeCachedTrials({
      cache,
      experiment,
      metrics: [metricsOf(1)],
      contentKeys,
      contents: new Map(),
      runId: "run_a",
      outDir,
    });
  const take = (cache: TrialCache, outDir: string, runId: string) =>
    takeCachedTrials({
      cache,
      experiment,
      pending: [{ seq: 1, task: "t", variant: "base", trialIndex: 1 }],
      contentKeys,
      used: new Set(),
      runId,
      outDir: join(outDir, "..", `taken-${runId}`),
      seal: async (dir, m) => {
        await writeFile(join(dir, "metrics.json"), JSON.stringify(m));
        return m;
      },
    });

  it("keeps a trial and gives it to another run, but not back to the run that kept it", async () => {
    const { outDir, cache } = await setUp();
    const stored = await store(cache, outDir);
    expect(stored).toEqual({ stored: 1, failures: [] });
    const own = await take(cache, outDir, "run_a");
    expect(own.taken.size).toBe(0);
    const other = await take(cache, outDir, "run_b");
    expect(other.ignored).toEqual([]);
    expect(other.taken.get(1)?.cachedFrom).toEqual({
      entry: `${contentKey}/t001-run_a-base-t`,
      contentKey: `sha256:${contentKey}`,
    });
    // A note of a workspace the seal does not cover does not travel with the trial.
    const taken = join(outDir, "..", "taken-run_b", "base", "t", "trial-001");
    expect((await readdir(taken)).sort()).toEqual(["metrics.json", "patch.diff"]);
  });

  it("neither writes nor reads through a link in the cache's own folders", async () => {
    const { outDir, cache, root } = await setUp();
    const elsewhere = join(root, "elsewhere");
    await mkdir(elsewhere);
    await mkdir(cache.dir);
    await symlink(elsewhere, join(cache.dir, "harnesslab-trials-v1"));
    const stored = await store(cache, outDir);
    expect(stored.stored).toBe(0);
    expect(stored.failures[0]).toContain("harnesslab-trials-v1 is not a folder (a link or a file)");
    expect(await readdir(elsewhere)).toEqual([]);
    const taken = await take(cache, outDir, "run_b");
    expect(taken.taken.size).toBe(0);
    expect(taken.ignored[0]?.reason).toContain("is not a folder (a link or a file)");
  });
});
