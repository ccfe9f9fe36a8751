// A frozen experiment as one content-addressed bundle: every file the manifest names (the
// manifest, its .harness files, fixtures, prompts, agents, grader contracts, forge seeds and
// expected states), so a worker needs no file system shared with the coordinator. The bundle's
// name is the sha256 of its canonical bytes; a worker checks them before it uses one.
import { createHash } from "node:crypto";
import {
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { z } from "zod";
import type { Experiment } from "../experiment.js";

const BUNDLE_VERSION = "harnesslab.bundle.v1";

/** The most bytes a bundle may take in Redis (compressed); a string there holds at most 512 MB. */
const MAX_BUNDLE_BYTES = 256 * 1024 * 1024;

const entrySchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("dir"), path: z.string() }),
  z.strictObject({
    kind: z.literal("file"),
    path: z.string(),
    executable: z.boolean(),
    /** base64 */
    data: z.string(),
  }),
  z.strictObject({ kind: z.literal("symlink"), path: z.string(), target: z.string() }),
]);
type BundleEntry = z.infer<typeof entrySchema>;

const bundleSchema = z.strictObject({
  schemaVersion: z.literal(BUNDLE_VERSION),
  /** The manifest, relative to the bundle's root. */
  manifest: z.string(),
  entries: z.array(entrySchema),
});
export type BundleDocument = z.infer<typeof bundleSchema>;

export interface Bundle {
  /** `sha256:<hex>` of the uncompressed canonical document. */
  hash: string;
  /** The gzip-compressed document, as stored. */
  bytes: Buffer;
  /** The manifest's path inside the bundle. */
  manifest: string;
  /** The folder the bundle's paths are relative to, on the machine that packed it. */
  root: string;
  files: number;
}

/**
 * What a bundle leaves out of an agent module's folder: installed packages, and hidden entries
 * (`.env`, `.npmrc`, `.git`: the coordinator's own settings and secrets, which a module's code
 * does not import). A fixture goes whole: it is the task.
 */
function skippedInAgentFolder(name: string): boolean {
  return name === "node_modules" || name.startsWith(".");
}

/** Every path the experiment reads, as files or whole directories. */
function experimentPaths(experiment: Experiment): { files: string[]; dirs: string[] } {
  const files = [
    experiment.manifestPath,
    ...new Set([
      ...experiment.harnessFiles,
      ...experiment.variants.flatMap((v) => v.harnessFiles ?? []),
    ]),
  ];
  const dirs: string[] = [];
  for (const task of experiment.tasks) {
    dirs.push(task.fixtureDir);
    files.push(task.promptFile);
    if (task.forge !== undefined) files.push(task.forge.seedFile);
    for (const grader of task.graders) {
      if (grader.kind === "readme-package-v1") files.push(grader.contractFile);
      if (grader.kind === "tests") files.push(...grader.hidden);
      if (grader.kind === "forge-state" && "file" in grader.source) files.push(grader.source.file);
    }
  }
  for (const variant of experiment.variants) {
    const agent = variant.agent;
    // A module may import its neighbours (a shared helper): its whole folder goes along.
    if (agent?.kind === "module") dirs.push(dirname(agent.modulePath));
    if (agent?.kind === "oracle") files.push(agent.patchFile);
  }
  return { files, dirs };
}

/** The deepest folder holding every path. */
function commonRoot(paths: readonly string[]): string {
  let root = dirname(paths[0] as string);
  for (const path of paths) {
    while (relative(root, path).startsWith("..") || isAbsolute(relative(root, path)))
      root = dirname(root);
  }
  return root;
}

async function entryOf(root: string, absolute: string): Promise<BundleEntry | undefined> {
  const path = relative(root, absolute).split(sep).join("/");
  const info = await lstat(absolute);
  if (info.isDirectory()) return { kind: "dir", path };
  if (info.isSymbolicLink()) return { kind: "symlink", path, target: await readlink(absolute) };
  if (info.isFile())
    return {
      kind: "file",
      path,
      executable: (info.mode & 0o100) !== 0,
      data: (await readFile(absolute)).toString("base64"),
    };
  return undefined;
}

async function walk(
  dir: string,
  skip: (name: string, absolute: string) => boolean,
): Promise<string[]> {
  const out: string[] = [dir];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const absolute = join(dir, entry.name);
    if (skip(entry.name, absolute)) continue;
    if (entry.isDirectory()) out.push(...(await walk(absolute, skip)));
    else out.push(absolute);
  }
  return out;
}

export interface PackOptions {
  /** Folders never packed, wherever they are (the run's `--out`, which may sit beside an agent). */
  exclude?: readonly string[];
  /** Components' sources (files or folders) the experiment's `.harness` files name. */
  sources?: readonly string[];
}

/**
 * Packs every file the experiment reads. Deterministic: the same files give the same bytes and
 * so the same name, whichever machine packs them.
 */
