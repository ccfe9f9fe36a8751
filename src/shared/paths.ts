import { isAbsolute, relative, sep } from "node:path";

/**
 * True when `child` is `parent` itself or lies below it; both absolute and spelled the same way
 * (resolve symlinks first when they matter). Only a whole `..` segment leaves `parent`: a name
 * that merely starts with two dots (`..data`, `..out`) is an ordinary entry inside it.
 */
export function isPathInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  if (rel === "") return true;
  // On Windows a path on another drive comes back absolute.
  if (isAbsolute(rel)) return false;
  return rel !== ".." && !rel.startsWith(`..${sep}`);
}
