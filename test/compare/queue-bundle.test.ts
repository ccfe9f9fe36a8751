// What a run puts in Redis for its workers (the bundle) and what a worker makes of one it takes
// from Redis, which anyone with the queue's address may write: only the experiment's own files
// go out, and nothing unpacked can land outside the worker's folder for it.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packTrialFolder } from "../../src/compare/queue/accept.js";
import { parseQueueUrl } from "../../src/compare/queue/address.js";
import { openBundle, packBundle, unpackBundle } from "../../src/compare/queue/bundle.js";
import { loadForRun, makeExperiment, type TempExperiment } from "../support/experiment.js";

let exp: TempExperiment;
let scratch: string;

beforeAll(async () => {
  exp = await makeExperiment({ fixture: { ".hidden-in-fixture": "kept\n", "check.mjs": "" } });
  // Beside the agents: the coordinator's secrets, installed packages, and this run's --out.
  await writeFile(join(exp.dir, "agents", ".env"), "ANTHROPIC_API_KEY=sk-ant-beside-agent\n");
  await writeFile(join(exp.dir, "agents", ".npmrc"), "//registry/:_authToken=npm-secret\n");
  await mkdir(join(exp.dir, "agents", "node_modules", "dep"), { recursive: true });
  await writeFile(join(exp.dir, "agents", "node_modules", "dep", "index.js"), "");
  await mkdir(join(exp.dir, "agents", "out", "baseline"), { recursive: true });
  await writeFile(join(exp.dir, "agents", "out", "baseline", "patch.diff"), "earlier run\n");
  await writeFile(join(exp.dir, "agents", "helper.mjs"), "export const shared = 1;\n");
  scratch = await mkdtemp(join(tmpdir(), "hl-bundle-"));
});

afterAll(async () => {
  await exp?.cleanup();
  await rm(scratch, { recursive: true, force: true });
});

/** The bundle's document for `exp`, packed with the run's --out under the agents' folder. */
async function packed() {
  const { experiment } = await loadForRun(exp.manifestPath);
  const bundle = await packBundle(experiment, { exclude: [join(exp.dir, "agents", "out")] });
  const opened = openBundle(bundle.hash, bundle.bytes);
  if (!opened.ok) throw new Error(opened.message);
  return opened.document;
}

describe("a run's bundle", () => {
  it("holds the experiment's files: the whole fixture, the agent's folder without hidden entries, packages or the run's --out", async () => {
    const paths = (await packed()).entries.map((entry) => entry.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        "experiment.json",
        "compare.harness",
        "prompt.md",
        "fixture/.hidden-in-fixture",
        "agents/fixer.mjs",
        "agents/helper.mjs",
      ]),
    );
    for (const left of [".env", ".npmrc", "node_modules", "out"])
      expect(paths.filter((p) => p.startsWith(`agents/${left}`))).toEqual([]);
  });

  it("is refused by a worker when an entry would be written through a link of its own", async () => {
    const document = await packed();
    const forged = {
      ...document,
      entries: [
        ...document.entries,
        { kind: "symlink" as const, path: "zz-link", target: scratch },
        { kind: "file" as const, path: "zz-link/planted", executable: false, data: "eA==" },
      ],
    };
    await expect(unpackBundle(forged, join(scratch, "unpacked-link"))).rejects.toThrow(
      "the bundle writes zz-link/planted through its own link zz-link",
    );
    expect(await readdir(scratch)).not.toContain("planted");
  });

  it("is refused by a worker when an entry names a path outside it", async () => {
    const document = await packed();
    const forged = {
      ...document,
      entries: [
        ...document.entries,
        { kind: "file" as const, path: "../escaped", executable: false, data: "eA==" },
      ],
    };
    await expect(unpackBundle(forged, join(scratch, "unpacked-escape"))).rejects.toThrow(
      "the bundle names a path outside itself: ../escaped",
    );
    await expect(readFile(join(scratch, "escaped"))).rejects.toThrow();
  });

  it("is refused when its bytes are not what its name says", () => {
    const bytes = gzipSync(Buffer.from("{}"));
    const opened = openBundle(`sha256:${"0".repeat(64)}`, bytes);
    expect(opened.ok).toBe(false);
    if (!opened.ok) expect(opened.message).toContain("holds other content");
  });
});

describe("a worker's packed trial folder", () => {
  it("leaves out the note of a workspace the worker could not remove", async () => {
    const dir = join(scratch, "trial");
    await mkdir(dir);
    await writeFile(join(dir, "patch.diff"), "");
    await writeFile(join(dir, ".workspace-in-use.json"), "{}");
    const { gunzipSync } = await import("node:zlib");
    const files = JSON.parse(gunzipSync(await packTrialFolder(dir)).toString()) as object;
    expect(Object.keys(files)).toEqual(["patch.diff"]);
  });
});

describe("--queue", () => {
  it.each([
    ["redis://:p^ss@queue.internal:6379/2", "redis://:***@queue.internal:6379/2"],
    ["redis://worker:a{b}c@queue.internal:6379", "redis://worker:***@queue.internal:6379"],
    ["rediss://:plain@queue.internal:6380", "rediss://:***@queue.internal:6380"],
    ["redis://127.0.0.1:6379", "redis://127.0.0.1:6379"],
  ])("shows %s as %s", (given, shown) => {
    const parsed = parseQueueUrl(given);
    expect(parsed.ok && parsed.address.shown).toBe(shown);
  });

  it.each([
    ["http://h:6379", "is not a Redis URL"],
    ["redis://h:6379/x", "the database must be a number"],
    ["redis://h:6379?db=1", "no query or fragment is read"],
    ["not a url", "is not a URL"],
  ])("refuses %s, saying it %s", (given, message) => {
    const parsed = parseQueueUrl(given);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toContain(message);
  });
});
