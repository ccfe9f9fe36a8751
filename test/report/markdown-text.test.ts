// verdict.md shows what an agent wrote as text: no link, image, emphasis, code, raw HTML or new
// row can come out of an explanation, a task id or a file name. Checked with a real CommonMark
// parser (mdast-util-from-markdown) on any string, and on hostile strings in the trial table.
import fc from "fast-check";
import type { Nodes, Root } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { describe, expect, it } from "vitest";
import { mdCode, mdText, renderMarkdownReport } from "../../src/report/index.js";
import { buildVerdict, cell } from "./verdicts.js";

const LINE_BREAKS = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/g;

/** Every node type in the tree, depth first. */
function nodeTypes(node: Nodes): string[] {
  const children = "children" in node ? node.children : [];
  return [node.type, ...children.flatMap((child) => nodeTypes(child as Nodes))];
}

function textOf(root: Root): string {
  const paragraph = root.children[0];
  if (paragraph?.type !== "paragraph") return "";
  return paragraph.children.map((c) => ("value" in c ? c.value : "")).join("");
}

/** Characters Markdown gives meaning to, and the line breaks viewers split on. */
const hostileChar = fc.constantFrom(
  ..."[]()!`*_<>&\\|#-+=~$:/ \t\r\n\u2028\u2029\u0085\v\fabc123.",
);
const hostileText = fc.array(hostileChar, { maxLength: 40 }).map((chars) => chars.join(""));

const HOSTILE = [
  "![tracker](https://evil.example/pixel.png)",
  "[click me](javascript:alert(1))",
  "<img src=x onerror=alert(1)> <b>bold</b>",
  "**strong** _em_ ~~gone~~ `code` $x$",
  "line one\rline two\u2028line three\u2029line four\r\nfive",
  "\\[not a link\\](x) &lt;already escaped&gt;",
  "# heading? | a pipe | <https://autolink.example>",
  "    four spaces would be a code block",
  "1. a list?",
];

describe("mdText", () => {
  it("parses back to one paragraph of plain text equal to the input, for any string", () => {
    fc.assert(
      fc.property(hostileText, (raw) => {
        const expected = raw.replace(LINE_BREAKS, " ").replace(/^[ \t]+|[ \t]+$/g, "");
        const root = fromMarkdown(mdText(raw));
        if (expected === "") return root.children.length === 0;
        expect(nodeTypes(root)).toEqual(["root", "paragraph", ...textNodes(root)]);
        expect(textOf(root)).toBe(expected);
        return true;
      }),
      { numRuns: 500 },
    );
  });

  it("neutralises links, images, emphasis, code, HTML and block starts", () => {
    for (const raw of HOSTILE) {
      const types = nodeTypes(fromMarkdown(mdText(raw)));
      expect(
        types.filter((t) => t !== "text"),
        raw,
      ).toEqual(["root", "paragraph"]);
    }
  });
});

function textNodes(root: Root): string[] {
  const paragraph = root.children[0];
  return paragraph && "children" in paragraph ? paragraph.children.map(() => "text") : [];
}

describe("mdCode", () => {
  it("parses back to one code span holding exactly the input, for any string", () => {
    fc.assert(
      fc.property(hostileText, (raw) => {
        const flat = raw.replace(LINE_BREAKS, " ");
        fc.pre(flat.trim() !== "");
        const root = fromMarkdown(mdCode(raw));
        const paragraph = root.children[0];
        expect(paragraph?.type).toBe("paragraph");
        const children = paragraph?.type === "paragraph" ? paragraph.children : [];
        expect(children.map((c) => c.type)).toEqual(["inlineCode"]);
        expect(children[0]?.type === "inlineCode" ? children[0].value : null).toBe(flat);
        return true;
      }),
      { numRuns: 500 },
    );
  });
});

describe("verdict.md with hostile agent text", () => {
  const verdict = buildVerdict(
    HOSTILE.flatMap((explanation, i) =>
      cell(i % 2 === 0 ? "baseline" : "candidate", "t", "f", { explanation }),
    ),
  );
  const md = renderMarkdownReport(verdict);
  const rows = md.split("\n").filter((line) => /^\| \d+ \| t \|/.test(line));

  it("keeps one row per trial with its eleven cells", () => {
    expect(rows).toHaveLength(HOSTILE.length);
    for (const row of rows) expect(row.split(/(?<!\\)\|/).length - 2, row).toBe(11);
  });

  it("turns no explanation into a link, an image, emphasis, code or HTML", () => {
    for (const row of rows) {
      const explanation = row.split(/(?<!\\)\|/)[7]!.replace(/\\\|/g, "|");
      const types = nodeTypes(fromMarkdown(explanation));
      expect(
        types.filter((t) => t !== "text"),
        row,
      ).toEqual(["root", "paragraph"]);
    }
    expect(md).not.toMatch(/(?<!\\)\]\(javascript:/);
    expect(md).toContain("!\\[tracker\\](https://evil.example/pixel.png)");
    expect(md).not.toMatch(/[\r\u2028\u2029]/);
  });
});
