// verdict.html and verdict.md of a real run whose agent put markup everywhere it could: the
// report must show it as text, keep its tables and per-trial evidence, and render in a real
// headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) without a single
// network request. The browser check keeps a full-page screenshot in test-output/.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VerdictDocument } from "../../src/compare/index.js";
import { renderHtmlReport, renderMarkdownReport } from "../../src/report/index.js";
import {
  fixtureAgent,
  makeExperiment,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

const CHROMIUM = "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const IN_CI = process.env.CI === "true" || process.env.CI === "1";
const SCREENSHOT = fileURLToPath(new URL("../../test-output/verdict-report.png", import.meta.url));
if (!HAVE_CHROMIUM && !IN_CI)
  console.info(
    `verdict.html browser check skipped: ${CHROMIUM} is not installed (apt-get install chromium)`,
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

function section(id: string): string {
  const start = html.indexOf(`<section id="${id}">`);
  expect(start, id).toBeGreaterThan(-1);
  return html.slice(start, html.indexOf("</section>", start));
}

describe("verdict.html of a real run", () => {
  it("shows agent-controlled text escaped and contains no script or injected element at all", () => {
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toContain("<b>bold</b>");
    expect(html).toContain(
      "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;",
    );
    // The written file, as a diff line, and the denied path in the decisions table.
    expect(html).toContain(
      '<span class="sign">+</span>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</td>',
    );
    expect(html).toContain("&quot;&gt;&lt;script&gt;alert(&quot;path&quot;)&lt;/script&gt;.txt");
  });

  it("starts with the verdict and its reason", () => {
    const header = html.slice(html.indexOf("<header"), html.indexOf("</header>"));
    expect(header).toContain(`<span class="status st-${verdict.status}">`);
    const escaped = verdict.reason
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
    expect(header).toContain(`<p class="reason">${escaped}</p>`);
  });

  it("has the per-variant, comparison and per-task tables and every trial with its evidence", () => {
    const variants = section("variants");
    for (const id of ["baseline", "fixer", "hostile"])
      expect(variants).toContain(`<td><strong>${id}</strong>`);
    expect(variants).toContain('<td class="num">2 / 2</td>');
    expect(variants).toMatch(/<strong>100%<\/strong> <span class="ci">\[\d+%–100%\]<\/span>/);
    const comparisons = section("comparisons");
    expect(comparisons).toContain("<td><strong>fixer</strong>");
    expect(comparisons).toContain("<td><strong>hostile</strong>");
    expect(section("flipped")).toContain("<strong>fix-value</strong>");
    expect(section("tasks")).toContain('class="task"><strong>fix-value</strong>');

    const evidence = section("evidence");
    expect(evidence.match(/<details class="trial" id="trial-\d+">/g)).toHaveLength(
      verdict.trials.length,
    );
    expect(evidence.match(/<h4>Patch/g)).toHaveLength(verdict.trials.length);
    expect(evidence).toContain('<span class="sign">+</span>fixed</td>');
    expect(evidence).toContain('<td class="fail">deny</td>');
    expect(evidence).toContain("<code>tool_call</code>");
    expect(evidence).toContain('<td class="pass">pass</td>');
    for (const t of verdict.trials) {
      expect(html).toContain(`<a href="${t.artifactDir}/">`);
      expect(html).toContain(`<a href="#trial-${t.seq}">evidence</a>`);
    }
  });

  it("renders without trial details too (escaping still applies)", () => {
    const bare = renderHtmlReport({ ...verdict, reason: "<i>why</i>" });
    expect(bare).toContain("&lt;i&gt;why&lt;/i&gt;");
    expect(bare).not.toContain("<h4>Patch");
    expect(bare).toContain("The trial folder was not read for this report.");
  });

  it.skipIf(!HAVE_CHROMIUM && !IN_CI)(
    "renders in headless Chromium: main table visible, a trial's diff visible once opened, no network request",
    async () => {
      if (!HAVE_CHROMIUM)
        throw new Error(`CI=${process.env.CI}: ${CHROMIUM} is missing; CI must install chromium`);
      const profile = await mkdtemp(join(tmpdir(), "hl-chromium-"));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1400, height: 900 },
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      });
      try {
        const page = await context.newPage();
        const requests: string[] = [];
        const problems: string[] = [];
        page.on("request", (request) => requests.push(request.url()));
        page.on("console", (message) => {
          if (message.type() === "error") problems.push(message.text());
        });
        page.on("pageerror", (error) => problems.push(error.message));
        await page.goto(pathToFileURL(join(exp.outDir, "verdict.html")).href);

        const table = page.locator("#variants-table");
        await expect.poll(() => table.isVisible()).toBe(true);
        expect(await table.locator("tbody tr").count()).toBe(3);
        expect(await table.locator("tbody tr").first().textContent()).toContain("baseline");

        // A fixer trial: its diff is hidden until its evidence is opened.
        const fixerTrial = verdict.trials.find((t) => t.variant === "fixer")!;
        const trial = page.locator(`#trial-${fixerTrial.seq}`);
        const added = trial.locator(".diff-lines tr.add", { hasText: "fixed" });
        expect(await added.isVisible()).toBe(false);
        await trial.locator(":scope > summary").click();
        await expect.poll(() => added.isVisible()).toBe(true);
        expect(await added.locator("td.code").textContent()).toBe("+fixed");

        // The hostile agent's markup stays text in the rendered page too.
        expect(await page.locator("img, script, iframe").count()).toBe(0);
        const offline = requests.filter((url) => !/^(file|data):/.test(url));
        expect(offline, "requests that left the page's own file").toEqual([]);
        expect(problems).toEqual([]);

        await mkdir(join(SCREENSHOT, ".."), { recursive: true });
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
        console.info(`verdict.html screenshot: ${SCREENSHOT}`);
      } finally {
        await context.close();
        await rm(profile, { recursive: true, force: true });
      }
    },
  );
});