export async function packBundle(
  experiment: Experiment,
  packOptions: PackOptions = {},
): Promise<Bundle> {
  const found = experimentPaths(experiment);
  const files = [...found.files];
  const dirs = [...found.dirs];
  for (const source of packOptions.sources ?? [])
    if ((await lstat(source).catch(() => undefined))?.isDirectory()) dirs.push(source);
    else files.push(source);
  const root = commonRoot([...files, ...dirs]);
  const excluded = new Set((packOptions.exclude ?? []).map((dir) => resolve(dir)));
  const paths = new Set<string>(files);
  for (const dir of dirs) {
    // A fixture or a component's source goes whole: it is the task, or the setup.
    const fixture =
      experiment.tasks.some((t) => t.fixtureDir === dir) ||
      (packOptions.sources ?? []).includes(dir);
    const skip = (name: string, absolute: string) =>
      excluded.has(absolute) || (!fixture && skippedInAgentFolder(name));
    for (const path of await walk(dir, skip)) paths.add(path);
  }
  const entries: BundleEntry[] = [];
  for (const path of [...paths].sort()) {
    if (path === root) continue;
    const entry = await entryOf(root, path);
    if (entry !== undefined) entries.push(entry);
  }
  const document: BundleDocument = {
    schemaVersion: BUNDLE_VERSION,
    manifest: relative(root, experiment.manifestPath).split(sep).join("/"),
    entries,
  };
  const json = Buffer.from(JSON.stringify(document));
  const bytes = gzipSync(json);
  if (bytes.length > MAX_BUNDLE_BYTES)
    throw new Error(
      `the experiment's files take ${bytes.length} bytes compressed, more than a queue bundle carries (${MAX_BUNDLE_BYTES}); it holds every fixture and each module agent's whole folder (without node_modules and hidden entries): keep them smaller, or give the agents a folder of their own`,
    );
  return {
    hash: `sha256:${createHash("sha256").update(json).digest("hex")}`,
    bytes,
    manifest: document.manifest,
    root,
    files: entries.length,
  };
}

export type OpenedBundle = { ok: true; document: BundleDocument } | { ok: false; message: string };

/** Checks stored bytes against the bundle's name and reads them. */
export function openBundle(hash: string, bytes: Buffer): OpenedBundle {
  let json: Buffer;
  try {
    json = gunzipSync(bytes, { maxOutputLength: 4 * MAX_BUNDLE_BYTES });
  } catch (error) {
    return { ok: false, message: `bundle ${hash} is not gzip data: ${(error as Error).message}` };
  }
  const actual = `sha256:${createHash("sha256").update(json).digest("hex")}`;
  if (actual !== hash)
    return {
      ok: false,
      message: `bundle ${hash} holds other content (its bytes hash to ${actual})`,
    };
  const parsed = bundleSchema.safeParse(JSON.parse(json.toString("utf8")));
  if (!parsed.success)
    return { ok: false, message: `bundle ${hash} is not a ${BUNDLE_VERSION} document` };
  return { ok: true, document: parsed.data };
}

/** A path inside the bundle that stays inside it: relative, no `..`, no empty segment. */
function safePath(path: string): boolean {
  return (
    path !== "" &&
    !path.startsWith("/") &&
    path.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..")
  );
}

/**
 * Writes a bundle's files under `dir` (made whole in a sibling folder, then renamed into place,
 * so a worker killed half-way leaves no bundle that looks complete). Returns the manifest's path.
 */
export async function unpackBundle(document: BundleDocument, dir: string): Promise<string> {
  const bad = document.entries.find((entry) => !safePath(entry.path));
  if (bad !== undefined || !safePath(document.manifest))
    throw new Error(`the bundle names a path outside itself: ${bad?.path ?? document.manifest}`);
  const staging = `${dir}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  // A bundle comes from Redis, which anyone with its address may write: nothing in it may be
  // written through a link it made (`a` → `/etc`, then `a/passwd`), or over another entry.
  const links: string[] = [];
  for (const entry of document.entries) {
    const through = links.find((link) => entry.path.startsWith(`${link}/`));
    if (through !== undefined)
      throw new Error(`the bundle writes ${entry.path} through its own link ${through}`);
    const target = join(staging, entry.path);
    await mkdir(dirname(target), { recursive: true });
    if (entry.kind === "dir") await mkdir(target, { recursive: true });
    else if (entry.kind === "symlink") {
      await symlink(entry.target, target);
      links.push(entry.path);
    } else
      await writeFile(target, Buffer.from(entry.data, "base64"), {
        mode: entry.executable ? 0o755 : 0o644,
        flag: "wx",
      });
  }
  await rename(staging, dir).catch(async (error: NodeJS.ErrnoException) => {
    // Another job of this worker unpacked the same bundle meanwhile: same content, keep theirs.
    await rm(staging, { recursive: true, force: true });
    if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
  });
  return join(dir, document.manifest);
}
