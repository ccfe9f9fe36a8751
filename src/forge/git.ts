// Optional git behind a repository's pull requests: a bare repository per forge instance,
// cloned from one the caller names, so `merge` writes a real merge commit on the base
// branch and an agent can clone the code (file URL). Every command is an argument array
// with a minimal environment and no user or system git configuration.
import { execFile } from "node:child_process";
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

/** A file a pull request changes, as `git diff --numstat` and `--name-status` tell it. */
export interface ChangedFile {
  filename: string;
  previousFilename?: string;
  status: "added" | "modified" | "deleted" | "renamed" | "copied" | "changed";
  additions: number;
  deletions: number;
}

/** A commit of a pull request, newest first. */
export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: { name: string; email: string; date: string };
  committer: { name: string; email: string; date: string };
  message: string;
}

export interface GitBacking {
  /** The commit a branch points at, or undefined when the branch does not exist. */
  branchSha(gitDir: string, branch: string): Promise<string | undefined>;
  merge(gitDir: string, input: MergeInput): Promise<MergeResult>;
  /** What `head` changes since it left `base` (three-dot), as a diff or a mailbox of patches. */
  diff(gitDir: string, base: string, head: string, form: "diff" | "patch"): Promise<string>;
  changedFiles(gitDir: string, base: string, head: string): Promise<ChangedFile[]>;
  commits(gitDir: string, base: string, head: string): Promise<CommitInfo[]>;
  /** Commits reachable from `ref` (touching `path` when given), newest first. */
  log(gitDir: string, ref: string, path?: string): Promise<CommitInfo[] | undefined>;
  /** A file (its bytes) or a folder (its entries) at `ref`; undefined when neither exists. */
  readPath(gitDir: string, ref: string, path: string): Promise<PathAtRef | undefined>;
}

/** What a path names at a commit. */
type PathAtRef =
  | { kind: "file"; path: string; sha: string; size: number; content: Buffer; commit: string }
  | {
      kind: "dir";
      path: string;
      sha: string;
      commit: string;
      entries: Array<{
        name: string;
        path: string;
        type: "file" | "dir" | "symlink" | "submodule";
        sha: string;
        size: number;
      }>;
    };

