// A fixture's git baseline built once per run and shared by its trials. What makes a trial's
// repository expensive is the commit of the whole fixture (hashing, compressing and writing an
// object per file); here that happens once, into packs that each trial's `.git/objects/pack`
// links to, and a trial's own part is an index refreshed against its copy.
//
// A linked pack is the same inode in every trial, so a write to one would be a write to all.
// Nothing can write to them: git never changes a pack once written (it writes new ones and
// renames); every command that runs the trial's code sees the trial's `.git` through a read-only
// mount and keeps no capability that could override it; and link() cannot cross from that mount
// into the writable trial (EXDEV), so no writable name for a pack can be made inside. What is left
// is code running as the harness outside any sandbox: under --unsafe-no-sandbox the runner does
// not share baselines, and the experimenter's own scripted agent modules are caught by
// `assertBaselineIntact`, which every capture runs once git has read the packs.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import {
  chmod,
  constants,
  copyFile,
  link,
  lstat,
  mkdir,
  readdir,
  readFile,
  rename,
  stat,
  writeFile,
} from "node:fs/promises";
import { devNull, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { checkCopy, copyFixture } from "./copy.js";
import { createBaseline, git, refreshIndex, trialConfig, writeNeutralAttributes } from "./git.js";
import { BASELINE_TEMP_PREFIX, createTempDir, removeTree } from "./temp.js";
import type {
  BaselineArea,
  CreateBaselineAreaOptions,
  GitBaseline,
  SharedBaseline,
  TreeSnapshot,
} from "./types.js";
import { WorkspaceError } from "./types.js";

/** A file the baseline shares, as it was when written. */
interface SharedFile {
  name: string;
  path: string;
  dev: bigint;
  ino: bigint;
  size: bigint;
  mode: bigint;
  /** Hex SHA-256 of the content. */
  sha256: string;
  /**
   * The mtime when the content was last found to be `sha256`. Git moves it forward by itself
   * (writing an object a pack already holds, it touches the pack instead), so a new mtime means
   * reading the file again, not that it changed.
   */
  mtimeNs: bigint;
}

/** What a trial's repository is made from, kept by the harness only. */
interface BaselineParts {
  files: SharedFile[];
  /** The text of `.git/HEAD`. */
  head: string;
  /** The branch HEAD names (`refs/heads/…`), which holds the commit. */
  ref: string;
  /** The config `git init` wrote, to which each trial's own settings are added. */
  initConfig: string;
  /**
   * An index read from the commit, with no stat data: each trial writes it instead of running
   * `git read-tree`, and git compares every file with it by content until the index is refreshed.
   */
  index: Buffer;
}

// Kept apart from the public object, so nothing outside this stage reaches the paths or can hand
// `createTrialWorkspace` a baseline this module did not build.
const partsOf = new WeakMap<SharedBaseline, BaselineParts>();

/** Creates a run's area for shared baselines; see `BaselineArea`. */
export async function createBaselineArea(
  options: CreateBaselineAreaOptions = {},
): Promise<BaselineArea> {
  const dir = await createTempDir(
    options.tempParent ?? tmpdir(),
    BASELINE_TEMP_PREFIX,
    options.beforeCreate,
  );
  let built = 0;
  let removed: Promise<void> | undefined;
  return {
    dir,
    build: (fixtureDir, expectedFixture) => {
      built += 1;
      return buildBaseline(fixtureDir, expectedFixture, join(dir, String(built)));
    },
    dispose: () => {
      removed ??= removeTree(dir);
      return removed;
    },
  };
}

async function buildBaseline(
  fixtureDir: string,
  expected: TreeSnapshot,
  dir: string,
): Promise<SharedBaseline> {
  const tree = join(dir, "tree");
  const home = join(dir, "home");
  const packDir = join(dir, "pack");
  try {
    await mkdir(dir, { mode: 0o700 });
    await mkdir(home);
    await copyFixture(fixtureDir, tree);
    await checkCopy(tree, expected);
    // The build repository's config is only a template: each trial writes its own hooks path.
    const built = await createBaseline(tree, home, devNull, { packed: true });
    const indexFile = join(dir, "index");
    await git(["read-tree", built.commit], tree, home, "git-failed", { GIT_INDEX_FILE: indexFile });
    const index = await readFile(indexFile);
    const objects = join(tree, ".git", "objects");
    await requireOnlyPacks(objects);
    await rename(join(objects, "pack"), packDir);
    // The copy and the rest of its repository are not needed: trials copy the fixture and make
    // their own index, so the packs are all that stays.
    await Promise.all([removeTree(tree), removeTree(home)]);
    const ref = /^ref: (refs\/heads\/\S+)\n?$/.exec(built.head)?.[1];
    if (ref === undefined)
      throw new WorkspaceError("git-failed", "the baseline's HEAD names no branch", {
        head: built.head.slice(0, 200),
      });
    const baseline: SharedBaseline = { fixture: expected, commit: built.commit };
    partsOf.set(baseline, {
      files: await fingerprint(packDir),
      head: built.head,
      ref,
      initConfig: built.initConfig,
      index,
    });
    return baseline;
  } catch (error) {
    await removeTree(dir).catch(() => {});
    if (error instanceof WorkspaceError) throw error;
    throw new WorkspaceError(
      "git-failed",
      `cannot build the shared baseline: ${(error as Error).message}`,
      { code: (error as NodeJS.ErrnoException).code },
    );
  }
}

/** A trial links only the packs: an object git left loose would be missing from every trial. */
async function requireOnlyPacks(objects: string): Promise<void> {
  const loose: string[] = [];
  for (const entry of await readdir(objects, { withFileTypes: true })) {
    if (entry.name === "pack" || entry.name === "info") continue;
    const inside = entry.isDirectory() ? await readdir(join(objects, entry.name)) : [entry.name];
    loose.push(...inside.map((name) => `${entry.name}/${name}`));
  }
  if (loose.length > 0)
    throw new WorkspaceError("git-failed", "git left objects of the baseline outside its packs", {
      loose: loose.slice(0, 20),
    });
}

async function fingerprint(packDir: string): Promise<SharedFile[]> {
  const names = (await readdir(packDir)).sort();
  const files: SharedFile[] = [];
  for (const name of names) {
    const path = join(packDir, name);
    // Git writes packs read-only already; this holds whatever git's defaults become.
    await chmod(path, 0o444);
    const info = await lstat(path, { bigint: true });
    if (!info.isFile())
      throw new WorkspaceError("git-failed", `the baseline's pack directory holds ${name}`, {
        name,
      });
    files.push({
      name,
      path,
      dev: info.dev,
      ino: info.ino,
      size: info.size,
      mode: info.mode,
      sha256: await hashFile(path),
      mtimeNs: info.mtimeNs,
    });
  }
  return files;
}

function parts(baseline: SharedBaseline): BaselineParts {
  const found = partsOf.get(baseline);
  if (found === undefined)
    throw new Error("createTrialWorkspace: the shared baseline was not built by a BaselineArea");
  return found;
}

async function hashFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * Why a shared file is not the one the baseline wrote, or null when it is (or, looked at through
 * a trial's own pack directory, when that trial put another file in its place: its own objects,
 * its own doing, nobody else's).
 */
async function changeOf(file: SharedFile, packDir: string | undefined): Promise<string | null> {
  const path = packDir === undefined ? file.path : join(packDir, file.name);
  const now = await lstat(path, { bigint: true }).catch(() => undefined);
  const same = now !== undefined && now.dev === file.dev && now.ino === file.ino;
  if (!same) return packDir === undefined ? (now === undefined ? "removed" : "replaced") : null;
  if (now.size !== file.size || now.mode !== file.mode) return "written";
  if (now.mtimeNs === file.mtimeNs) return null;
  if ((await hashFile(path)) !== file.sha256) return "written";
  file.mtimeNs = now.mtimeNs;
  return null;
}

/**
 * Refuses a shared baseline whose files are not the ones it wrote (written in place, replaced or
 * removed). Only code running as the harness outside the sandbox can have done it, and which
 * trial it was is unknown, so it is the run's fixture that changed, not a trial's failure. With
 * `packDir` (a trial's `.git/objects/pack`) the files are looked at through that trial's links,
 * which still work once the area is gone. A file is read again only when its mtime moved; a
 * writer that also puts the mtime back is not caught: reading every pack at every check would
 * cost each trial a read of the whole baseline, against code the threat model already trusts
 * (the experimenter's scripted agents).
 */
export async function assertBaselineIntact(
  baseline: SharedBaseline,
  packDir?: string,
): Promise<void> {
  for (const file of parts(baseline).files) {
    const change = await changeOf(file, packDir);
    if (change !== null)
      throw new WorkspaceError(
        "fixture-changed",
        `the run's shared baseline of the fixture changed during the run (${file.name} was ${change}); no trial may start from or be captured against another baseline`,
        { file: file.name, change },
      );
  }
}

/** Errors for which a private copy of a pack does as well as a link, only slower. */
const NO_LINK = new Set(["EXDEV", "EPERM", "EMLINK", "ENOTSUP", "EOPNOTSUPP", "EACCES"]);

async function linkShared(file: SharedFile, target: string): Promise<void> {
  try {
    await link(file.path, target);
  } catch (error) {
    if (!NO_LINK.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
    await copyFile(file.path, target, constants.COPYFILE_EXCL);
    await chmod(target, 0o444);
  }
}

/** The repository `materializeBaseline` made, or word that the copy differs from the baseline. */
export type MaterializedBaseline =
  | { ok: true; baseline: GitBaseline }
  | { ok: false; output: string };

/** A private baseline's `.git`, with the shared packs linked and an index read from the commit. */
async function linkRepository(shared: SharedBaseline, root: string, config: string): Promise<void> {
  const own = parts(shared);
  await assertBaselineIntact(shared);
  const gitDir = join(root, ".git");
  try {
    // Recursive: the copy being made beside it may not have made the root yet.
    await mkdir(gitDir, { recursive: true });
    await Promise.all(
      ["objects/pack", "objects/info", "refs/tags", dirname(own.ref)].map((dir) =>
        mkdir(join(gitDir, dir), { recursive: true }),
      ),
    );
    // Exclusive creates throughout: the directory is new, and nothing in it is followed.
    await Promise.all([
      writeFile(join(gitDir, "HEAD"), own.head, { flag: "wx" }),
      writeFile(join(gitDir, own.ref), `${shared.commit}\n`, { flag: "wx" }),
      writeFile(join(gitDir, "config"), config, { flag: "wx" }),
      writeFile(join(gitDir, "index"), own.index, { flag: "wx" }),
      writeNeutralAttributes(gitDir),
      ...own.files.map((file) => linkShared(file, join(gitDir, "objects", "pack", file.name))),
    ]);
  } catch (error) {
    // The message names no path: the area's must not reach a trial's artifacts.
    throw new WorkspaceError(
      "git-failed",
      `cannot set up the trial's repository from the shared baseline (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      { code: (error as NodeJS.ErrnoException).code },
    );
  }
}

/**
 * Makes `root` a repository of the shared baseline while the fixture is being copied into it
 * (`copied` says, once the copy is made, whether it holds the baseline's files): the `.git` a
 * private baseline would have, with the baseline's packs linked instead of a commit made, and an
 * index read from the commit and refreshed against the copy. The refresh hashes every file (no
 * stat data matches a new copy), so a copy that differs from the baseline in any file's content
 * or executable bit is reported, not trusted. Without `refresh` (a copy that checked itself as it
 * was made) the index keeps no stat data.
 */
export async function materializeBaseline(
  shared: SharedBaseline,
  root: string,
  home: string,
  hooksDir: string,
  copied: Promise<boolean>,
  options: { refresh: boolean } = { refresh: true },
): Promise<MaterializedBaseline> {
  const config = trialConfig(parts(shared).initConfig, hooksDir);
  // Both run to their end before either's failure is reported, so nothing still writes into the
  // workspace when the caller removes it.
  const [copy, linked] = await Promise.allSettled([copied, linkRepository(shared, root, config)]);
  if (copy.status === "rejected") throw copy.reason;
  if (linked.status === "rejected") throw linked.reason;
  if (!copy.value) return { ok: false, output: "" };
  if (options.refresh) {
    const refreshed = await refreshIndex(root, home);
    if (!refreshed.clean) return { ok: false, output: refreshed.output };
  }
  const indexPath = join(root, ".git", "index");
  return {
    ok: true,
    baseline: {
      commit: shared.commit,
      config,
      index: await readFile(indexPath),
      indexMtime: (await stat(indexPath)).mtime,
    },
  };
}
