// `harness ci` on a real git repository: the setup under test as the base commit has it against
// the working tree, one paired verdict, the exit code by the verdict; nothing run when nothing
// changed; the base read with git and gone afterwards. (The example's scripted agents stand in
// for a team's: a better agent module and a setup with the careful-fixes habits at the head.)
import { execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exitForCi } from "../../src/cli/commands/ci.js";
import { startForge } from "../../src/forge/index.js";
import { runHarness } from "../support/cli.js";
import { SMALL_SEED } from "../support/forge.js";
import { git } from "../support/git.js";
import { checkResponse } from "../support/gitea-openapi.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "fix-the-bug");

let repo: string;
let base: string;
const manifest = () => join(repo, "fix-the-bug", "experiment.json");
const harnessFile = () => join(repo, "fix-the-bug", "fix-the-bug.harness");

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-ci-"));
  repo = join(base, "repo");
  await cp(EXAMPLE, join(repo, "fix-the-bug"), { recursive: true });
  git(repo, "init", "-q");
  git(repo, "add", "-A");
  git(repo, "commit", "-qm", "the team's setup");
  // The pull request: the better agent module, and the careful-fixes habits in the setup.
  await cp(
    join(repo, "fix-the-bug", "agents", "verified.mjs"),
    join(repo, "fix-the-bug", "agents", "baseline.mjs"),
  );
  const text = await readFile(harnessFile(), "utf8");
  await writeFile(
    harnessFile(),
    text.replace(
      "composition baseline {\n  target scripted\n  include [ plugin.coding-core@^1 ]",
      "composition baseline {\n  target scripted\n  include [ plugin.coding-core@^1, plugin.careful-fixes@^1 ]",
    ),
  );
  git(repo, "commit", "-qam", "verify before finishing");
});
afterAll(() => rm(base, { recursive: true, force: true }));

/** `harness ci` on the example's manifest for the variant `baseline` against `ref`. */
const ciArgs = (ref: string, ...more: string[]) => [
  "ci",
  manifest(),
  "--baseline-ref",
  ref,
  "--variant",
  "baseline",
  ...more,
];

