// verdict.md and verdict.html from hand-built verdicts (statistics from the real stats stage):
// intervals, pass@k, tokens and turns, the per-task table, flipped tasks, retries, and escaping
// of everything an agent could put into a trial.

import { describe, expect, it } from "vitest";
import {
  summarizeRegrade,
  type VerdictDocument,
  verdictDocumentSchema,
} from "../../src/compare/index.js";
import {
  formatChangeLine,
  mdText,
  renderHtmlReport,
  renderMarkdownReport,
  renderTerminalSummary,
  type TrialDetails,
} from "../../src/report/index.js";
import { formatP } from "../../src/stats/index.js";
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
      /\| careful \| scripted \| careful-composition \| `hr_careful` \| 10 \/ 10 \| 100% \[72%–100%\] \|/,
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
    const p = formatP(careful.test!.pValue, careful.test!.threshold);
    expect(comparisons).toContain(
      `<td class="num">${p}<div class="sub">exact conditional and score tests, level 0.025</div></td>`,
    );
    expect(comparisons).toContain("1.50×");
    expect(md).toMatch(
      /\| careful \| \w+ \| \+50\.0 pts \| \+\d+\.\d pts to \+\d+\.\d pts \(97\.5%, score-with-exact-test\) \| 0\.024 \(exact conditional and score tests, level 0\.025\) \|/,
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

  it("lists every trial of both variants on each flipped task, linked to its evidence and folder", () => {
    const flip = verdict.flips!.find((f) => f.task === "parse" && f.variant === "careful")!;
    expect(flip.trials.map((t) => `${t.variant} ${t.trial} ${t.outcome}`)).toEqual([
      "careful 1 passed",
      "careful 2 passed",
      "careful 3 passed",
      "careful 4 passed",
      "careful 5 passed",
      "baseline 1 failed",
      "baseline 2 failed",
      "baseline 3 failed",
      "baseline 4 failed",
      "baseline 5 passed",
    ]);
    const mdFlipped = mdSection(md, "Tasks that flipped");
    expect(mdFlipped).toContain(
      "- parse · careful improved: careful [trial 1 passed (100.0)](careful/parse/trial-001/)",
    );
    expect(mdFlipped).toContain(
      "; baseline [trial 1 failed (50.0)](baseline/parse/trial-001/), [trial 2 failed (50.0)](baseline/parse/trial-002/)",
    );
    const flipped = section(html, "flipped");
    const baselineTrial2 = verdict.trials.find(
      (t) => t.variant === "baseline" && t.task === "parse" && t.trial === 2,
    )!;
    expect(flipped).toContain(
      `<a href="#trial-${baselineTrial2.seq}" class="down">#2 failed</a> <a href="baseline/parse/trial-002/" class="muted">folder</a>`,
    );
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

describe("verdicts written before the current method", () => {
  // Decided by the interval alone (Newcombe), with the exact test printed beside it: issue 14's
  // "accept with 95% CI +0.00 to +0.81 beside exact p 0.182".
  function oldVerdict(): VerdictDocument {
    const current = buildVerdict([
      ...cell("baseline", "t", "pffff"),
      ...cell("candidate", "t", "ppppf"),
    ]);
    const stats = current.statistics!;
    const [comparison] = stats.comparisons;
    const { test: _test, toSettle: _settle, ...rest } = comparison!;
    const old = {
      ...current,
      status: "accept" as const,
      flips: undefined,
      statistics: {
        ...stats,
        status: "accept" as const,
        comparisons: [
          {
            ...rest,
            status: "accept" as const,
            interval: {
              lower: 0.0004,
              upper: 0.81,
              level: 0.95,
              method: "newcombe-hybrid-score" as const,
            },
            exactPValue: 0.182,
          },
        ],
      },
    };
    return verdictDocumentSchema.parse(JSON.parse(JSON.stringify(old)));
  }

  it("reads, shows a lower limit above 0 with enough digits, and says the interval and the exact test disagree", () => {
    const verdict = oldVerdict();
    const md = renderMarkdownReport(verdict);
    const html = renderHtmlReport(verdict);
    expect(md).toContain("+0.04 pts to +81.0 pts (95%, newcombe-hybrid-score)");
    const note =
      "For candidate the interval and the exact test disagree: the 95% interval (newcombe-hybrid-score) lies above 0, but the exact test's p = 0.18 is > 0.05. This verdict was decided by the interval, a method harnesslab no longer uses; `harness compare regrade` decides it again with the current one, whose interval and test always agree.";
    expect(md).toContain(mdText(note));
    expect(html).toContain("the exact test&#39;s p = 0.18 is &gt; 0.05");
    expect(renderTerminalSummary(verdict, "/out")).toContain(`note: ${note}`);
  });

  it("says nothing of the kind for a current verdict, whose interval and test agree", () => {
    const current = buildVerdict([
      ...cell("baseline", "t", "pffff"),
      ...cell("candidate", "t", "ppppf"),
    ]);
    expect(renderMarkdownReport(current)).not.toContain("disagree");
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

describe("tasks no flip can be judged on", () => {
  it("says no flip can be judged, not that none flipped, when nothing completed", () => {
    const broken = buildVerdict([...cell("baseline", "t", "ii"), ...cell("candidate", "t", "ii")]);
    const html = renderHtmlReport(broken);
    const md = renderMarkdownReport(broken);
    const flipped = section(html, "flipped");
    expect(flipped).not.toContain("No task flipped");
    expect(flipped).toContain(
      "No flip can be judged: on no task do the baseline and a variant both have a completed trial.",
    );
    expect(flipped).toContain(
      "<li><strong>t</strong> · candidate vs baseline: no completed trial of baseline or candidate (infrastructure errors only, or none ran)</li>",
    );
    const mdFlipped = mdSection(md, "Tasks that flipped");
    expect(mdFlipped).not.toContain("No task flipped");
    expect(mdFlipped).toContain("No flip can be judged");
    expect(mdFlipped).toContain(
      "- t · candidate vs baseline: no completed trial of baseline or candidate",
    );
    // A rate that cannot exist says why instead of "— —".
    expect(html).not.toContain("— —");
    expect(md).not.toContain("— —");
    expect(section(html, "variants")).toContain(
      '<strong>—</strong> <span class="ci">(no completed trial)</span>',
    );
    expect(md).toContain(
      "| 0 / 0 | — (no completed trial) (0% with infra errors as failures) | 2 |",
    );
    expect(section(html, "comparisons")).toContain('<a href="#flipped">1 task(s) not judged</a>');
  });

  it("names the tasks left out when others could be judged", () => {
    const partial = buildVerdict([
      ...cell("baseline", "a", "pp"),
      ...cell("candidate", "a", "pp"),
      ...cell("baseline", "b", "ff"),
      ...cell("candidate", "b", "ii"),
    ]);
    const flipped = section(renderHtmlReport(partial), "flipped");
    expect(flipped).toContain("No task flipped among the tasks that could be judged");
    expect(flipped).toContain(
      "<strong>b</strong> · candidate vs baseline: no completed trial of candidate",
    );
    expect(flipped).not.toContain("<strong>a</strong> ·");
    expect(mdSection(renderMarkdownReport(partial), "Comparisons with the baseline")).toContain(
      "| none (1 task(s) not judged) |",
    );
  });
});

describe("interrupted and resumed runs", () => {
  const base = buildVerdict([...cell("baseline", "t", "pp"), ...cell("candidate", "t", "p")]);

  it("says the run was interrupted and how many of its planned trials finished", () => {
    const interrupted = { ...base, interrupted: true };
    const html = renderHtmlReport(interrupted);
    expect(html).toContain('<p class="callout bad" id="interrupted"><strong>Interrupted.</strong>');
    expect(html).toContain(
      "after 3 of 4 planned trials finished: the verdict covers only those. Run the same <code>harness compare run</code> with --resume to finish it.",
    );
    expect(html).toContain("· interrupted run</div>");
    expect(renderMarkdownReport(interrupted)).toContain(
      "> **Interrupted.** This run was interrupted (Ctrl-C or SIGTERM) after 3 of 4 planned trials finished",
    );
    expect(renderHtmlReport(base)).not.toContain('id="interrupted"');
    expect(renderMarkdownReport(base)).not.toContain("Interrupted");
  });

  it("says how many trials a --resume took from the earlier run", () => {
    const resumed = { ...base, resumedTrials: 2 };
    const text =
      "2 of the 3 trials were taken from an earlier run of the same experiment (--resume); the others ran in this one.";
    expect(renderHtmlReport(resumed)).toContain(`<p class="callout" id="resumed">${text}</p>`);
    expect(renderMarkdownReport(resumed)).toContain(`> ${text}`);
    expect(renderHtmlReport(base)).not.toContain('id="resumed"');
  });
});

describe("a re-grade's verdict", () => {
  const before = buildVerdict([...cell("baseline", "t", "pp"), ...cell("candidate", "t", "pf")]);
  const after = buildVerdict([...cell("baseline", "t", "pf"), ...cell("candidate", "t", "pp")]);
  const summary = summarizeRegrade({
    before: before.trials,
    after: after.trials,
    variants: ["baseline", "candidate"],
    baseline: "baseline",
  });
  const regrade: VerdictDocument = {
    ...after,
    regradeOf: "verdict.json",
    regradeSummary: {
      ...summary,
      changes: summary.changes.map((c) => ({
        ...c,
        after: { ...c.after, explanation: c.after.explanation.replace("check/check", "<b>x</b>") },
      })),
    },
    graderContracts: [
      {
        task: "t",
        grader: "readme",
        path: "/contracts/readme.json",
        contractHash: `sha256:${"a".repeat(64)}`,
        source: "option",
      },
    ],
  };

  it("says what it re-grades, with which contracts, and the change line `compare regrade` prints", () => {
    const html = renderHtmlReport(regrade);
    const part = section(html, "regrade");
    expect(formatChangeLine(summary)).toBe(
      "2 trials changed: 1 up, 1 down; baseline pass rate 1.00 → 0.50; candidate pass rate 0.50 → 1.00",
    );
    expect(part).toContain("This verdict re-grades <code>verdict.json</code>");
    expect(part).toContain(`<strong>${formatChangeLine(summary)}</strong>`);
    expect(part).toContain(
      `<tr><td>t</td><td><code>readme</code></td><td><code>--grader-contract</code></td><td><code>/contracts/readme.json</code></td><td><code>sha256:${"a".repeat(64)}</code></td></tr>`,
    );
    expect(html).toContain('<a href="#regrade">Re-grade</a>');
    const md = mdSection(renderMarkdownReport(regrade), "Re-grade");
    expect(md).toContain(`**${formatChangeLine(summary)}**`);
    expect(md).toContain(
      `| t | \`readme\` | \`--grader-contract\` | \`/contracts/readme.json\` | \`sha256:${"a".repeat(64)}\` |`,
    );
  });

  it("lists each changed trial with links to its folder and its evidence", () => {
    const part = section(renderHtmlReport(regrade), "regrade");
    expect(part).toContain(
      '<tr><td><a href="baseline/t/trial-002/">baseline/t/trial-002/</a> · <a href="#trial-2">evidence</a></td><td>baseline</td><td class="dir down">▼ down</td><td>passed (100)</td><td>failed (50)</td><td class="explain">failed checks: &lt;b&gt;x&lt;/b&gt;</td></tr>',
    );
    expect(part).toContain('<td class="dir up">▲ up</td><td>failed (50)</td><td>passed (100)</td>');
    const md = mdSection(renderMarkdownReport(regrade), "Re-grade");
    expect(md).toContain(
      "| [baseline/t/trial-002](baseline/t/trial-002/) | baseline | down | passed (100) | failed (50) | failed checks: &lt;b&gt;x&lt;/b&gt; |",
    );
  });

  it("has no re-grade section for a run's own verdict", () => {
    expect(renderHtmlReport(after)).not.toContain('id="regrade"');
    expect(renderMarkdownReport(after)).not.toContain("## Re-grade");
  });
});

describe("grader checks with their evidence", () => {
  const verdict = buildVerdict([...cell("baseline", "t", "f"), ...cell("candidate", "t", "p")]);
  const details = (evidence: unknown): TrialDetails => ({
    patch: "",
    response: "",
    stderr: "",
    trace: "",
    decisions: [],
    checks: [
      {
        grader: "tests",
        id: "tests",
        passed: false,
        detail: "npm test exited with code 1 (expected 0)",
        evidence,
      },
    ],
  });
  const page = (evidence: unknown) =>
    renderHtmlReport(verdict, new Map([[verdict.trials[0]!.artifactDir, details(evidence)]]));

  it("shows a command's exit code and output tails, escaped and collapsed", () => {
    const html = page({
      argv: ["npm", "test"],
      exitCode: 1,
      signal: null,
      timedOut: false,
      durationMs: 1234,
      stdoutTail: "FAIL src/value.test.js\n<script>alert(1)</script>",
      stderrTail: "",
    });
    expect(html).toContain(
      '<details class="evidence"><summary>evidence: exit code 1 · 1.2 s</summary><div class="ev-label">stdout (end)</div><pre class="ev-text">FAIL src/value.test.js\n&lt;script&gt;alert(1)&lt;/script&gt;</pre></details>',
    );
    expect(html).not.toMatch(/<details class="evidence" open/);
    expect(html).not.toContain("stderr (end)");
  });

  it("keeps the end of a long output and says how much came before", () => {
    const html = page({ exitCode: 2, stdoutTail: "", stderrTail: `${"x".repeat(9000)}THE ERROR` });
    expect(html).toContain("(5009 earlier characters) …");
    expect(html).toContain("THE ERROR</pre>");
    expect(html).not.toContain("x".repeat(4001));
  });

  it("says why a command never ran, and shows other evidence as JSON", () => {
    expect(page({ spawnError: "spawn nope ENOENT", stdoutTail: "", stderrTail: "" })).toContain(
      "<summary>evidence: could not start: spawn nope ENOENT · no output</summary>",
    );
    const html = page({ files: ["<a>.txt"], mode: "strict" });
    expect(html).toContain('<summary>evidence</summary><div class="ev-label">evidence</div>');
    expect(html).toContain("&lt;a&gt;.txt");
    expect(page(undefined)).not.toContain('class="evidence"');
  });
});

describe("permission decisions given whole to the renderer", () => {
  it("shows the first and last decisions within the trial's share and counts them all", () => {
    const verdict = buildVerdict([...cell("baseline", "t", "f"), ...cell("candidate", "t", "p")]);
    const decisions = Array.from({ length: 5000 }, (_, i) => ({
      seq: i + 1,
      tool: "Bash",
      decision: i % 2 === 0 ? "deny" : "allow",
      rule: "r",
      reason: "x".repeat(2000),
      inputSummary: "ls",
    }));
    const html = renderHtmlReport(
      verdict,
      new Map([
        [
          verdict.trials[0]!.artifactDir,
          { patch: "", response: "", stderr: "", trace: "", decisions, checks: [] },
        ],
      ]),
    );
    expect(html).toContain("(5000, 2500 denied)");
    expect(
      html.match(/<tr( class="tone-deny")?><td class="num">\d+<\/td><td><code>Bash/g),
    ).toHaveLength(400);
    expect(html).toContain("… 4600 more decision(s) in");
    expect(html).toContain('<td class="num">5000</td>');
    expect(html).toContain(`${"x".repeat(600)}… (1400 more characters)`);
    expect(Buffer.byteLength(html)).toBeLessThan(600_000);
  });
});
