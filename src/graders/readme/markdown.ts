import type { Nodes, Root } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";

/** The parts of a README the grader reads, in document order, with 1-based line numbers. */
export interface ReadmeHeading {
  depth: number;
  text: string;
  line: number;
  offset: number;
}

export interface ReadmeCodeBlock {
  /** Lower-cased first word of the fence's info string; null for indented or bare fences. */
  lang: string | null;
  value: string;
  line: number;
  offset: number;
}

export type ReadmeLinkKind = "link" | "image" | "definition" | "html" | "bare-url";

export interface ReadmeLink {
  kind: ReadmeLinkKind;
  url: string;
  line: number;
}

export interface ReadmeDocument {
  text: string;
  headings: ReadmeHeading[];
  codeBlocks: ReadmeCodeBlock[];
  inlineCode: { value: string; line: number }[];
  links: ReadmeLink[];
}

/** Visible text of a node, as a reader sees it in a heading (markup dropped). */
function visibleText(node: Nodes): string {
  if ("value" in node && typeof node.value === "string" && node.type !== "html") return node.value;
  if ("children" in node) return node.children.map((child) => visibleText(child)).join("");
  return "";
}

/** Heading text normalized for comparison: whitespace collapsed, case folded, trailing colon dropped. */
export function normalizeHeading(text: string): string {
  return text.replace(/\s+/g, " ").trim().replace(/\s*:$/, "").toLowerCase();
}

const BARE_URL = /\bhttps?:\/\/[^\s<>()[\]"'`]+/gi;
const HTML_URL_ATTRIBUTE = /\b(?:href|src)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;

function lineOf(node: Nodes): number {
  return node.position?.start.line ?? 0;
}

/**
 * Parses README Markdown (CommonMark) into headings, code, and every link target:
 * inline links, images, reference definitions (`[x]: ./path`, which reference-style
 * links point at), `href`/`src` in raw HTML, and bare http(s) URLs in text, which
 * GitHub renders as links.
 */
export function parseReadme(text: string): ReadmeDocument {
  const tree: Root = fromMarkdown(text);
  const document: ReadmeDocument = {
    text,
    headings: [],
    codeBlocks: [],
    inlineCode: [],
    links: [],
  };
  const visit = (node: Nodes, insideLink: boolean) => {
    switch (node.type) {
      case "heading":
        document.headings.push({
          depth: node.depth,
          text: visibleText(node).replace(/\s+/g, " ").trim(),
          line: lineOf(node),
          offset: node.position?.start.offset ?? 0,
        });
        break;
      case "code":
        document.codeBlocks.push({
          lang: node.lang ? node.lang.trim().split(/\s+/)[0]!.toLowerCase() : null,
          value: node.value,
          line: lineOf(node),
          offset: node.position?.start.offset ?? 0,
        });
        return;
      case "inlineCode":
        document.inlineCode.push({ value: node.value, line: lineOf(node) });
        return;
      case "link":
        document.links.push({ kind: "link", url: node.url, line: lineOf(node) });
        break;
      case "image":
        document.links.push({ kind: "image", url: node.url, line: lineOf(node) });
        return;
      case "definition":
        document.links.push({ kind: "definition", url: node.url, line: lineOf(node) });
        return;
      case "html":
        for (const match of node.value.matchAll(HTML_URL_ATTRIBUTE)) {
          const url = match[1] ?? match[2] ?? match[3] ?? "";
          document.links.push({ kind: "html", url, line: lineOf(node) });
        }
        return;
      case "text":
        if (!insideLink) {
          for (const match of node.value.matchAll(BARE_URL)) {
            const url = match[0].replace(/[.,;:!?]+$/, "");
            // A text node can span lines; count the newlines before the match.
            const line =
              lineOf(node) + (node.value.slice(0, match.index).match(/\n/g)?.length ?? 0);
            document.links.push({ kind: "bare-url", url, line });
          }
        }
        return;
      default:
        break;
    }
    if ("children" in node) {
      const childInsideLink = insideLink || node.type === "link" || node.type === "linkReference";
      for (const child of node.children) visit(child, childInsideLink);
    }
  };
  visit(tree, false);
  return document;
}

/**
 * The code blocks of the section whose heading matches `title` (case-insensitive): from that
 * heading up to the next heading of the same or a higher level. Null when no heading matches.
 */
export function sectionCodeBlocks(
  document: ReadmeDocument,
  title: string,
): { heading: ReadmeHeading; blocks: ReadmeCodeBlock[] } | null {
  const wanted = normalizeHeading(title);
  const index = document.headings.findIndex((h) => normalizeHeading(h.text) === wanted);
  const heading = document.headings[index];
  if (heading === undefined) return null;
  const next = document.headings.slice(index + 1).find((h) => h.depth <= heading.depth);
  const end = next?.offset ?? Number.POSITIVE_INFINITY;
  const blocks = document.codeBlocks.filter((b) => b.offset > heading.offset && b.offset < end);
  return { heading, blocks };
}

/** Every piece of code in the README: fenced and indented blocks, then inline code spans. */
export function allCode(document: ReadmeDocument): string[] {
  return [...document.codeBlocks.map((b) => b.value), ...document.inlineCode.map((c) => c.value)];
}