describe("harness ci", () => {
  it("compares the setup at the base ref with the working tree and accepts the better one", async () => {
    const out = join(base, "out-accept");
    const run = await runHarness(ciArgs("HEAD~1", "--out", out, "--json"), repo);
    expect(run.exitCode, run.stderr).toBe(0);
    const verdict = JSON.parse(run.stdout);
    expect(verdict.status).toBe("accept");
    expect(verdict.variants.map((v: { id: string }) => v.id)).toEqual(["base", "head"]);
    expect(verdict.trials).toHaveLength(10);
    // What changed, said before the trials.
    expect(run.stderr).toContain("harness ci: baseline at HEAD~1 (");
    expect(run.stderr).toContain("added: fix-code-not-tests");
    expect(run.stderr).toContain("added: verify-before-finishing");
    expect(run.stderr).toContain("changed: the scripted agent's module");
    // The base's files were read with git, beside the manifest, and are gone; the tree is clean.
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(
      (await readdir(join(repo, "fix-the-bug"))).some((n) => n.startsWith(".harnesslab-ci")),
    ).toBe(false);
    // The record says what the base was: its variant's harness under the base's folder.
    const recorded = JSON.parse(await readFile(join(out, "manifest.json"), "utf8"));
    expect(recorded.manifest.variants[0].harness[0]).toMatch(
      /^\.harnesslab-ci-[0-9a-f]{12}-baseline\/fix-the-bug\/fix-the-bug\.harness$/,
    );
    // The same base names the same folder: a second run with --resume finds the first.
    const resumed = await runHarness(ciArgs("HEAD~1", "--out", out, "--resume"), repo);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("10 trial(s) taken from an earlier run");
  });

  it("runs no trial when the setup is the same at the base, and says so", async () => {
    const out = join(base, "out-same");
    const run = await runHarness(ciArgs("HEAD", "--out", out), repo);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^no change in the setup of baseline: .* no trial was run\n$/);
    await expect(readdir(out)).rejects.toThrow();
  });

  it("reads the head from the working tree: a change for the worse is rejected (exit 1)", async () => {
    // Uncommitted: the pull request's agent module goes back to the weaker one.
    const agent = join(repo, "fix-the-bug", "agents", "baseline.mjs");
    const committed = await readFile(agent, "utf8");
    await cp(join(EXAMPLE, "agents", "baseline.mjs"), agent);
    try {
      const run = await runHarness(
        ciArgs("HEAD", "--out", join(base, "out-reject"), "--json"),
        repo,
      );
      expect(JSON.parse(run.stdout).status).toBe("reject");
      expect(run.exitCode).toBe(1);
    } finally {
      await writeFile(agent, committed);
    }
  });

  it("passes a draw (exit 0), and fails it with --fail-on need_more_work (exit 1)", async () => {
    // Uncommitted: a habit's wording changes, the agents do not: nothing to tell apart.
    const text = await readFile(harnessFile(), "utf8");
    await writeFile(
      harnessFile(),
      text.replace("Run the package tests before", "Run every package test before"),
    );
    try {
      expect(text).toContain("Run the package tests before");
      const args = ciArgs("HEAD");
      const draw = await runHarness([...args, "--out", join(base, "out-draw"), "--json"], repo);
      expect(JSON.parse(draw.stdout).status).toBe("need_more_work");
      expect(draw.stderr).toMatch(
        /changed: verify-before-finishing \([0-9a-f]{12} → [0-9a-f]{12}\)/,
      );
      expect(draw.exitCode).toBe(0);
      const strict = await runHarness(
        [...args, "--out", join(base, "out-draw-strict"), "--fail-on", "need_more_work"],
        repo,
      );
      expect(strict.exitCode).toBe(1);
    } finally {
      await writeFile(harnessFile(), text);
    }
    expect(exitForCi("infrastructure_error", "reject")).toBe(3);
  });

  it("takes the base's trials from --cache on the next run, and ignores entries that do not verify", async () => {
    const cache = join(base, "trial-cache");
    const secret = "a-cache-secret-the-ci-keeps-among-its-secrets";
    const env = { ...process.env, HARNESSLAB_CACHE_KEY: secret };
    const ci = (out: string, withEnv = env) =>
      runHarness(
        ciArgs("HEAD~1", "--out", join(base, out), "--cache", cache, "--json"),
        repo,
        withEnv,
      );
    const trialsOf = async (out: string, variant: string) =>
      Promise.all(
        [1, 2, 3, 4, 5].map(async (n) =>
          JSON.parse(
            await readFile(
              join(base, out, variant, "fix-the-bug", `trial-00${n}`, "metrics.json"),
              "utf8",
            ),
          ),
        ),
      );

    // An empty cache: every trial runs, and the base's five are kept.
    const first = await ci("out-cache-1");
    expect(first.exitCode, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).cachedTrials).toBe(0);
    expect(first.stderr).toContain("sealed with the key from $HARNESSLAB_CACHE_KEY");
    expect(first.stderr).toContain("trial cache: kept 5 new trial(s)");
    const layout = join(cache, "harnesslab-trials-v1");
    const [contentKey, ...others] = await readdir(layout);
    expect(others).toEqual([]);
    const entries = (await readdir(join(layout, contentKey!))).filter((n) => n !== "about.json");
    expect(entries).toHaveLength(5);

    // The next run of the same base pays only for the head's trials: the base's are copies of
    // the first run's (the same durations and patches), saying where they came from.
    const second = await ci("out-cache-2");
    expect(second.exitCode, second.stderr).toBe(0);
    const verdict = JSON.parse(second.stdout);
    expect(verdict.status).toBe("accept");
    expect(verdict.trials).toHaveLength(10);
    expect(verdict.cachedTrials).toBe(5);
    expect(second.stderr).toContain("trial cache: 5 of the 5 trial(s) of base taken from");
    expect(second.stderr).not.toContain("kept");
    const [cachedBase, firstBase, head] = await Promise.all([
      trialsOf("out-cache-2", "base"),
      trialsOf("out-cache-1", "base"),
      trialsOf("out-cache-2", "head"),
    ]);
    const ranThisTime = [...cachedBase, ...head].filter((m) => m.cachedFrom === undefined);
    expect(ranThisTime.map((m) => m.variant)).toEqual(["head", "head", "head", "head", "head"]);
    expect(cachedBase.map((m) => m.durationMs).sort()).toEqual(
      firstBase.map((m) => m.durationMs).sort(),
    );
    for (const m of cachedBase) {
      expect(m.cachedFrom.contentKey).toBe(`sha256:${contentKey}`);
      // Sealed again with this run's key, like every record of the run.
      expect(m.seal.runId).toBe(
        JSON.parse(await readFile(join(base, "out-cache-2", "manifest.json"), "utf8")).evidence
          .runId,
      );
    }

    expect(entries.map((name) => name.slice(0, 5)).sort()).toEqual([
      "t001-",
      "t002-",
      "t003-",
      "t004-",
      "t005-",
    ]);
    // Entries that do not verify are ignored and their trials run: a changed patch, a record
    // written without the key, an entry copied under another name (one draw counted twice), a
    // FIFO where a file should be, a run's own record put in the cache.
    const [changed, forged, ...rest] = entries.sort();
    await writeFile(join(layout, contentKey!, changed!, "patch.diff"), "diff --git a/x b/x\n");
    const forgedMetrics = join(layout, contentKey!, forged!, "metrics.json");
    const record = JSON.parse(await readFile(forgedMetrics, "utf8"));
    await writeFile(
      forgedMetrics,
      JSON.stringify({
        ...record,
        outcome: "failed",
        seal: { ...record.seal, mac: "0".repeat(64) },
      }),
    );
    await cp(join(layout, contentKey!, entries[2]!), join(layout, contentKey!, "t001-copied"), {
      recursive: true,
    });
    await cp(join(layout, contentKey!, entries[2]!), join(layout, contentKey!, "t002-fifo"), {
      recursive: true,
    });
    execFileSync("mkfifo", [join(layout, contentKey!, "t002-fifo", "response.txt.fifo")]);
    const runRecord = join(layout, contentKey!, rest[1]!);
    await rm(runRecord, { recursive: true });
    await cp(join(base, "out-cache-2", "base", "fix-the-bug", "trial-004"), runRecord, {
      recursive: true,
    });
    const third = await ci("out-cache-3");
    expect(third.exitCode, third.stderr).toBe(0);
    expect(JSON.parse(third.stdout).cachedTrials).toBe(2);
    expect(third.stderr).toContain(`ignored ${contentKey}/${changed}: its files differ`);
    expect(third.stderr).toContain(`ignored ${contentKey}/${forged}: its seal does not verify`);
    expect(third.stderr).toContain(`ignored ${contentKey}/t001-copied: it is sealed as cache:`);
    expect(third.stderr).toContain(
      `ignored ${contentKey}/t002-fifo: it holds response.txt.fifo, which is not a regular file`,
    );
    expect(third.stderr).toContain(`ignored ${contentKey}/${rest[1]}: it is sealed as run_`);
    expect(third.stderr).toContain("trial cache: kept 3 new trial(s)");
    const thirdBase = await trialsOf("out-cache-3", "base");
    expect(thirdBase.filter((m) => m.cachedFrom === undefined)).toHaveLength(3);
    // Each trial took the entry that ran as its own trial number.
    expect(thirdBase.map((m) => m.cachedFrom?.entry)).toEqual([
      undefined,
      undefined,
      `${contentKey}/${rest[0]}`,
      undefined,
      `${contentKey}/${rest[2]}`,
    ]);

    // Another secret: nothing verifies, every trial runs.
    const fourth = await ci("out-cache-4", { ...env, HARNESSLAB_CACHE_KEY: `${secret}-rotated` });
    expect(fourth.exitCode, fourth.stderr).toBe(0);
    expect(JSON.parse(fourth.stdout).cachedTrials).toBe(0);
    expect(fourth.stderr).toContain("its seal does not verify with this cache's key");

    // A new base commit that does not touch the setup is the same base: every trial of it hits.
    const moved = movedBase(repo);
    const fifth = await runHarness(
      ciArgs(moved, "--out", join(base, "out-cache-5"), "--cache", cache, "--json"),
      repo,
      env,
    );
    expect(fifth.exitCode, fifth.stderr).toBe(0);
    expect(fifth.stderr).toContain(`harness ci: baseline at ${moved} (${moved.slice(0, 12)})`);
    expect(JSON.parse(fifth.stdout).cachedTrials).toBe(5);

    // The secret is in no file of the runs or of the cache.
    for (const dir of [
      "out-cache-1",
      "out-cache-2",
      "out-cache-3",
      "out-cache-4",
      "out-cache-5",
      "trial-cache",
    ])
      expect(await filesHolding(join(base, dir), secret)).toEqual([]);
    // A short secret is refused before anything runs.
    const weak = await ci("out-cache-weak", { ...env, HARNESSLAB_CACHE_KEY: "short" });
    expect(weak.exitCode).toBe(2);
    expect(weak.stderr).toContain("HARNESSLAB_CACHE_KEY holds 5 characters");
    // A cache in a fixture (which must never change) or in --out is refused before any trial.
    const inFixture = await runHarness(
      ciArgs(
        "HEAD~1",
        "--out",
        join(base, "out-cache-fixture"),
        "--cache",
        join(repo, "fix-the-bug", "fixture", ".cache"),
      ),
      repo,
      env,
    );
    expect(inFixture.exitCode).toBe(2);
    expect(inFixture.stderr).toContain("is inside the fixture of tasks[0]");
    const inOut = await runHarness(
      ciArgs(
        "HEAD~1",
        "--out",
        join(base, "out-cache-out"),
        "--cache",
        join(base, "out-cache-out", "c"),
      ),
      repo,
      env,
    );
    expect(inOut.exitCode).toBe(2);
    expect(inOut.stderr).toContain("keep the trial cache apart from the run's evidence");
    await expect(readdir(join(base, "out-cache-weak"))).rejects.toThrow();
  }, 240_000);

  it("waits its turn behind another harness ci of the same base and variant, and takes over a dead one's folder", async () => {
    const commit = git(repo, "rev-parse", "HEAD~1").trim().slice(0, 12);
    const folder = join(repo, "fix-the-bug", `.harnesslab-ci-${commit}-baseline`);
    await mkdir(folder);
    await writeFile(join(folder, "in-use"), "the other run's\n");
    await mkdir(`${folder}.lock`);
    // The other run: a live process of this machine holds the folder's lock.
    const other = spawn("sleep", ["600"], { stdio: "ignore" });
    const exited = once(other, "exit");
    try {
      await writeFile(
        join(`${folder}.lock`, ".harnesslab-run.lock"),
        `${JSON.stringify({ pid: other.pid, host: hostname(), startedAt: "2026-12-02T20:00:00.000Z", token: "the-other-run", kind: "run" })}\n`,
      );
      const refused = await runHarness(ciArgs("HEAD~1", "--out", join(base, "out-busy")), repo);
      expect(refused.exitCode).toBe(2);
      expect(refused.stderr).toContain("the base's setup folder is in use");
      expect(refused.stderr).toContain(`pid ${other.pid}`);
      expect(await readFile(join(folder, "in-use"), "utf8")).toBe("the other run's\n");
      await expect(readdir(join(base, "out-busy"))).rejects.toThrow();
    } finally {
      other.kill();
    }
    await exited;
    // Its process gone (killed, say), the next run replaces the folder and leaves nothing.
    const run = await runHarness(ciArgs("HEAD~1", "--out", join(base, "out-taken")), repo);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(
      (await readdir(join(repo, "fix-the-bug"))).filter((n) => n.startsWith(".harnesslab-ci")),
    ).toEqual([]);
  });

  it("refuses with exit 2 what git cannot give, naming it", async () => {
    const noRef = await runHarness(ciArgs("no-such-branch"), repo);
    expect(noRef.exitCode).toBe(2);
    expect(noRef.stderr).toContain('--baseline-ref "no-such-branch" names no commit');
    const option = await runHarness(ciArgs("--upload-pack=x"), repo);
    expect(option.exitCode).toBe(2);
    const which = await runHarness(["ci", manifest(), "--baseline-ref", "HEAD"], repo);
    expect(which.exitCode).toBe(2);
    expect(which.stderr).toContain("name the setup under test with --variant");
    // A setup the base does not have (added by the pull request) has nothing to compare with.
    await writeFile(
      join(repo, "fix-the-bug", "new.harness"),
      await readFile(harnessFile(), "utf8"),
    );
    const doc = JSON.parse(await readFile(manifest(), "utf8"));
    doc.variants[0].harness = "./new.harness";
    await writeFile(join(repo, "fix-the-bug", "new.json"), JSON.stringify(doc));
    const added = await runHarness(
      [
        "ci",
        join(repo, "fix-the-bug", "new.json"),
        "--baseline-ref",
        "HEAD",
        "--variant",
        "baseline",
      ],
      repo,
    );
    expect(added.exitCode).toBe(2);
    expect(added.stderr).toContain("fix-the-bug/new.harness does not exist at the base");
    const outside = await mkdtemp(join(tmpdir(), "hl-ci-no-git-"));
    await cp(EXAMPLE, join(outside, "x"), { recursive: true });
    const noGit = await runHarness(
      [
        "ci",
        join(outside, "x", "experiment.json"),
        "--baseline-ref",
        "HEAD",
        "--variant",
        "baseline",
      ],
      outside,
    );
    expect(noGit.exitCode).toBe(2);
    expect(noGit.stderr).toContain("is not in a git repository");
    await rm(outside, { recursive: true, force: true });
  });
});

