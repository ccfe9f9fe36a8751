// Reading a trial's patch.diff (`git diff --binary` output) into files, hunks and lines, so the
// HTML report can show it as a diff rather than as raw text. Pure; never throws: whatever does
// not look like a diff is kept as note lines.

type DiffFileStatus = "added" | "deleted" | "renamed" | "copied" | "modified";

interface DiffLine {
  kind: "add" | "del" | "context" | "note";
  /** The line without its leading `+`, `-` or space. */
  text: string;
  oldLine: number | null;
  newLine: number | null;
}

interface DiffHunk {
  /** The whole `@@ -a,b +c,d @@ …` line. */
  header: string;
  lines: DiffLine[];
}

export interface DiffFile {
  oldPath: string | null;
  newPath: string | null;
  status: DiffFileStatus;
  binary: boolean;
  /** Size of the new content of a binary file from `GIT binary patch` (`literal N`), when given. */
  binaryBytes: number | null;
  /** Header lines worth showing: mode changes, similarity, rename and copy sources. */
  meta: string[];
  hunks: DiffHunk[];
  additions: number;
  deletions: number;
}

export interface ParsedDiff {
  /** Lines before the first file header (none for git's own output). */
  preamble: string[];
  files: DiffFile[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const SHOWN_META =
  /^(old mode|new mode|new file mode|deleted file mode|similarity index|dissimilarity index|rename from|rename to|copy from|copy to) /;

/**
 * Git writes a path with unusual characters in C style: `"a/caf\303\251 \"x\".txt"`. Returns
 * the path as UTF-8 text; an unquoted path is returned as it is.
 */
function unquoteGitPath(raw: string): string {
  if (!(raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"'))) return raw;
  const bytes: number[] = [];
  const body = raw.slice(1, -1);
  const simple: Record<string, number> = { n: 10, t: 9, r: 13, b: 8, f: 12, v: 11, a: 7 };
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char !== "\\" || i + 1 >= body.length) {
      bytes.push(...Buffer.from(char, "utf8"));
      continue;
    }
    const next = body[i + 1]!;
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else {
      bytes.push(simple[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** `a/src/x.js` → `src/x.js`; `/dev/null` → null. */
function stripSide(raw: string, prefix: "a/" | "b/"): string | null {
  const path = unquoteGitPath(raw.replace(/\t.*$/, ""));
  if (path === "/dev/null") return null;
  return path.startsWith(prefix) ? path.slice(2) : path;
}

/** Paths from `diff --git a/x b/x` when they are unambiguous (the same path on both sides). */
function pathsFromGitHeader(line: string): { oldPath: string | null; newPath: string | null } {
  const rest = line.slice("diff --git ".length);
  if (rest.startsWith('"')) {
    const quoted = /^("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*"|\S.*)$/.exec(rest);
    if (quoted)
      return { oldPath: stripSide(quoted[1]!, "a/"), newPath: stripSide(quoted[2]!, "b/") };
  }
  // Unquoted: `a/P b/P`. With spaces in P the split is only certain when both halves agree.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === " ") {
    const left = rest.slice(0, half);
    const right = rest.slice(half + 1);
    if (left.slice(2) === right.slice(2))
      return { oldPath: stripSide(left, "a/"), newPath: stripSide(right, "b/") };
  }
  const space = rest.indexOf(" b/");
  if (space > 0)
    return {
      oldPath: stripSide(rest.slice(0, space), "a/"),
      newPath: stripSide(rest.slice(space + 1), "b/"),
    };
  return { oldPath: rest, newPath: rest };
}

function newFile(paths: { oldPath: string | null; newPath: string | null }): DiffFile {
  return {
    ...paths,
    status: "modified",
    binary: false,
    binaryBytes: null,
    meta: [],
    hunks: [],
    additions: 0,
    deletions: 0,
  };
}

export function parseUnifiedDiff(text: string): ParsedDiff {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const parsed: ParsedDiff = { preamble: [], files: [] };
  let file: DiffFile | null = null;
  let hunk: DiffHunk | null = null;
  let lastHunk: DiffHunk | null = null;
  // Lines the current hunk still has on each side (from its header); the hunk ends at 0 and 0.
  let oldLeft = 0;
  let newLeft = 0;
  let oldLine = 0;
  let newLine = 0;
  let binaryPatch: "none" | "first-block" | "rest" = "none";

  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.replace(/\r$/, "");
    if (line.startsWith("diff --git ")) {
      file = newFile(pathsFromGitHeader(line));
      parsed.files.push(file);
      hunk = lastHunk = null;
      binaryPatch = "none";
      continue;
    }
    if (hunk === null && binaryPatch === "none") {
      // A plain unified diff (no git header): `--- x` directly followed by `+++ y` starts a file.
      const plainStart =
        line.startsWith("--- ") &&
        lines[index + 1]?.startsWith("+++ ") &&
        (file === null || file.hunks.length > 0);
      if (plainStart) {
        file = newFile({ oldPath: null, newPath: null });
        parsed.files.push(file);
        lastHunk = null;
      }
    }
    if (file === null) {
      parsed.preamble.push(line);
      continue;
    }
    if (binaryPatch !== "none") {
      // Base85 data, and the reverse patch after the first block: nothing a person can read.
      const block = /^(literal|delta) (\d+)$/.exec(line);
      if (block && binaryPatch === "first-block") {
        if (block[1] === "literal") file.binaryBytes = Number(block[2]);
        binaryPatch = "rest";
      }
      continue;
    }
    const hunkStart = hunk === null ? HUNK_HEADER.exec(line) : null;
    if (hunkStart) {
      hunk = lastHunk = { header: line, lines: [] };
      file.hunks.push(hunk);
      oldLine = Number(hunkStart[1]);
      oldLeft = hunkStart[2] === undefined ? 1 : Number(hunkStart[2]);
      newLine = Number(hunkStart[3]);
      newLeft = hunkStart[4] === undefined ? 1 : Number(hunkStart[4]);
      if (oldLeft === 0 && newLeft === 0) hunk = null;
      continue;
    }
    if (hunk === null) {
      if (line.startsWith("\\") && lastHunk) {
        lastHunk.lines.push({ kind: "note", text: line, oldLine: null, newLine: null });
        continue;
      }
      readHeaderLine(file, line);
      if (line === "GIT binary patch") binaryPatch = "first-block";
      continue;
    }
    if (line.startsWith("+")) {
      hunk.lines.push({ kind: "add", text: line.slice(1), oldLine: null, newLine: newLine++ });
      file.additions++;
      newLeft--;
    } else if (line.startsWith("-")) {
      hunk.lines.push({ kind: "del", text: line.slice(1), oldLine: oldLine++, newLine: null });
      file.deletions++;
      oldLeft--;
    } else if (line.startsWith(" ") || line === "") {
      hunk.lines.push({
        kind: "context",
        text: line.slice(1),
        oldLine: oldLine++,
        newLine: newLine++,
      });
      oldLeft--;
      newLeft--;
    } else {
      // `\ No newline at end of file`, or anything unexpected.
      hunk.lines.push({ kind: "note", text: line, oldLine: null, newLine: null });
    }
    if (oldLeft <= 0 && newLeft <= 0) hunk = null;
  }
  return parsed;
}

function readHeaderLine(file: DiffFile, line: string): void {
  if (line.startsWith("--- ")) {
    file.oldPath = stripSide(line.slice(4), "a/");
    if (file.oldPath === null) file.status = "added";
  } else if (line.startsWith("+++ ")) {
    file.newPath = stripSide(line.slice(4), "b/");
    if (file.newPath === null) file.status = "deleted";
  } else if (line.startsWith("new file mode ")) {
    file.status = "added";
    file.oldPath = null;
  } else if (line.startsWith("deleted file mode ")) {
    file.status = "deleted";
    file.newPath = null;
  } else if (line.startsWith("rename from ")) {
    file.status = "renamed";
    file.oldPath = unquoteGitPath(line.slice("rename from ".length));
  } else if (line.startsWith("rename to ")) {
    file.status = "renamed";
    file.newPath = unquoteGitPath(line.slice("rename to ".length));
  } else if (line.startsWith("copy from ")) {
    file.status = "copied";
    file.oldPath = unquoteGitPath(line.slice("copy from ".length));
  } else if (line.startsWith("copy to ")) {
    file.status = "copied";
    file.newPath = unquoteGitPath(line.slice("copy to ".length));
  } else if (line.startsWith("Binary files ") || line === "GIT binary patch") {
    file.binary = true;
  }
  if (
    SHOWN_META.test(line) &&
    !line.startsWith("new file mode") &&
    !line.startsWith("deleted file mode")
  )
    file.meta.push(line);
}

/** The path to show for a file: the new one, or the old one for a deletion; `old → new` for renames. */
export function diffFileLabel(file: DiffFile): string {
  if ((file.status === "renamed" || file.status === "copied") && file.oldPath && file.newPath)
    return `${file.oldPath} → ${file.newPath}`;
  return file.newPath ?? file.oldPath ?? "(unnamed file)";
}
