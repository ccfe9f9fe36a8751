// Reading and rendering a trial's patch: real `git diff --binary` output of a repository with a
// modified, added, deleted, renamed, binary and oddly named file, plus hand-made edge cases.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderDiffHtml } from "../../src/report/html-diff.js";
import { parseUnifiedDiff } from "../../src/report/index.js";
import { runCommand } from "../../src/shared/index.js";

let root: string;
let patch: string;

async function git(args: string[]): Promise<string> {
  const run = await runCommand(
    ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: root, GIT_CONFIG_NOSYSTEM: "1" },
      timeoutMs: 30_000,
    },
  );
  if (run.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

const ODD_NAME = '"><img src=x onerror=alert(1)> café.txt';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "hl-diff-"));
  await git(["init", "-q"]);
  await writeFile(join(root, "keep.js"), "one\ntwo\nthree\nfour\n");
  await writeFile(join(root, "gone.js"), "export const gone = 1;\n");
  await writeFile(
    join(root, "old-name.md"),
    "# Title\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\n",
  );
  await git(["add", "-A"]);
  await git(["commit", "-q", "-m", "base"]);
  await writeFile(join(root, "keep.js"), "one\n<b>TWO</b>\nthree\nfour\n");
  await rm(join(root, "gone.js"));
  await rm(join(root, "old-name.md"));
  await writeFile(
    join(root, "new-name.md"),
    "# Title\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6 changed\n",
  );
  await writeFile(join(root, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 0, 0]));
  await writeFile(join(root, ODD_NAME), "hello");
  await git(["add", "-A"]);
  patch = await git(["diff", "--cached", "--binary", "-M"]);
});

afterAll(() => rm(root, { recursive: true, force: true }));

describe("parseUnifiedDiff", () => {
  it("reads every file of a real git diff with its status, paths and counts", () => {
    const { files, preamble } = parseUnifiedDiff(patch);
    expect(preamble).toEqual([]);
    const byPath = new Map(files.map((f) => [f.newPath ?? f.oldPath, f]));
    expect([...byPath.keys()].sort()).toEqual(
      [ODD_NAME, "gone.js", "keep.js", "logo.png", "new-name.md"].sort(),
    );
    expect(byPath.get("keep.js")).toMatchObject({
      status: "modified",
      additions: 1,
      deletions: 1,
    });
    expect(byPath.get("gone.js")).toMatchObject({
      status: "deleted",
      newPath: null,
      deletions: 1,
    });
    expect(byPath.get("new-name.md")).toMatchObject({
      status: "renamed",
      oldPath: "old-name.md",
      additions: 1,
      deletions: 1,
    });
    expect(byPath.get("logo.png")).toMatchObject({
      status: "added",
      binary: true,
      binaryBytes: 10,
      hunks: [],
    });
    // git quotes the name (octal UTF-8, escaped quote); the parser gives it back as text.
    expect(patch).toContain('\\"><img');
    expect(byPath.get(ODD_NAME)).toMatchObject({ status: "added", additions: 1 });
  });

  it("numbers old and new lines from the hunk header", () => {
    const keep = parseUnifiedDiff(patch).files.find((f) => f.newPath === "keep.js")!;
    expect(keep.hunks).toHaveLength(1);
    expect(keep.hunks[0]!.lines).toEqual([
      { kind: "context", text: "one", oldLine: 1, newLine: 1 },
      { kind: "del", text: "two", oldLine: 2, newLine: null },
      { kind: "add", text: "<b>TWO</b>", oldLine: null, newLine: 2 },
      { kind: "context", text: "three", oldLine: 3, newLine: 3 },
      { kind: "context", text: "four", oldLine: 4, newLine: 4 },
    ]);
  });

  it("keeps a removed line that looks like a file header inside its hunk", () => {
    const text = [
      "diff --git a/x.md b/x.md",
      "--- a/x.md",
      "+++ b/x.md",
      "@@ -1,2 +1,1 @@",
      "--- not a header",
      " kept",
      "\\ No newline at end of file",
    ].join("\n");
    const [file] = parseUnifiedDiff(text).files;
    expect(file!.hunks[0]!.lines.map((l) => l.kind)).toEqual(["del", "context", "note"]);
    expect(file!.hunks[0]!.lines[0]!.text).toBe("-- not a header");
  });

  it("keeps text that is not a diff as preamble lines instead of failing", () => {
    const parsed = parseUnifiedDiff("this is not a patch\n@@ nor this\n");
    expect(parsed.files).toEqual([]);
    expect(parsed.preamble).toEqual(["this is not a patch", "@@ nor this"]);
  });
});

