// verdict.md and verdict.html from hand-built verdicts (statistics from the real stats stage):
// intervals, pass@k, tokens and turns, the per-task table, flipped tasks, retries, and escaping
// of everything an agent could put into a trial.
import { describe, expect, it } from "vitest";
import {
  renderHtmlReport,
  renderMarkdownReport,
  type TrialDetails,
} from "../../src/report/index.js";
import { buildVerdict, cell } from "./verdicts.js";

const TOKENS = {
  uncachedInput: 1000,
  cacheRead: 20_000,
  cacheWrite: 500,
  output: 800,
  reasoning: 0,
};

/** baseline fails `parse` and passes `flag`; careful passes `parse`; fast fails `flag`. */
function flippingVerdict() {
  return buildVerdict(
    [
      ...cell("baseline", "parse", "ffffp", { costUsd: 0.02, tokens: TOKENS, turns: 4 }),
      ...cell("careful", "parse", "ppppp", { costUsd: 0.03, tokens: TOKENS, turns: 7 }),
      ...cell("fast", "parse", "fpfff", { costUsd: 0.01, tokens: TOKENS, turns: 2 }),
      ...cell("baseline", "flag", "ppppf", { costUsd: 0.02, tokens: TOKENS, turns: 4 }),
      ...cell("careful", "flag", "ppppp", { costUsd: 0.03, tokens: TOKENS, turns: 7 }),
      ...cell("fast", "flag", "fffpf", { costUsd: 0.01, tokens: TOKENS, turns: 2 }),
    ],
    { degraded: { fast: ["component.careful"] } },
  );
}

/** The HTML between `<section id="…">` and its end. */
function section(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}">`);
  expect(start, id).toBeGreaterThan(-1);
  return html.slice(start, html.indexOf("</section>", start));
}

/** The Markdown from `## title` to the next `## `. */
function mdSection(md: string, title: string): string {
  const start = md.indexOf(`## ${title}\n`);
  expect(start, title).toBeGreaterThan(-1);
  const next = md.indexOf("\n## ", start + 3);
  return md.slice(start, next === -1 ? undefined : next);
}

describe("per-variant and per-task tables", () => {
  const verdict = flippingVerdict();
  const html = renderHtmlReport(verdict);
  const md = renderMarkdownReport(verdict);
  const careful = verdict.statistics!.aggregates.variants.find((v) => v.variant === "careful")!;

  it("shows each variant's pass rate with its 95% Wilson interval", () => {
    // careful: 10 of 10 → Wilson [72%, 100%]; baseline: 5 of 10 → [24%, 76%].
    expect(careful.passRateInterval).toMatchObject({ method: "wilson", level: 0.95 });
    expect(Math.round(careful.passRateInterval!.lower * 100)).toBe(72);
    const variants = section(html, "variants");
    expect(variants).toContain('<strong>100%</strong> <span class="ci">[72%–100%]</span>');
    expect(variants).toContain('<strong>50%</strong> <span class="ci">[24%–76%]</span>');
    expect(md).toMatch(
      /\| careful \| careful-composition \| `hr_careful` \| 10 \/ 10 \| 100% \[72%–100%\] \|/,
    );
    expect(md).toMatch(/\| baseline \(baseline\) \| .* \| 5 \/ 10 \| 50% \[24%–76%\] \|/);
  });

  it("shows pass@1, pass@k and pass^k at the largest k, and the pass@k table", () => {
    // baseline per task: 1 of 5 and 4 of 5 → pass^5 is 0 on both; pass@5 is 1 on both.
    const variants = section(html, "variants");
    expect(variants).toContain("<th>pass@k · pass^k (largest k)</th>");
    expect(variants).toContain('<td class="num">k=5: 100% · 0%</td>');
    expect(variants).toContain('<td class="num">k=5: 100% · 100%</td>');
    expect(variants).toContain("<th>k = 3</th>");
    expect(md).toContain("### pass@k · pass^k");
    expect(md).toContain("| variant | k = 1 | k = 2 | k = 3 | k = 5 |");
    expect(md).toContain("| careful | 100% · 100% | 100% · 100% | 100% · 100% | 100% · 100% |");
  });

  it("shows mean cost, tokens in / out (cache included), turns and degraded components", () => {
    const variants = section(html, "variants");
    // 1000 + 20000 + 500 = 21.5k input tokens; 800 output.
    expect(variants).toContain('<td class="num">21.5k / 800</td>');
    expect(variants).toContain('<td class="num">7.0</td>');
    expect(variants).toContain('<td class="num">$0.0300</td>');
    expect(variants).toContain('<code class="warn">component.careful</code>');
    expect(md).toContain("| $0.0300 | 21.5k / 800 | 7.0 |");
    expect(md).toContain("- `fast`: degraded components `component.careful`");
  });

  it("has a row per variant and task with the same measures", () => {
    const tasks = section(html, "tasks");
    expect(tasks.match(/<tr( class="group")?><td rowspan="3" class="task">/g)).toHaveLength(2);
    // careful on parse: 5 of 5 → [57%, 100%].
    expect(tasks).toContain('<strong>100%</strong> <span class="ci">[57%–100%]</span>');
    const perTask = mdSection(md, "Per task");
    expect(perTask.split("\n").filter((l) => /^\| (parse|flag) \|/.test(l))).toHaveLength(6);
    expect(perTask).toContain("| parse | careful | 5 / 5 | 100% [57%–100%] | 0 |");
  });

  it("says what an infrastructure error does to a pass rate", () => {
    const withInfra = buildVerdict([
      ...cell("baseline", "t", "ppff"),
      ...cell("candidate", "t", "ppfi"),
    ]);
    expect(renderHtmlReport(withInfra)).toContain(
      '<div class="sub">50% with infra errors as failures</div>',
    );
    expect(renderMarkdownReport(withInfra)).toContain(
      "| 2 / 3 | 67% [21%–94%] (50% with infra errors as failures) | 1 |",
    );
  });
});

