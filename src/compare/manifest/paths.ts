// Portable relative paths: the only kind of path a manifest may contain (docs/manifest.md).
// Syntax only; whether the path exists and stays inside the manifest's directory after
// resolving symlinks is checked against the file system in `files.ts`.

/**
 * The same rule as `portablePathProblem`, as an ECMAScript regex for the published JSON
 * Schema: no drive letter, not absolute, no backslash or control character, no empty
 * or `..` segment.
 */
export const PORTABLE_RELATIVE_PATH_PATTERN =
  "^(?![A-Za-z]:)(?!/)(?!.*\\\\)(?!.*[\\u0000-\\u001f\\u007f])(?!.*//)(?!.*/$)(?!(?:.*/)?\\.\\.(?:/|$)).+$";

/** Why `value` is not a portable relative path, or undefined when it is one. */
export function portablePathProblem(value: string): string | undefined {
  const shown = JSON.stringify(value);
  if (value === "") return "is empty; give a path relative to the manifest's directory";
  if (/[\u0000-\u001f\u007f]/.test(value)) return `${shown} contains a control character`;
  if (value.includes("\\"))
    return `${shown} uses a backslash; write paths with "/" separators so the manifest works on every OS`;
  if (/^[A-Za-z]:/.test(value))
    return `${shown} starts with a drive letter; paths must be relative to the manifest's directory`;
  if (value.startsWith("/"))
    return `${shown} is absolute; paths must be relative to the manifest's directory`;
  const segments = value.split("/");
  if (segments.includes(".."))
    return `${shown} has a ".." segment; paths must stay inside the manifest's directory`;
  if (segments.includes(""))
    return `${shown} has an empty segment ("//" or a trailing "/"); remove it`;
  return undefined;
}

/**
 * A change-surface path (an expected file) in the form the trial's change list uses:
 * `.` segments dropped. Returns a problem for a path that is not portable, names the
 * trial root itself, or points into `.git` (never writable).
 */
export function normalizeChangeSurfacePath(
  value: string,
): { ok: true; path: string } | { ok: false; problem: string } {
  const problem = portablePathProblem(value);
  if (problem !== undefined) return { ok: false, problem };
  const segments = value.split("/").filter((segment) => segment !== ".");
  if (segments.length === 0)
    return {
      ok: false,
      problem: `${JSON.stringify(value)} names the whole repository, not a file`,
    };
  // Any case: git and case-insensitive file systems treat `.GIT` as `.git`, and the policy
  // refuses writes there too, so such a file could never be changed.
  if (segments.some((segment) => segment.toLowerCase() === ".git"))
    return {
      ok: false,
      problem: `${JSON.stringify(value)} is inside .git (in any letter case), which agents may never change`,
    };
  return { ok: true, path: segments.join("/") };
}
