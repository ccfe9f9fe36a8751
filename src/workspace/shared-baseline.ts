// A fixture's git baseline built once per run and shared by its trials. What makes a trial's
// repository expensive is the commit of the whole fixture (hashing, compressing and writing an
// object per file); here that happens once, into packs that each trial's `.git/objects/pack`
// links to. Checking a copy against the fixture (hashing every file again) is done once too: the
// checked copy is kept, every trial's copy is made from it, and a copy's index gets the stat data
// of the files just copied, so neither the harness nor git has to read them again.
//
// A linked pack is the same inode in every trial, so a write to one would be a write to all.
// Nothing can write to them: git never changes a pack once written (it writes new ones and
// renames); every command that runs the trial's code sees the trial's `.git` through a read-only
// mount and keeps no capability that could override it; and link() cannot cross from that mount
// into the writable trial (EXDEV), so no writable name for a pack can be made inside. What is left
// is code running as the harness outside any sandbox: under --unsafe-no-sandbox the runner does
// not share baselines, and the experimenter's own scripted agent modules are caught by
// `assertBaselineIntact`, which every capture runs once git has read the packs.
import {
  type BigIntStats,
  chmodSync,
  copyFileSync,
  linkSync,
  mkdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { chmod, constants, lstat, mkdir, readdir, readFile, rename } from "node:fs/promises";
import { devNull, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { checkCopy, copyFixture } from "./copy.js";
import { createBaseline, git, trialConfig, writeNeutralAttributes } from "./git.js";
import { type IndexLayout, indexWithStats, readIndexLayout } from "./git-index.js";
import { copyAll, lstatAll, lstatNow, makeDirs } from "./sliced-fs.js";
import {
  contentByPath,
  hashFile,
  type KnownTree,
  knownTree,
  rememberTree,
  statKey,
} from "./snapshot.js";
import { BASELINE_TEMP_PREFIX, createTempDir, removeTree } from "./temp.js";
import type {
  BaselineArea,
  CreateBaselineAreaOptions,
  GitBaseline,
  SharedBaseline,
  TreeEntry,
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
   * An index read from the commit, with no stat data: each copy gets it with the stat data of
   * its own files (`indexWithStats`) instead of running `git read-tree` and a refresh.
   */
  index: IndexLayout;
  /**
   * The run's own copy of the fixture, checked against the frozen snapshot when the baseline was
   * built: every copy is made from it, never from the task's directory, which may change.
   */
  tree: string;
  /** Its files' stat data once checked (`rememberTree`): each copy checks them again. */
  treeKnown: KnownTree;
  /** The frozen fixture's files by path, as every copy's `KnownTree` records them. */
  content: ReadonlyMap<string, TreeEntry>;
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
    const index = readIndexLayout(await readFile(indexFile));
    const objects = join(tree, ".git", "objects");
    await requireOnlyPacks(objects);
    await rename(join(objects, "pack"), packDir);
    // The packs and the checked copy are what stays: trials copy the copy and link the packs.
    await Promise.all([removeTree(join(tree, ".git")), removeTree(home)]);
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
      tree,
      treeKnown: await rememberTree(tree, expected, dir),
      content: contentByPath(expected),
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
      sha256: (await hashFile(path)).sha256,
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

/**
 * Why a shared file is not the one the baseline wrote, or null when it is (or, looked at through
 * a trial's own pack directory, when that trial put another file in its place: its own objects,
 * its own doing, nobody else's).
 */
async function changeOf(file: SharedFile, packDir: string | undefined): Promise<string | null> {
  const path = packDir === undefined ? file.path : join(packDir, file.name);
  const now = lstatNow(path);
  const same = now !== undefined && now.dev === file.dev && now.ino === file.ino;
  if (!same) return packDir === undefined ? (now === undefined ? "removed" : "replaced") : null;
  if (now.size !== file.size || now.mode !== file.mode) return "written";
  if (now.mtimeNs === file.mtimeNs) return null;
  if ((await hashFile(path)).sha256 !== file.sha256) return "written";
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

function linkShared(file: SharedFile, target: string): void {
  try {
    linkSync(file.path, target);
  } catch (error) {
    if (!NO_LINK.has((error as NodeJS.ErrnoException).code ?? "")) throw error;
    copyFileSync(file.path, target, constants.COPYFILE_EXCL);
    chmodSync(target, 0o444);
  }
}

/** A private baseline's `.git` but its index, with the shared packs linked. */
async function linkRepository(shared: SharedBaseline, root: string, config: string): Promise<void> {
  const own = parts(shared);
  await assertBaselineIntact(shared);
  const gitDir = join(root, ".git");
  // On the main thread: a dozen small calls cost less there than through the thread pool.
  try {
    for (const dir of ["objects/pack", "objects/info", "refs/tags", dirname(own.ref)])
      mkdirSync(join(gitDir, dir), { recursive: true });
    // Exclusive creates throughout: the directory is new, and nothing in it is followed.
    writeFileSync(join(gitDir, "HEAD"), own.head, { flag: "wx" });
    writeFileSync(join(gitDir, own.ref), `${shared.commit}\n`, { flag: "wx" });
    writeFileSync(join(gitDir, "config"), config, { flag: "wx" });
    writeNeutralAttributes(gitDir);
    for (const file of own.files) linkShared(file, join(gitDir, "objects", "pack", file.name));
  } catch (error) {
    // The message names no path: the area's must not reach a trial's artifacts.
    throw new WorkspaceError(
      "git-failed",
      `cannot set up the trial's repository from the shared baseline (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      { code: (error as NodeJS.ErrnoException).code },
    );
  }
}

/** What `materializeBaseline` made: the copy's repository, and the copy as the harness knows it. */
export interface MaterializedBaseline {
  baseline: GitBaseline;
  /** The copy's stat data, each file known to hold the frozen fixture's content for its path. */
  known: KnownTree;
}

function copyChanged(path: string, why: string): WorkspaceError {
  return new WorkspaceError(
    "fixture-changed",
    `the run's copy of the fixture changed during the run (${path} ${why}); no trial may start from or be graded on another fixture`,
    { paths: [path] },
  );
}

/**
 * Copies the run's copy of the fixture into `root` (which need not exist yet) and reads the stat
 * data of what it made. Each source file is looked at again once every copy is made: stat data
 * unchanged since it was checked mean the bytes copied are the ones checked (any write moves a
 * file's ctime, and only code running as the harness can reach the area at all).
 */
async function copyTree(
  own: BaselineParts,
  fixture: TreeSnapshot,
  root: string,
): Promise<{ files: Map<string, BigIntStats>; dirs: Map<string, BigIntStats> }> {
  mkdirSync(root, { recursive: true });
  const dirPaths = fixture.files.filter((e) => e.kind === "dir").map((e) => e.path);
  // Sorted order puts every directory before its contents.
  await makeDirs(dirPaths.map((path) => join(root, path)));
  const copied = fixture.files.filter((entry) => entry.kind === "file");
  const copies = copied.map((entry) => ({
    source: join(own.tree, entry.path),
    target: join(root, entry.path),
    bytes: entry.bytes,
  }));
  await copyAll(copies, (i, error) =>
    error.code === "ENOENT" ? copyChanged(copied[i]!.path, "was removed") : error,
  );
  // Each source looked at once every copy is made, so a write during any copy shows.
  const sources = await lstatAll(copies.map((copy) => copy.source));
  const targets = await lstatAll(copies.map((copy) => copy.target));
  const files = new Map<string, BigIntStats>();
  for (const [i, entry] of copied.entries()) {
    const was = sources[i];
    const made = targets[i];
    if (was === undefined || statKey(was) !== own.treeKnown.stats.get(entry.path))
      throw copyChanged(entry.path, "was written, replaced or removed");
    if (made === undefined) throw copyChanged(entry.path, "could not be copied");
    files.set(entry.path, made);
  }
  // A source changed within the clock tick it was checked in is compared by content.
  for (const [i, entry] of copied.entries()) {
    if (!own.treeKnown.fresh.has(entry.path)) continue;
    const now = await hashFile(copies[i]!.target);
    if (now.sha256 !== entry.sha256 || now.bytes !== entry.bytes)
      throw copyChanged(entry.path, "holds other bytes");
  }
  const withRoot = ["", ...dirPaths];
  const dirStats = await lstatAll(withRoot.map((path) => join(root, path)));
  const dirs = new Map<string, BigIntStats>();
  for (const [i, path] of withRoot.entries()) {
    const info = dirStats[i];
    if (info === undefined) throw copyChanged(path, "could not be made");
    dirs.set(path, info);
  }
  return { files, dirs };
}

/**
 * Makes `root` a copy of the shared baseline's fixture with its repository: the run's checked
 * copy of the fixture copied in (see `copyTree`) while the `.git` a private baseline would have
 * is made beside it, with the baseline's packs linked instead of a commit made, and an index
 * read from the commit given the copy's stat data, so that git trusts the copy's files without
 * reading them. `privateDir` is the harness's, on the copy's filesystem, where the file clock is
 * read (`knownTree`).
 */
export async function materializeBaseline(
  shared: SharedBaseline,
  root: string,
  hooksDir: string,
  privateDir: string,
): Promise<MaterializedBaseline> {
  const own = parts(shared);
  const config = trialConfig(own.initConfig, hooksDir);
  // Both run to their end before either's failure is reported, so nothing still writes into the
  // workspace when the caller removes it.
  const [copy, linked] = await Promise.allSettled([
    copyTree(own, shared.fixture, root),
    linkRepository(shared, root, config),
  ]);
  if (copy.status === "rejected") {
    const error = copy.reason as NodeJS.ErrnoException;
    if (error instanceof WorkspaceError) throw error;
    // The message names no path: the area's must not reach a trial's artifacts.
    throw new WorkspaceError(
      "copy-failed",
      `cannot copy the fixture (${error.code ?? error.message})`,
      {
        code: error.code,
      },
    );
  }
  if (linked.status === "rejected") throw linked.reason;
  const known = await knownTree(copy.value.files, copy.value.dirs, own.content, privateDir);
  const index = indexWithStats(
    own.index,
    (path) => copy.value.files.get(path),
    known.clockNs === undefined ? undefined : known.clockNs / 1_000_000_000n,
  );
  const indexPath = join(root, ".git", "index");
  try {
    writeFileSync(indexPath, index, { flag: "wx" });
    return {
      baseline: { commit: shared.commit, config, index, indexMtime: statSync(indexPath).mtime },
      known,
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new WorkspaceError("git-failed", `cannot write the trial's index (${code})`, { code });
  }
}