/** Gitea's largest blob the API hands out (`default_max_blob_size`). */
const MAX_BLOB_BYTES = 10_485_760;
const LOG_FORMAT = ["%H", "%T", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%B"].join("%x00");

function parseLog(out: string): CommitInfo[] {
  return out
    .split("\x1e")
    .map((entry) => entry.replace(/^\n/, ""))
    .filter((entry) => entry !== "")
    .map((entry) => {
      const [
        sha = "",
        tree = "",
        parents = "",
        an = "",
        ae = "",
        ad = "",
        cn = "",
        ce = "",
        cd = "",
        ...message
      ] = entry.split("\0");
      return {
        sha,
        tree,
        parents: parents === "" ? [] : parents.split(" "),
        author: { name: an, email: ae, date: ad },
        committer: { name: cn, email: ce, date: cd },
        message: message.join("\0"),
      };
    });
}

/** A blob's bytes, as git stores them (no text decoding on the way). */
function blobBytes(gitDir: string, sha: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      ["cat-file", "blob", sha],
      {
        cwd: gitDir,
        env: gitEnv(),
        encoding: "buffer",
        maxBuffer: MAX_BLOB_BYTES,
        timeout: TIMEOUT_MS,
      },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

const NAME_STATUS: Record<string, ChangedFile["status"]> = {
  A: "added",
  M: "modified",
  D: "deleted",
  R: "renamed",
  C: "copied",
  T: "changed",
};

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
  /** A branch, tag or commit id as the commit it names; undefined when it names none. */
  const resolveRef = async (gitDir: string, ref: string): Promise<string | undefined> => {
    if (!/^[A-Za-z0-9._/-]{1,200}$/.test(ref) || ref.startsWith("-") || ref.includes(".."))
      return undefined;
    const result = await git(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], gitDir);
    return result.exitCode === 0 ? result.stdout.trim() : undefined;
  };
  /** The two commits, or undefined when either branch is not in git. */
  const range = async (gitDir: string, base: string, head: string) => {
    const from = await branchSha(gitDir, base);
    const to = await branchSha(gitDir, head);
    return from === undefined || to === undefined ? undefined : { from, to };
  };
  return {
    branchSha,
    async diff(gitDir, base, head, form) {
      const commits = await range(gitDir, base, head);
      if (commits === undefined) return "";
      return form === "diff"
        ? (await git(["diff", "--no-color", "--binary", `${commits.from}...${commits.to}`], gitDir))
            .stdout
        : (
            await git(
              ["format-patch", "--stdout", "--no-color", `${commits.from}..${commits.to}`],
              gitDir,
            )
          ).stdout;
    },
    async changedFiles(gitDir, base, head) {
      const commits = await range(gitDir, base, head);
      if (commits === undefined) return [];
      const span = `${commits.from}...${commits.to}`;
      const numstat = await mustGit(["diff", "--numstat", "-z", "-M", span], gitDir);
      const status = await mustGit(["diff", "--name-status", "-z", "-M", span], gitDir);
      // -z: "add\tdel\tpath\0" or, for a rename, "add\tdel\t\0old\0new\0".
      const counts: Array<{ additions: number; deletions: number }> = [];
      const numParts = numstat.split("\0");
      for (let i = 0; i < numParts.length; i += 1) {
        const part = numParts[i]!;
        if (part === "") continue;
        const [add = "0", del = "0", path = ""] = part.split("\t");
        counts.push({ additions: Number(add) || 0, deletions: Number(del) || 0 });
        if (path === "") i += 2;
      }
      const files: ChangedFile[] = [];
      const statusParts = status.split("\0");
      for (let i = 0; i < statusParts.length; i += 1) {
        const code = statusParts[i]!;
        if (code === "") continue;
        const kind = NAME_STATUS[code[0]!] ?? "changed";
        const renamed = kind === "renamed" || kind === "copied";
        const previous = renamed ? statusParts[i + 1] : undefined;
        const filename = statusParts[renamed ? i + 2 : i + 1] ?? "";
        i += renamed ? 2 : 1;
        const count = counts[files.length] ?? { additions: 0, deletions: 0 };
        files.push({
          filename,
          ...(previous === undefined ? {} : { previousFilename: previous }),
          status: kind,
          ...count,
        });
      }
      return files;
    },
    async commits(gitDir, base, head) {
      const commits = await range(gitDir, base, head);
      if (commits === undefined) return [];
      return parseLog(
        await mustGit(
          ["log", `--format=${LOG_FORMAT}%x1e`, `${commits.from}..${commits.to}`],
          gitDir,
        ),
      );
    },
    async log(gitDir, ref, path) {
      const commit = await resolveRef(gitDir, ref);
      if (commit === undefined) return undefined;
      const result = await git(
        ["log", `--format=${LOG_FORMAT}%x1e`, commit, "--", ...(path ? [path] : [])],
        gitDir,
      );
      return result.exitCode === 0 ? parseLog(result.stdout) : undefined;
    },
    async readPath(gitDir, ref, path) {
      const commit = await resolveRef(gitDir, ref);
      const clean = path.replace(/^\/+|\/+$/g, "");
      if (commit === undefined || clean.split("/").includes("..")) return undefined;
      const spec = `${commit}:${clean}`;
      const type = await git(["cat-file", "-t", spec], gitDir);
      if (type.exitCode !== 0) return undefined;
      const sha = await mustGit(["rev-parse", spec], gitDir);
      const last =
        (
          await git(["log", "-1", "--format=%H", commit, "--", clean || "."], gitDir)
        ).stdout.trim() || commit;
      if (type.stdout.trim() === "blob") {
        const content = await blobBytes(gitDir, sha);
        return { kind: "file", path: clean, sha, size: content.length, content, commit: last };
      }
      if (type.stdout.trim() !== "tree") return undefined;
      const listing = await mustGit(["ls-tree", "-z", "-l", spec], gitDir);
      const entries = listing
        .split("\0")
        .filter((line) => line !== "")
        .map((line) => {
          const [meta = "", name = ""] = line.split("\t");
          const [mode = "", kind = "", entrySha = "", size = "-"] = meta.split(/\s+/);
          const entryType =
            kind === "tree"
              ? "dir"
              : kind === "commit"
                ? "submodule"
                : mode === "120000"
                  ? "symlink"
                  : "file";
          return {
            name,
            path: clean ? `${clean}/${name}` : name,
            type: entryType as "file" | "dir" | "symlink" | "submodule",
            sha: entrySha,
            size: size === "-" ? 0 : Number(size),
          };
        });
      return { kind: "dir", path: clean, sha, commit: last, entries };
    },
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
