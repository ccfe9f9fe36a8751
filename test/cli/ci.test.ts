// `harness ci` on a real git repository: the setup under test as the base commit has it against
// the working tree, one paired verdict, the exit code by the verdict; nothing run when nothing
// changed; the base read with git and gone afterwards. (The example's scripted agents stand in
// for a team's: a better agent module and a setup with the careful-fixes habits at the head.)
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exitForCi } from "../../src/cli/commands/ci.js";
import { runHarness } from "../support/cli.js";
import { git } from "../support/git.js";

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

describe("harness ci", () => {
  it("compares the setup at the base ref with the working tree and accepts the better one", async () => {
    const out = join(base, "out-accept");
    const run = await runHarness(
      [
        "ci",
        manifest(),
        "--baseline-ref",
        "HEAD~1",
        "--variant",
        "baseline",
        "--out",
        out,
        "--json",
      ],
      repo,
    );
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
      /^\.harnesslab-ci-[0-9a-f]{8}\/fix-the-bug\/fix-the-bug\.harness$/,
    );
  });

  it("runs no trial when the setup is the same at the base, and says so", async () => {
    const out = join(base, "out-same");
    const run = await runHarness(
      ["ci", manifest(), "--baseline-ref", "HEAD", "--variant", "baseline", "--out", out],
      repo,
    );
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
        [
          "ci",
          manifest(),
          "--baseline-ref",
          "HEAD",
          "--variant",
          "baseline",
          "--out",
          join(base, "out-reject"),
          "--json",
        ],
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
      const args = ["ci", manifest(), "--baseline-ref", "HEAD", "--variant", "baseline"];
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

  it("refuses with exit 2 what git cannot give, naming it", async () => {
    const noRef = await runHarness(
      ["ci", manifest(), "--baseline-ref", "no-such-branch", "--variant", "baseline"],
      repo,
    );
    expect(noRef.exitCode).toBe(2);
    expect(noRef.stderr).toContain('--baseline-ref "no-such-branch" names no commit');
    const option = await runHarness(
      ["ci", manifest(), "--baseline-ref", "--upload-pack=x", "--variant", "baseline"],
      repo,
    );
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
