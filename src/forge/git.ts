// Optional git behind a repository's pull requests: a bare repository per forge instance,
// cloned from one the caller names, so `merge` writes a real merge commit on the base
// branch and an agent can clone the code (file URL). Every command is an argument array
// with a minimal environment and no user or system git configuration.
import { minimalEnv, runCommand } from "../shared/index.js";

interface MergeInput {
  base: string;
  head: string;
  style: string;
  title: string;
  message: string;
  author: string;
}

type MergeResult = { ok: true; sha: string } | { ok: false; status: number; message: string };

export interface GitBacking {
  /** The commit a branch points at, or undefined when the branch does not exist. */
  branchSha(gitDir: string, branch: string): Promise<string | undefined>;
  merge(gitDir: string, input: MergeInput): Promise<MergeResult>;
}

const TIMEOUT_MS = 30_000;
const BRANCH = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,200}$/;

function gitEnv(author?: string): NodeJS.ProcessEnv {
  const name = author ?? "harnesslab forge";
  return minimalEnv({
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: name,
    GIT_AUTHOR_EMAIL: `${name.toLowerCase()}@noreply.localhost`,
    GIT_COMMITTER_NAME: name,
    GIT_COMMITTER_EMAIL: `${name.toLowerCase()}@noreply.localhost`,
  });
}

async function git(args: string[], cwd: string, author?: string) {
  return runCommand(["git", ...args], { cwd, env: gitEnv(author), timeoutMs: TIMEOUT_MS });
}

async function mustGit(args: string[], cwd: string, author?: string): Promise<string> {
  const result = await git(args, cwd, author);
  if (result.exitCode !== 0)
    throw new Error(`git ${args[0]} failed (${result.exitCode}): ${result.stderr.trim()}`);
  return result.stdout.trim();
}

/** Makes `target` a bare copy of the git repository at `source`, with every branch. */
export async function cloneBare(source: string, target: string): Promise<void> {
  await mustGit(["clone", "--bare", "--quiet", "--no-hardlinks", source, target], process.cwd());
}

/** The branch names of a bare repository. */
export async function listBranches(gitDir: string): Promise<string[]> {
  const out = await mustGit(["for-each-ref", "--format=%(refname:short)", "refs/heads"], gitDir);
  return out === "" ? [] : out.split("\n");
}

export function createGitBacking(): GitBacking {
  const branchSha = async (gitDir: string, branch: string): Promise<string | undefined> => {
    if (!BRANCH.test(branch)) return undefined;
    const result = await git(
      ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`],
      gitDir,
    );
    return result.exitCode === 0 ? result.stdout.trim() : undefined;
  };
  return {
    branchSha,
    async merge(gitDir, input) {
      const base = await branchSha(gitDir, input.base);
      const head = await branchSha(gitDir, input.head);
      // A pull request whose branches are not in git (a seeded one) merges as a state change.
      if (base === undefined || head === undefined) return { ok: true, sha: "" };
      if (input.style === "rebase")
        return {
          ok: false,
          status: 405,
          message:
            "rebase merges are not supported by the local forge; use merge, rebase-merge, squash or fast-forward-only",
        };
      if (input.style === "fast-forward-only") {
        const ancestor = await git(["merge-base", "--is-ancestor", base, head], gitDir);
        if (ancestor.exitCode !== 0)
          return {
            ok: false,
            status: 405,
            message: "fast-forward-only merge is not possible: the base has moved",
          };
        await mustGit(["update-ref", `refs/heads/${input.base}`, head, base], gitDir);
        return { ok: true, sha: head };
      }
      const tree = await git(["merge-tree", "--write-tree", base, head], gitDir);
      if (tree.exitCode === 1) return { ok: false, status: 409, message: "Merge Conflict" };
      if (tree.exitCode !== 0) throw new Error(`git merge-tree failed: ${tree.stderr.trim()}`);
      const treeId = tree.stdout.split("\n")[0]!.trim();
      const parents = input.style === "squash" ? ["-p", base] : ["-p", base, "-p", head];
      const text = input.message ? `${input.title}\n\n${input.message}` : input.title;
      const commit = await mustGit(
        ["commit-tree", treeId, ...parents, "-m", text],
        gitDir,
        input.author,
      );
      await mustGit(["update-ref", `refs/heads/${input.base}`, commit, base], gitDir);
      return { ok: true, sha: commit };
    },
  };
}
