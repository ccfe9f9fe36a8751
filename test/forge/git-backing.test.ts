// Pull requests backed by real git: merge writes a real merge commit on the base branch of
// the forge's bare copy, a conflict is refused, and the code can be cloned from cloneUrl.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { giteaApi } from "gitea-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startForge } from "../../src/forge/index.js";
import { git } from "../support/git.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-forge-git-"));
  const source = join(dir, "source");
  git(dir, "init", "--quiet", "--initial-branch=main", source);
  await writeFile(join(source, "a.txt"), "one\n");
  git(source, "add", ".");
  git(source, "commit", "--quiet", "-m", "first");
  git(source, "checkout", "--quiet", "-b", "feature");
  await writeFile(join(source, "b.txt"), "new file\n");
  git(source, "add", ".");
  git(source, "commit", "--quiet", "-m", "add b");
  git(source, "checkout", "--quiet", "-b", "clash", "main");
  await writeFile(join(source, "a.txt"), "clash\n");
  git(source, "commit", "--quiet", "-am", "clash");
  git(source, "checkout", "--quiet", "main");
  await writeFile(join(source, "a.txt"), "two\n");
  git(source, "commit", "--quiet", "-am", "second");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("git-backed pull requests", () => {
  it("merges with a real merge commit, refuses a conflict and serves the code by cloneUrl", async () => {
    const source = join(dir, "source");
    const forge = await startForge({ git: source });
    try {
      const api = giteaApi(forge.url, { token: forge.token });
      const { owner, repo } = forge;
      const pull = await api.repos.repoCreatePullRequest(owner, repo, {
        head: "feature",
        base: "main",
        title: "Add b",
      });
      expect(pull.data.head?.sha).toBe(git(source, "rev-parse", "feature"));
      const clash = await api.repos.repoCreatePullRequest(owner, repo, {
        head: "clash",
        base: "main",
        title: "Clash",
      });
      await api.repos.repoMergePullRequest(owner, repo, pull.data.number!, { Do: "merge" });
      const merged = (await api.repos.repoGetPullRequest(owner, repo, pull.data.number!)).data;
      const bare = forge.cloneUrl!.replace(/^file:\/\//, "");
      expect(merged.merge_commit_sha).toBe(git(bare, "rev-parse", "main"));
      expect(git(bare, "rev-list", "--parents", "-n", "1", "main").split(" ")).toHaveLength(3);
      const conflict = await api.repos
        .repoMergePullRequest(owner, repo, clash.data.number!, { Do: "merge" })
        .catch((r) => r);
      expect(conflict.status).toBe(409);
      const clone = join(dir, "clone");
      git(dir, "clone", "--quiet", forge.cloneUrl!, clone);
      expect(await readFile(join(clone, "b.txt"), "utf8")).toBe("new file\n");
      expect(await readFile(join(clone, "a.txt"), "utf8")).toBe("two\n");
      // The source repository is copied, never changed.
      expect(git(source, "rev-parse", "main")).not.toBe(merged.merge_commit_sha);
    } finally {
      await forge.close();
    }
  });
});