/** The run's verdict as if its variants had run on hosts that report cost differently. */
function withCosts(original: VerdictDocument): VerdictDocument {
  const amount = (mean: number, trials: number) => ({
    total: mean * trials,
    trialsReporting: trials,
    meanPerCompletedTrial: mean,
    completedTrialsReporting: trials,
  });
  const setting: Record<string, { host: string; model: string; usd: number | null; est: number }> =
    {
      baseline: { host: "claude-code", model: "claude-sonnet-4-5", usd: 0.05, est: 0.05 },
      fixer: { host: "claude-code", model: "claude-haiku-4-5", usd: 0.02, est: 0.02 },
      hostile: { host: "codex", model: "gpt-5-codex", usd: null, est: 0.03 },
    };
  const stats = original.statistics!;
  return {
    ...original,
    variants: original.variants.map((v) => ({
      ...v,
      host: setting[v.id]!.host,
      model: setting[v.id]!.model,
      maxTurns: 20,
    })),
    statistics: {
      ...stats,
      aggregates: {
        ...stats.aggregates,
        variants: stats.aggregates.variants.map((a) => {
          const s = setting[a.variant]!;
          return {
            ...a,
            costUsd: s.usd === null ? null : amount(s.usd, a.trials),
            usdWithEstimates: amount(s.est, a.trials),
          };
        }),
      },
    },
  };
}

