import { dirname, isAbsolute, join, parse, relative, resolve, sep } from "node:path";
import { isPathInside } from "../shared/index.js";
import type { PathResolverFs } from "./types.js";

/** Symlink hops followed before giving up, like the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

export class PathResolutionError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = "PathResolutionError";
  }
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

async function realpathOrNull(fs: PathResolverFs, path: string): Promise<string | null> {
  try {
    return await fs.realpath(path);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw new PathResolutionError(`cannot resolve ${path} (${code ?? String(error)})`, code ?? "");
  }
}

async function readlinkOrNull(fs: PathResolverFs, path: string): Promise<string | null> {
  try {
    return await fs.readlink(path);
  } catch {
    return null;
  }
}

/**
 * The physical location an absolute path names, as the OS would reach it when the file is
 * created: every existing prefix has its symlinks resolved (dangling links included, so a link
 * to a not-yet-existing file outside the root is caught), `..` is applied after resolution (so
 * `link/../x` means what the kernel means, not what string normalisation says), and components
 * below the deepest existing directory are appended as written.
 */
export async function resolvePhysicalPath(
  absolutePath: string,
  fs: PathResolverFs,
): Promise<string> {
  const whole = await realpathOrNull(fs, absolutePath);
  if (whole !== null) return whole;
  return walk(absolutePath, fs, 0);
}

async function walk(absolutePath: string, fs: PathResolverFs, hops: number): Promise<string> {
  const { root } = parse(absolutePath);
  const segments = absolutePath
    .slice(root.length)
    .split(/[\\/]/)
    .filter((s) => s !== "" && s !== ".");
  let current = (await realpathOrNull(fs, root)) ?? root;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    const candidate = segment === ".." ? dirname(current) : join(current, segment);
    const physical = await realpathOrNull(fs, candidate);
    if (physical !== null) {
      current = physical;
      continue;
    }
    const link = await readlinkOrNull(fs, candidate);
    if (link === null) {
      current = candidate;
      continue;
    }
    // A dangling symlink: the file would be created wherever it points.
    if (hops >= MAX_LINK_HOPS) {
      throw new PathResolutionError(`too many symbolic links resolving ${absolutePath}`, "ELOOP");
    }
    const rest = segments.slice(i + 1);
    const target = resolve(dirname(candidate), link, ...rest);
    return walk(target, fs, hops + 1);
  }
  return current;
}

/**
 * The `/`-separated path of `target` relative to `root` ("" for the root itself), or null when
 * `target` is outside it. Both must be physical paths.
 */
export function relativeInside(root: string, target: string): string | null {
  if (!isPathInside(root, target)) return null;
  return relative(root, target).split(sep).join("/");
}

/**
 * True when a root-relative path is inside a `.git` directory at any depth. Compared without
 * case because case-insensitive filesystems (macOS, Windows) treat `.GIT` as `.git`.
 */
export function isGitPath(relativePath: string): boolean {
  return relativePath.split("/").some((segment) => segment.toLowerCase() === ".git");
}

/** Problems with a raw path string that make it unusable before any resolution. */
export function rawPathProblem(raw: unknown, field: string): string | null {
  if (typeof raw !== "string") return `\`${field}\` must be a string`;
  if (raw === "") return `\`${field}\` is empty`;
  if (raw.includes("\0")) return `\`${field}\` contains a NUL character`;
  return null;
}

/**
 * True for paths a tool might expand to a home directory; they never name something inside the
 * trial, so they are refused before resolution instead of being read as a folder called `~`.
 */
export function isHomeRelative(raw: string): boolean {
  return raw === "~" || raw.startsWith("~/") || raw.startsWith("~\\");
}

/**
 * Absolute form of a tool path: relative paths are relative to the trial root. Deliberately not
 * `path.join`, which would fold `link/..` away before the symlink is seen.
 */
export function absoluteFromRoot(root: string, raw: string): string {
  if (isAbsolute(raw)) return raw;
  return root.endsWith(sep) ? `${root}${raw}` : `${root}${sep}${raw}`;
}

/**
 * Glob patterns are joined to a directory by the tool, so a pattern that is absolute or climbs
 * with `..` can list files outside the root even when the directory is inside. Conservative: a
 * file name containing `..` cannot be globbed for (Read still reaches it).
 */
export function globPatternEscapes(pattern: string): boolean {
  if (isAbsolute(pattern) || /^[A-Za-z]:/.test(pattern) || isHomeRelative(pattern)) return true;
  // Brace expansion can produce `..` or an absolute alternative (`{..,src}/*`, `{/etc,x}`), so
  // `..` is refused anywhere and no alternative may start at a root, a drive or a home.
  if (pattern.includes("..")) return true;
  return /[{,]\s*(?:[\\/]|~|[A-Za-z]:)/.test(pattern);
}
