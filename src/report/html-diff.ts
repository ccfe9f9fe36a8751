// A trial's patch as an HTML diff: one block per file (status, path, +/− counts), hunk headers,
// added and removed lines coloured with their line numbers, binary files named but not dumped,
// and a clip with a note when the patch is too big to show in full.
import { type DiffFile, diffFileLabel, parseUnifiedDiff } from "./diff.js";
import { byteSize, clipText } from "./format.js";
import { esc } from "./html-text.js";
import type { FileClip } from "./types.js";

export interface DiffLimits {
  /** Diff lines (hunk headers included) shown per patch; the rest is clipped with a note. */
  maxLines: number;
  /** Characters shown of one line. */
  maxLineChars: number;
}

const DEFAULT_DIFF_LIMITS: DiffLimits = { maxLines: 1000, maxLineChars: 500 };

/** Files named in the clip note; a patch can touch thousands. */
const MAX_SKIPPED_FILES_NAMED = 20;

function lineCount(file: DiffFile): number {
  return file.hunks.reduce((sum, h) => sum + 1 + h.lines.length, 0);
}

function stat(file: DiffFile): string {
  return `<span class="diff-stat"><span class="plus">+${file.additions}</span> <span class="minus">−${file.deletions}</span></span>`;
}

const SIGN = { add: "+", del: "-", context: " ", note: "" } as const;

/**
 * `patchLink` is the (already escaped) href of the full patch.diff, named in the clip note.
 * `clip` is set when `patch` is only the beginning of patch.diff.
 */
export function renderDiffHtml(
  patch: string,
  patchLink: string,
  limits: DiffLimits = DEFAULT_DIFF_LIMITS,
  clip?: FileClip,
): string {
  const unread =
    clip === undefined
      ? ""
      : ` patch.diff is ${byteSize(clip.totalBytes)}; only its first ${byteSize(clip.readBytes)} were read for this page.`;
  if (patch.trim() === "")
    return clip === undefined
      ? '<p class="muted">No change: the patch is empty.</p>'
      : `<p class="clip-note">Patch not shown:${unread} The full patch is <a href="${patchLink}">patch.diff</a>.</p>`;
  const parsed = parseUnifiedDiff(patch);
  const out: string[] = ['<div class="diff"><div class="diff-files">'];
  let budget = limits.maxLines;
  const line = (text: string) => esc(clipText(text, limits.maxLineChars));

  if (parsed.preamble.some((l) => l.trim() !== "")) {
    const shown = parsed.preamble.slice(0, Math.max(0, budget));
    budget -= shown.length;
    out.push(`<pre class="diff-preamble">${shown.map(line).join("\n")}</pre>`);
  }

  const skipped: DiffFile[] = [];
  let clippedLines = 0;
  for (const file of parsed.files) {
    if (budget <= 0) {
      skipped.push(file);
      clippedLines += lineCount(file);
      continue;
    }
    out.push('<div class="diff-file">');
    // Rename and copy sources are already in the label; mode changes and similarity are not.
    const meta = file.meta.filter((m) => !/^(rename|copy) (from|to) /.test(m));
    out.push(
      `<div class="diff-head"><span class="badge st-${file.status}">${file.binary ? "binary, " : ""}${file.status}</span> <code class="path">${line(diffFileLabel(file))}</code> ${file.binary ? "" : stat(file)}${meta.length > 0 ? `<span class="diff-meta">${line(meta.join(" · "))}</span>` : ""}</div>`,
    );
    if (file.binary) {
      const size = file.binaryBytes === null ? "" : ` (new content ${file.binaryBytes} bytes)`;
      out.push(
        `<div class="diff-binary">Binary file${size}: contents not shown; <code>git apply</code> the patch to see it.</div>`,
      );
    }
    if (file.hunks.length > 0) {
      out.push('<table class="diff-lines"><tbody>');
      for (const hunk of file.hunks) {
        if (budget <= 0) {
          clippedLines += 1 + hunk.lines.length;
          continue;
        }
        out.push(
          `<tr class="hunk"><td class="ln"></td><td class="ln"></td><td class="code">${line(hunk.header)}</td></tr>`,
        );
        budget--;
        for (const l of hunk.lines) {
          if (budget <= 0) {
            clippedLines++;
            continue;
          }
          budget--;
          out.push(
            `<tr class="${l.kind}"><td class="ln">${l.oldLine ?? ""}</td><td class="ln">${l.newLine ?? ""}</td><td class="code"><span class="sign">${SIGN[l.kind]}</span>${line(l.text)}</td></tr>`,
          );
        }
      }
      out.push("</tbody></table>");
    } else if (!file.binary) {
      out.push('<div class="diff-empty">no content change</div>');
    }
    out.push("</div>");
  }

  out.push("</div>");
  if (clippedLines > 0 || skipped.length > 0 || clip !== undefined) {
    const named = skipped.slice(0, MAX_SKIPPED_FILES_NAMED);
    const more = skipped.length > named.length ? ` and ${skipped.length - named.length} more` : "";
    const files =
      skipped.length > 0
        ? ` Files not shown: ${named.map((f) => `<code>${esc(clipText(diffFileLabel(f), limits.maxLineChars))}</code> (${f.binary ? "binary" : `+${f.additions} −${f.deletions}`})`).join(", ")}${more}.`
        : "";
    const lines =
      clippedLines > 0
        ? ` ${clippedLines} ${clip === undefined ? "more" : "more read"} diff line(s) not shown.`
        : "";
    out.push(
      `<p class="clip-note">Patch clipped:${lines}${files}${unread} The full patch is <a href="${patchLink}">patch.diff</a>.</p>`,
    );
  }
  out.push("</div>");
  return out.join("\n");
}