describe("cost where hosts report it differently", () => {
  it("verdict.md names each variant's host and model, marks estimates, and says who is unbudgeted", () => {
    const text = renderMarkdownReport(withCosts(verdict));
    expect(text).toContain("Hosts `claude-code`, `codex`");
    expect(text).toMatch(/\| hostile \| codex · gpt-5-codex \|/);
    expect(text).toContain("≈$0.0300 est.");
    expect(text).toContain("### Cost");
    expect(text).toMatch(
      /\| fixer \| claude-code · claude-haiku-4-5 \| \$0\.0400 \| 29% \| counted by --max-cost-usd \|/,
    );
    expect(text).toContain("unbudgeted: its host reports no USD (≈$0.0600 at list prices)");
  });

  it.skipIf(!HAVE_CHROMIUM && !IN_CI)(
    "draws pass rate against mean cost in Chromium: a point per variant, the baseline marked, the frontier joined",
    async () => {
      if (!HAVE_CHROMIUM)
        throw new Error(`CI=${process.env.CI}: ${CHROMIUM} is missing; CI must install chromium`);
      const dir = await mkdtemp(join(tmpdir(), "hl-cost-plot-"));
      const file = join(dir, "verdict.html");
      await writeFile(file, renderHtmlReport(withCosts(verdict)));
      const context = await chromium.launchPersistentContext(join(dir, "profile"), {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 1400, height: 900 },
        args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
      });
      try {
        const page = await context.newPage();
        const requests: string[] = [];
        page.on("request", (request) => requests.push(request.url()));
        await page.goto(pathToFileURL(file).href);
        const plot = page.locator("#cost-plot");
        await expect.poll(() => plot.isVisible()).toBe(true);
        const points = plot.locator("g.point");
        expect(await points.count()).toBe(3);
        expect(await plot.locator('g.point[data-baseline="true"] rect').count()).toBe(1);
        expect(
          await plot.locator('g.point[data-variant="baseline"]').getAttribute("data-baseline"),
        ).toBe("true");
        // Every point is drawn inside the plot, each at its own place.
        const box = (await plot.boundingBox())!;
        const centers = new Set<string>();
        for (let i = 0; i < 3; i += 1) {
          const mark = (await points.nth(i).locator("rect, circle").boundingBox())!;
          expect(mark.x).toBeGreaterThanOrEqual(box.x);
          expect(mark.x + mark.width).toBeLessThanOrEqual(box.x + box.width);
          expect(mark.y).toBeGreaterThanOrEqual(box.y);
          expect(mark.y + mark.height).toBeLessThanOrEqual(box.y + box.height);
          centers.add(`${Math.round(mark.x)},${Math.round(mark.y)}`);
        }
        expect(centers.size).toBe(3);
        // The cheapest variant is on the frontier; the costliest one passes no more often than a cheaper one.
        expect(
          await plot.locator('g.point[data-variant="fixer"]').getAttribute("data-frontier"),
        ).toBe("true");
        const shot = await plot.screenshot({
          path: join(SCREENSHOT, "..", "verdict-cost-plot.png"),
        });
        // A PNG of the plot's own size with more than one colour in it: something was drawn.
        expect(shot.subarray(1, 4).toString()).toBe("PNG");
        expect(new Set(shot.subarray(64, 4096)).size).toBeGreaterThan(8);
        expect(requests.filter((url) => !/^(file|data):/.test(url))).toEqual([]);
      } finally {
        await context.close();
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("verdict.md of a real run", () => {
  it("keeps a pipe or a newline in a trial's explanation from breaking the trial table", () => {
    const text = renderMarkdownReport({
      ...verdict,
      trials: verdict.trials.map((t) => ({ ...t, explanation: "the agent threw: a | b\nc" })),
    });
    const rows = text.split("\n").filter((line) => /^\| \d+ \|/.test(line));
    expect(rows).toHaveLength(verdict.trials.length);
    for (const row of rows) {
      expect(row.split(/(?<!\\)\|/).length - 2, row).toBe(11);
      expect(row).toContain("a \\| b c");
    }
  });

  it("lists every trial with a link to its folder and has the per-task and flipped sections", () => {
    for (const t of verdict.trials) expect(md).toContain(`[${t.artifactDir}](${t.artifactDir}/)`);
    expect(md).toContain("## Per task");
    expect(md).toContain("## Tasks that flipped");
    expect(md).toMatch(/\| fix-value \| fixer \| 2 \/ 2 \| 100% \[\d+%–100%\] \|/);
  });
});
