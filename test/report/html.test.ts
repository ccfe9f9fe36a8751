// verdict.html and verdict.md of a real run whose agent put markup everywhere it could: the
// report must show it as text, keep its tables and per-trial evidence, and (when a Chromium is
// installed) render in a real browser.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VerdictDocument } from "../../src/compare/index.js";
import { renderHtmlReport, renderMarkdownReport } from "../../src/report/index.js";
import { runCommand } from "../../src/shared/index.js";
import {
  fixtureAgent,
  makeExperiment,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find(
  (path) => existsSync(path),
);
if (CHROMIUM === undefined)
  console.info(
    "verdict.html browser check skipped: no /usr/bin/chromium (or chromium-browser, google-chrome) installed",
  );

let exp: TempExperiment;
let verdict: VerdictDocument;
let html: string;
let md: string;

beforeAll(async () => {
  exp = await makeExperiment();
  const hostile = await exp.writeAgent("html-hostile.mjs", await fixtureAgent("html-hostile.mjs"));
  await exp.writeManifest(
    syntheticManifest({
      variants: [
        { id: "baseline", composition: "plain", agent: "nop" },
        { id: "fixer", composition: "careful", agent: "./agents/fixer.mjs" },
        { id: "hostile", composition: "extra", agent: hostile },
      ],
    }),
  );
  ({ verdict } = await runManifest(exp.manifestPath, {
    outDir: exp.outDir,
    tempParent: exp.trialsDir,
  }));
  html = await readFile(join(exp.outDir, "verdict.html"), "utf8");
  md = await readFile(join(exp.outDir, "verdict.md"), "utf8");
});

afterAll(() => exp.cleanup());

describe("verdict.html", () => {
  it("shows agent-controlled text escaped and contains no script or injected element at all", () => {
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toContain("<b>bold</b>");
    expect(html).toContain(
      "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;",
    );
    expect(html).toContain("+&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
    expect(html).toContain("&quot;&gt;&lt;script&gt;alert(&quot;path&quot;)&lt;/script&gt;.txt");
  });

  it("has the per-variant table, the comparisons and every trial with its evidence", () => {
    const section = (title: string) => {
      const start = html.indexOf(`<h2>${title}</h2>`);
      expect(start, title).toBeGreaterThan(-1);
      return html.slice(start, html.indexOf("</table>", start));
    };
    const variants = section("Variants");
    for (const id of ["baseline", "fixer", "hostile"]) expect(variants).toContain(`<td>${id}`);
    expect(variants).toContain('<td class="num">2 / 2</td>');
    const comparisons = section("Comparisons with the baseline");
    expect(comparisons).toContain("<td>fixer</td>");
    expect(comparisons).toContain("<td>hostile</td>");
    const trials = html.slice(html.indexOf("<h2>Trials</h2>"), html.indexOf("<h2>Evidence</h2>"));
    expect(trials.match(/<summary>evidence<\/summary>/g)).toHaveLength(verdict.trials.length);
    expect(trials.match(/<summary>patch \(\d+ bytes\)<\/summary>/g)).toHaveLength(
      verdict.trials.length,
    );
    expect(trials).toContain("<summary>permission decisions (2)</summary>");
    expect(trials).toContain('<td class="deny">deny</td>');
    expect(trials).toContain("+fixed");
    // Links to each trial's folder, relative to the report.
    for (const t of verdict.trials) expect(html).toContain(`<a href="${t.artifactDir}/">`);
  });

  it("is self-contained: no remote assets", () => {
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<link\b/);
  });

  it("renders without trial details too (escaping still applies)", () => {
    const bare = renderHtmlReport({ ...verdict, reason: "<i>why</i>" });
    expect(bare).toContain("&lt;i&gt;why&lt;/i&gt;");
    expect(bare).not.toContain("<details><summary>patch");
  });

  it.skipIf(CHROMIUM === undefined)("renders in headless Chromium with its tables", async () => {
    const run = await runCommand(
      [
        CHROMIUM!,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--dump-dom",
        pathToFileURL(join(exp.outDir, "verdict.html")).href,
      ],
      { cwd: exp.base, env: { PATH: process.env.PATH ?? "", HOME: exp.base }, timeoutMs: 60_000 },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain("<h2>Variants</h2>");
    expect(run.stdout).toMatch(/<table>/);
    expect(run.stdout).not.toMatch(/<script/i);
  });
});

describe("verdict.md", () => {
  it("keeps a pipe or a newline in a trial's explanation from breaking the trial table", () => {
    const text = renderMarkdownReport({
      ...verdict,
      trials: verdict.trials.map((t) => ({ ...t, explanation: "the agent threw: a | b\nc" })),
    });
    const rows = text.split("\n").filter((line) => /^\| \d+ \|/.test(line));
    expect(rows).toHaveLength(verdict.trials.length);
    for (const row of rows) {
      expect(row.split(/(?<!\\)\|/).length - 2, row).toBe(8);
      expect(row).toContain("a \\| b c");
    }
  });

  it("lists every trial with a link to its folder", () => {
    for (const t of verdict.trials) expect(md).toContain(`[${t.artifactDir}](${t.artifactDir}/)`);
  });
});
