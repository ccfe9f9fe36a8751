import { describe, expect, it } from "vitest";
import { containsToken } from "../../src/graders/index.js";
import { classifyLinkTarget } from "../../src/graders/readme/links.js";
import { parseReadme, sectionCodeBlocks } from "../../src/graders/readme/markdown.js";

describe("README parsing", () => {
  it("collects links of every form with their lines, and no URL inside code", () => {
    const doc = parseReadme(
      [
        "# Title",
        "",
        "[inline](docs/a.md) and [ref][r] and ![img](img.png)",
        "Visit https://example.com/x. now",
        '<a href="docs/b.md">b</a>',
        "",
        "`https://in-code.example` is code",
        "",
        "[r]: ./docs/c.md",
      ].join("\n"),
    );
    expect(doc.links).toEqual([
      { kind: "link", url: "docs/a.md", line: 3 },
      { kind: "image", url: "img.png", line: 3 },
      { kind: "bare-url", url: "https://example.com/x", line: 4 },
      { kind: "html", url: "docs/b.md", line: 5 },
      { kind: "definition", url: "./docs/c.md", line: 9 },
    ]);
  });

  it("finds a section's code blocks up to the next heading of the same or higher level", () => {
    const doc = parseReadme(
      [
        "## quick start",
        "```js",
        "one()",
        "```",
        "### Variant",
        "- item",
        "",
        "  ```mjs",
        "  two()",
        "  ```",
        "## API",
        "```js",
        "three()",
        "```",
      ].join("\n"),
    );
    const section = sectionCodeBlocks(doc, "Quick Start");
    expect(section?.blocks.map((b) => [b.lang, b.value])).toEqual([
      ["js", "one()"],
      ["mjs", "two()"],
    ]);
    expect(sectionCodeBlocks(doc, "Usage")).toBeNull();
  });
});

describe("link targets", () => {
  it.each([
    ["#install", "skipped"],
    ["mailto:a@b.c", "skipped"],
    ["data:image/png;base64,AA", "skipped"],
    ["https://x.dev", "remote"],
    ["//cdn.x.dev/a", "remote"],
    ["file:///etc/passwd", "invalid"],
    ["javascript:alert(1)", "invalid"],
    ["", "invalid"],
    ["docs/a%20b.md#part", "local"],
    ["/docs/a.md", "local"],
  ])("%s is %s", (url, kind) => {
    expect(classifyLinkTarget(url).kind).toBe(kind);
  });

  it("decodes and roots local paths at the repository", () => {
    expect(classifyLinkTarget("/docs/a%20b.md?plain=1#x")).toEqual({
      kind: "local",
      path: "docs/a b.md",
    });
  });
});

describe("code tokens", () => {
  it("matches whole tokens only where the token has word edges", () => {
    expect(containsToken("maxAttempts: 3", "3")).toBe(true);
    expect(containsToken("timeout: 30", "3")).toBe(false);
    expect(containsToken("signals", "signal")).toBe(false);
    expect(containsToken("{ signal }", "signal")).toBe(true);
    expect(containsToken('import x from "@fixture/task-pool";', "@fixture/task-pool")).toBe(true);
    expect(containsToken("$ npm test", "npm test")).toBe(true);
  });
});