describe("comparisons and flipped tasks", () => {
  const verdict = flippingVerdict();
  const html = renderHtmlReport(verdict);
  const md = renderMarkdownReport(verdict);

  it("shows each comparison's difference, interval, p-value and cost ratio", () => {
    const comparisons = section(html, "comparisons");
    const careful = verdict.statistics!.comparisons.find((c) => c.variant === "careful")!;
    expect(comparisons).toContain("<strong>+50.0 pts</strong>");
    expect(comparisons).toMatch(/\+\d+\.\d pts to \+\d+\.\d pts<span class="bar diffbar"/);
    expect(comparisons).toContain(`${careful.exactPValue!.toFixed(3)}`);
    expect(comparisons).toContain("1.50×");
    expect(md).toMatch(
      /\| careful \| \w+ \| \+50\.0 pts \| \+\d+\.\d pts to \+\d+\.\d pts \(97\.5%, stratified-newcombe-mover\) \|/,
    );
  });

  it("lists which task flipped which way for which variant", () => {
    const flipped = section(html, "flipped");
    expect(flipped).toContain(
      '<tr class="flip-up"><td>careful</td><td><strong>parse</strong></td><td class="up">▲ improved (fail → pass)</td><td class="num">20% <span class="muted">baseline</span></td><td class="arrow">→</td><td class="num">100% <span class="muted">careful</span></td></tr>',
    );
    expect(flipped).toContain(
      '<tr class="flip-down"><td>fast</td><td><strong>flag</strong></td><td class="down">▼ regressed (pass → fail)</td><td class="num">80% <span class="muted">baseline</span></td><td class="arrow">→</td><td class="num">20% <span class="muted">fast</span></td></tr>',
    );
    expect(section(html, "comparisons")).toContain('<span class="up">1 improved</span>');
    const mdFlipped = mdSection(md, "Tasks that flipped");
    expect(mdFlipped).toContain("| careful | parse | improved (fail → pass) | 20% | 100% |");
    expect(mdFlipped).toContain("| fast | flag | regressed (pass → fail) | 80% | 20% |");
  });

  it("says so when no task flipped", () => {
    const steady = buildVerdict([
      ...cell("baseline", "t", "ppfp"),
      ...cell("candidate", "t", "pppf"),
    ]);
    expect(section(renderHtmlReport(steady), "flipped")).toContain("<p>No task flipped");
    expect(mdSection(renderMarkdownReport(steady), "Tasks that flipped")).toContain(
      "No task flipped",
    );
  });
});