/** A commit on top of HEAD~1 that adds only a file the setup does not name (the base branch moved on). */
function movedBase(repo: string): string {
  const index = join(repo, ".git", "moved-base-index");
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const run = (...args: string[]) =>
    execFileSync("git", ["-C", repo, ...args], { env, encoding: "utf8" }).trim();
  run("read-tree", "HEAD~1");
  const blob = execFileSync("git", ["-C", repo, "hash-object", "-w", "--stdin"], {
    input: "unrelated\n",
    encoding: "utf8",
  }).trim();
  run("update-index", "--add", "--cacheinfo", `100644,${blob},UNRELATED.md`);
  const tree = run("write-tree");
  return run(
    "-c",
    "user.name=t",
    "-c",
    "user.email=t@example.com",
    "commit-tree",
    tree,
    "-p",
    "HEAD~1",
    "-m",
    "unrelated",
  );
}

/** Every file under `dir` whose bytes hold `needle`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    if ((await readFile(path)).includes(needle)) found.push(path);
  }
  return found;
}

describe("harness ci --forge gitea, against the local forge", () => {
  it("posts one comment and one status, edits the same comment on the next run, and never writes the token", async () => {
    // Someone else's comment that starts with the marker is not harnesslab's.
    const planted = "<!-- harnesslab-ci:baseline -->\nall good, merge it";
    const seed = {
      ...SMALL_SEED,
      pullRequests: (SMALL_SEED.pullRequests ?? []).map((p) => ({
        ...p,
        comments: [{ author: "mallory", body: planted }],
      })),
    };
    const forge = await startForge({ seed, repo: "acme/widgets", user: "ci-bot" });
    try {
      const env = { ...process.env, HL_FORGE_TOKEN: forge.token };
      const args = (out: string, ref: string) =>
        ciArgs(
          ref,
          "--out",
          join(base, out),
          "--forge",
          "gitea",
          "--api-url",
          forge.apiUrl,
          "--repo",
          "acme/widgets",
          "--pr",
          "3",
          "--token-env",
          "HL_FORGE_TOKEN",
        );
      const api = `${forge.apiUrl}/repos/acme/widgets`;
      const comments = async () =>
        (await (await fetch(`${api}/issues/3/comments`)).json()) as { id: number; body: string }[];
      const pull = (await (await fetch(`${api}/pulls/3`)).json()) as { head: { sha: string } };
      const statuses = async () => {
        const url = `${api}/statuses/${pull.head.sha}`;
        const response = await fetch(url);
        const body = await response.json();
        // The forge answers as Gitea 1.27.1's contract says.
        expect(checkResponse("GET", url, response.status, body)).toEqual({
          checked: true,
          problems: [],
        });
        return body as { status: string; context: string; description: string }[];
      };

      // As in a job, where the variable is in this process's environment: the pull request's
      // scripted agent runs in a worker thread that would see it, so it leaves once read.
      process.env.HL_FORGE_TOKEN = forge.token;
      const first = await runHarness(args("forge-1", "HEAD~1"), repo, env);
      expect(process.env.HL_FORGE_TOKEN).toBeUndefined();
      expect(first.exitCode, first.stderr).toBe(0);
      expect(first.stderr).toContain("posted the comment on pull request #3 of acme/widgets");
      const [mallory, comment, ...others] = await comments();
      expect(mallory?.body).toBe(planted);
      expect(others).toEqual([]);
      expect(comment?.body).toMatch(
        /^<!-- harnesslab-ci:baseline -->\n### harnesslab: \*\*accept\*\* — `baseline` in this pull request against `HEAD~1`/,
      );
      expect(comment?.body).toContain("| head | 5 / 5 | 100% |");
      expect(comment?.body).toContain("- added: verify-before-finishing");
      expect(comment?.body).toContain("`fix-the-bug`: fails at the base, passes at the head");
      expect(await statuses()).toMatchObject([
        {
          status: "success",
          context: "harnesslab/baseline",
          description: expect.stringMatching(/^head is better than base/),
        },
      ]);

      // The next run edits the same comment: nothing changed against HEAD.
      const second = await runHarness(args("forge-2", "HEAD"), repo, env);
      expect(second.exitCode, second.stderr).toBe(0);
      expect(second.stderr).toContain("edited the comment on pull request #3");
      const after = await comments();
      expect(after.map((c) => c.id)).toEqual([mallory?.id, comment?.id]);
      expect(after[0]?.body).toBe(planted);
      expect(after[1]?.body).toContain("### harnesslab: no change in the setup");
      expect((await statuses()).map((x) => x.status)).toEqual(["success", "success"]);

      // A status needs the token, as every write does.
      const anonymous = await fetch(`${api}/statuses/${pull.head.sha}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ state: "success", context: "harnesslab/baseline" }),
      });
      expect(anonymous.status).toBe(401);
      expect(await statuses()).toHaveLength(2);

      // The token is in no file of the run, no comment and no output.
      expect(await filesHolding(join(base, "forge-1"), forge.token)).toEqual([]);
      expect(JSON.stringify(after)).not.toContain(forge.token);
      expect(first.stdout + first.stderr + second.stdout + second.stderr).not.toContain(
        forge.token,
      );
    } finally {
      await forge.close();
    }
  }, 180_000);
});

describe("harness ci --forge github, against a GitHub-shaped server", () => {
  const SHA = "0000000000000000000000000000000000000001";
  // GitHub's answer to a status, as @octokit/fixtures recorded it from the real API.
  const recorded = JSON.parse(
    readFileSync(
      join(
        import.meta.dirname,
        "..",
        "..",
        "node_modules",
        "@octokit",
        "fixtures",
        "scenarios",
        "api.github.com",
        "create-status",
        "normalized-fixture.json",
      ),
      "utf8",
    ),
  ) as { method: string; body: Record<string, unknown>; response: unknown }[];

  async function githubServer(headRepo: string) {
    const requests: {
      method: string;
      path: string;
      headers: Record<string, unknown>;
      body: unknown;
    }[] = [];
    // Someone else's comment that starts with the marker is not harnesslab's.
    const comments: { id: number; body: string; user: { login: string } }[] = [
      { id: 99, body: "<!-- harnesslab-ci:baseline -->\nfake", user: { login: "mallory" } },
    ];
    const server = createServer((req, res) => {
      let text = "";
      req.on("data", (chunk) => {
        text += chunk;
      });
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://x");
        const body = text === "" ? undefined : JSON.parse(text);
        requests.push({ method: req.method ?? "", path: url.pathname, headers: req.headers, body });
        const send = (status: number, value: unknown) => {
          res.writeHead(status, { "content-type": "application/json" });
          res.end(JSON.stringify(value));
        };
        // The workflow's token cannot read its user, as on GitHub.
        if (req.method === "GET" && url.pathname === "/user")
          return send(403, { message: "Resource not accessible by integration" });
        if (req.method === "GET" && url.pathname === "/repos/o/r/pulls/7")
          return send(200, {
            number: 7,
            head: { sha: SHA, repo: { full_name: headRepo } },
            base: { repo: { full_name: "o/r" } },
          });
        if (req.method === "GET" && url.pathname === "/repos/o/r/issues/7/comments")
          return send(200, url.searchParams.get("page") === "1" ? comments : []);
        if (req.method === "POST" && url.pathname === "/repos/o/r/issues/7/comments") {
          comments.push({
            id: 100 + comments.length,
            body: body.body,
            user: { login: "github-actions[bot]" },
          });
          return send(201, comments.at(-1));
        }
        const edit = /^\/repos\/o\/r\/issues\/comments\/(\d+)$/.exec(url.pathname);
        if (req.method === "PATCH" && edit) {
          const found = comments.find((c) => c.id === Number(edit[1]));
          if (found) found.body = body.body;
          return send(200, found);
        }
        if (req.method === "POST" && url.pathname === `/repos/o/r/statuses/${SHA}`)
          return send(201, recorded.find((r) => r.method === "post")?.response);
        send(404, { message: "Not Found" });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, requests, comments, close: () => server.close() };
  }

  const args = (url: string, out: string) =>
    ciArgs(
      "HEAD",
      "--out",
      join(base, out),
      "--forge",
      "github",
      "--api-url",
      url,
      "--repo",
      "o/r",
      "--pr",
      "7",
      "--token-env",
      "HL_GH_TOKEN",
    );
  const env = { ...process.env, HL_GH_TOKEN: "ghp_planted_token_0123456789" };

  it("creates the comment, then edits it, and sets a status, in GitHub's request shapes", async () => {
    const github = await githubServer("o/r");
    try {
      expect((await runHarness(args(github.url, "gh-1"), repo, env)).exitCode).toBe(0);
      expect((await runHarness(args(github.url, "gh-2"), repo, env)).exitCode).toBe(0);
      expect(github.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        "GET /repos/o/r/pulls/7",
        `POST /repos/o/r/statuses/${SHA}`,
        "GET /user",
        "GET /repos/o/r/issues/7/comments",
        "POST /repos/o/r/issues/7/comments",
        "GET /repos/o/r/pulls/7",
        `POST /repos/o/r/statuses/${SHA}`,
        "GET /user",
        "GET /repos/o/r/issues/7/comments",
        "PATCH /repos/o/r/issues/comments/101",
      ]);
      for (const request of github.requests) {
        expect(request.headers.authorization).toBe("Bearer ghp_planted_token_0123456789");
        expect(request.headers.accept).toBe("application/vnd.github+json");
        expect(request.headers["x-github-api-version"]).toBe("2022-11-28");
      }
      const status = github.requests.find((r) => r.path.includes("/statuses/"))?.body as Record<
        string,
        unknown
      >;
      // The fields GitHub's recorded status request has, with a state GitHub knows.
      expect(Object.keys(status).sort()).toEqual(
        Object.keys(recorded.find((r) => r.method === "post")?.body ?? {})
          .filter((key) => key !== "target_url")
          .sort(),
      );
      expect(["error", "failure", "pending", "success"]).toContain(status.state);
      expect(github.comments.map((c) => [c.id, c.user.login])).toEqual([
        [99, "mallory"],
        [101, "github-actions[bot]"],
      ]);
      expect(github.comments[0]?.body).toBe("<!-- harnesslab-ci:baseline -->\nfake");
      expect(github.comments[1]?.body).toMatch(
        /^<!-- harnesslab-ci:baseline -->\n### harnesslab: no change/,
      );
      expect(JSON.stringify(github.comments)).not.toContain("ghp_planted");
    } finally {
      github.close();
    }
  });

  it("posts nothing when the pull request's head moved on past --head-sha", async () => {
    const github = await githubServer("o/r");
    try {
      const run = await runHarness(
        [...args(github.url, "gh-stale"), "--head-sha", "1111111111111111111111111111111111111111"],
        repo,
        env,
      );
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain("the run for the newer head reports; this one posts nothing");
      expect(github.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        "GET /repos/o/r/pulls/7",
      ]);
    } finally {
      github.close();
    }
  });

  it("runs and posts nothing for a pull request from a fork", async () => {
    const github = await githubServer("someone-else/r");
    try {
      const run = await runHarness(args(github.url, "gh-fork"), repo, env);
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain("pull request #7 comes from a fork (someone-else/r)");
      expect(github.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        "GET /repos/o/r/pulls/7",
      ]);
      await expect(readdir(join(base, "gh-fork"))).rejects.toThrow();
    } finally {
      github.close();
    }
  });

  it("refuses --forge without what it needs, and an unset token variable, before anything", async () => {
    const missing = await runHarness(
      ["ci", manifest(), "--baseline-ref", "HEAD", "--forge", "github"],
      repo,
    );
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("--forge github needs --api-url, --repo, --pr, --token-env");
    const unset = await runHarness(args("http://127.0.0.1:9", "gh-unset"), repo, {
      ...process.env,
      HL_GH_TOKEN: "",
    });
    expect(unset.exitCode).toBe(2);
    expect(unset.stderr).toContain("--token-env: HL_GH_TOKEN is not set");
  });
});