describe("renderDiffHtml", () => {
  const link = "a/trial-001/patch.diff";

  it("colours added, removed and context lines and shows each file's header", () => {
    const html = renderDiffHtml(patch, link);
    expect(html).toContain(
      '<tr class="add"><td class="ln"></td><td class="ln">2</td><td class="code"><span class="sign">+</span>&lt;b&gt;TWO&lt;/b&gt;</td></tr>',
    );
    expect(html).toContain(
      '<tr class="del"><td class="ln">2</td><td class="ln"></td><td class="code"><span class="sign">-</span>two</td></tr>',
    );
    expect(html).toContain(
      '<tr class="context"><td class="ln">1</td><td class="ln">1</td><td class="code"><span class="sign"> </span>one</td></tr>',
    );
    expect(html).toMatch(/<tr class="hunk">.*@@ -1,4 \+1,4 @@/);
    expect(html).toContain(
      '<span class="badge st-modified">modified</span> <code class="path">keep.js</code>',
    );
    expect(html).toContain(
      '<span class="badge st-deleted">deleted</span> <code class="path">gone.js</code>',
    );
    expect(html).toContain("old-name.md → new-name.md");
  });

  it("names a binary file without dumping its base85 data", () => {
    const html = renderDiffHtml(patch, link);
    expect(html).toContain(
      '<span class="badge st-added">binary, added</span> <code class="path">logo.png</code>',
    );
    expect(html).toContain("Binary file (new content 10 bytes): contents not shown");
    expect(html).not.toContain("GIT binary patch");
    expect(html).not.toMatch(/zcmV|literal \d/);
  });

  it("escapes file names and line contents", () => {
    const html = renderDiffHtml(patch, link);
    expect(html).toContain(
      '<code class="path">&quot;&gt;&lt;img src=x onerror=alert(1)&gt; café.txt</code>',
    );
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<b>TWO");
  });

  it("clips a big patch, says how much is missing and links the full patch", () => {
    const big = [
      "diff --git a/big.txt b/big.txt",
      "--- a/big.txt",
      "+++ b/big.txt",
      "@@ -0,0 +1,50 @@",
      ...Array.from({ length: 50 }, (_, i) => `+line ${i}`),
      "diff --git a/later.txt b/later.txt",
      "--- a/later.txt",
      "+++ b/later.txt",
      "@@ -1 +1 @@",
      "-a",
      "+b",
    ].join("\n");
    const html = renderDiffHtml(big, link, { maxLines: 11, maxLineChars: 500 });
    expect(html.match(/<tr class="add">/g)).toHaveLength(10);
    expect(html).toContain("+</span>line 9<");
    expect(html).not.toContain("line 10<");
    expect(html).toContain("Patch clipped: 43 more diff line(s) not shown.");
    expect(html).toContain("Files not shown: <code>later.txt</code> (+1 −1).");
    expect(html).toContain(`<a href="${link}">patch.diff</a>`);
  });

  it("shortens a very long line", () => {
    const long = `diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+${"y".repeat(900)}\n`;
    const html = renderDiffHtml(long, link, { maxLines: 100, maxLineChars: 100 });
    expect(html).toContain(`${"y".repeat(100)}… (800 more characters)`);
  });

  it("says so when the patch is empty", () => {
    expect(renderDiffHtml("", link)).toContain("No change: the patch is empty.");
  });
});