describe("infrastructure retries", () => {
  const retried = buildVerdict(
    [
      ...cell("baseline", "t", "pf"),
      {
        variant: "candidate",
        task: "t",
        outcome: "passed",
        retriedAttempts: [
          {
            attempt: 1,
            infraReason: "rate_limited",
            explanation: "HTTP 429 <from> the API",
            dir: "attempts/1",
            durationMs: 800,
            costUsd: 0.002,
          },
          {
            attempt: 2,
            infraReason: "executor_unresponsive",
            explanation: "no answer within the timeout",
            dir: "attempts/2",
            durationMs: 31_000,
            costUsd: null,
          },
        ],
      },
      { variant: "candidate", task: "t", outcome: "passed" },
    ],
    { retryLimit: 2 },
  );

  it("says how many trials were retried and lists every earlier attempt with a link", () => {
    const html = renderHtmlReport(retried);
    const retries = section(html, "retries");
    expect(retries).toContain(
      "<strong>1 trial(s) were retried</strong> after infrastructure errors (up to 2 retries each): 2 extra attempt(s), 1 recovered",
    );
    expect(retries).toContain(
      "<code>rate_limited</code></td><td>HTTP 429 &lt;from&gt; the API</td>",
    );
    expect(retries).toContain("<code>executor_unresponsive</code>");
    expect(retries).toContain(
      '<a href="candidate/t/trial-001/attempts/1/">candidate/t/trial-001/attempts/1/</a>',
    );
    expect(retries).toContain('<a href="candidate/t/trial-001/attempts/2/">');
    expect(retries).toContain('<a href="#trial-3">#3</a>');
    // Every row fills the seven columns (the trial cell spans its attempts' rows).
    const rows = retries.split("<tr").slice(2);
    expect(rows.map((row) => (row.match(/<td/g) ?? []).length)).toEqual([7, 6, 6]);
    expect(rows[2]).toContain('<span class="outcome o-passed">passed</span>');
    // The trial's own evidence lists the attempts too.
    expect(html).toMatch(/id="trial-3">[\s\S]*Earlier attempts[\s\S]*attempt 2: /);

    const md = mdSection(renderMarkdownReport(retried), "Infrastructure retries");
    expect(md).toContain(
      "1 trial(s) were retried after infrastructure errors (up to 2 retries each): 2 extra attempt(s), 1 recovered.",
    );
    expect(md).toContain(
      "| #3 t · candidate · trial 1 | 1 | rate_limited | HTTP 429 &lt;from&gt; the API | 800 ms | [candidate/t/trial-001/attempts/1](candidate/t/trial-001/attempts/1/) |",
    );
    expect(md).toContain("| #3 t · candidate · trial 1 | 2 | executor_unresponsive |");
  });

  it("notes an unused retry allowance and says nothing when retries were off", () => {
    const allowed = buildVerdict(
      [...cell("baseline", "t", "pf"), ...cell("candidate", "t", "pp")],
      {
        retryLimit: 3,
      },
    );
    expect(section(renderHtmlReport(allowed), "retries")).toContain(
      "up to 3 time(s) after an infrastructure error; none needed it",
    );
    const off = buildVerdict([...cell("baseline", "t", "pf"), ...cell("candidate", "t", "pp")]);
    expect(renderHtmlReport(off)).not.toContain('id="retries"');
    expect(renderMarkdownReport(off)).not.toContain("Infrastructure retries");
  });
});

describe("escaping what the agent controls", () => {
  const EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>';
  const verdict = buildVerdict([
    ...cell("baseline", "t", "f", {
      explanation: `agent threw: ${EVIL}`,
      changedFiles: [`${EVIL}.txt`],
    }),
    ...cell("candidate", "t", "p"),
  ]);
  const details: TrialDetails = {
    patch: `diff --git a/${EVIL}.txt b/${EVIL}.txt\nnew file mode 100644\n--- /dev/null\n+++ b/${EVIL}.txt\n@@ -0,0 +1 @@\n+${EVIL}\n`,
    response: EVIL,
    stderr: `executor: ${EVIL}`,
    trace: `${JSON.stringify({ type: EVIL, tool: EVIL, input: { [EVIL]: EVIL } })}\n${EVIL}\n`,
    decisions: [
      { seq: 1, tool: EVIL, decision: "deny", rule: EVIL, reason: EVIL, inputSummary: EVIL },
    ],
    checks: [{ grader: EVIL, id: EVIL, passed: false, detail: EVIL }],
  };
  const html = renderHtmlReport(
    verdict,
    new Map(verdict.trials.map((t) => [t.artifactDir, details])),
  );

  it("never lets agent text become markup, in any part of the page", () => {
    expect(html).not.toMatch(/<script|<img/i);
    const escaped =
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;";
    // explanation (trial table and evidence), changed file, diff file name and line, final
    // report, stderr, trace, decisions and checks all carry it escaped.
    expect(html.split(escaped).length - 1).toBeGreaterThanOrEqual(12);
    expect(html).toContain(`<code class="path">${escaped}.txt</code>`);
    expect(html).toContain(`<span class="sign">+</span>${escaped}</td>`);
    expect(html).toContain(`<pre class="response">${escaped}</pre>`);
  });

  it("forbids scripts and remote loads with a Content-Security-Policy and links nothing remote", () => {
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'; base-uri 'none'">`,
    );
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<link\b|<iframe|<object|<embed|<form/i);
  });

  it("percent-encodes trial folder links so an id can neither end the attribute nor become a URL scheme", () => {
    const odd = buildVerdict([
      ...cell('javascript:alert(1)"x', "t#1?", "f"),
      ...cell("candidate", "t#1?", "p"),
    ]);
    const page = renderHtmlReport(odd);
    expect(page).toContain('<a href="javascript%3Aalert(1)%22x/t%231%3F/trial-001/">');
    expect(renderMarkdownReport(odd)).toContain("(javascript%3Aalert(1)%22x/t%231%3F/trial-001/)");
  });

  it("keeps a pipe, newline or tag in Markdown table cells from breaking the table", () => {
    const md = renderMarkdownReport(verdict);
    const row = md.split("\n").find((line) => line.startsWith("| 1 | t | baseline |"))!;
    expect(row).toContain("agent threw: &lt;script&gt;");
    expect(row).not.toContain("<script");
  });

  it("prefixes trial links when the report is written elsewhere", () => {
    const page = renderHtmlReport(verdict, new Map(), { linkBase: "../run/" });
    expect(page).toContain('<a href="../run/baseline/t/trial-001/">');
    expect(renderMarkdownReport(verdict, { linkBase: "../run/" })).toContain(
      "[baseline/t/trial-001](../run/baseline/t/trial-001/)",
    );
  });
});

describe("many trials", () => {
  const patchOf = (lines: number) =>
    [
      "diff --git a/a.txt b/a.txt",
      "--- a/a.txt",
      "+++ b/a.txt",
      `@@ -0,0 +1,${lines} @@`,
      ...Array.from({ length: lines }, (_, i) => `+line ${i}`),
    ].join("\n");
  const details = (verdict: ReturnType<typeof buildVerdict>) =>
    new Map(
      verdict.trials.map((t) => [
        t.artifactDir,
        { patch: patchOf(300), response: "", stderr: "", trace: "", decisions: [], checks: [] },
      ]),
    );

  it("shrinks each trial's share of the page as trials are added, down to a floor", () => {
    const few = buildVerdict([...cell("baseline", "t", "pf"), ...cell("candidate", "t", "pp")]);
    expect(renderHtmlReport(few, details(few))).not.toContain("Patch clipped");

    const many = buildVerdict([
      ...cell("baseline", "t", "pf".repeat(100)),
      ...cell("candidate", "t", "pp".repeat(100)),
    ]);
    const html = renderHtmlReport(many, details(many));
    // 400 trials share 40 000 diff lines: 100 each, raised to the floor of 200 (hunk header included).
    expect(html.match(/Patch clipped: 101 more diff line\(s\) not shown/g)).toHaveLength(400);
    // The tables stay complete.
    expect(html.match(/<a href="#trial-\d+">evidence<\/a>/g)).toHaveLength(400);
  });
});
