// verdict.html stays small when an agent makes its trial's files huge: 200 000 permission
// decisions, a trace of 120 000 events, a 20 MB patch, megabytes of final report and stderr. The
// page keeps the beginning and the end of each, says what it left out and links the full files,
// and the reader keeps only what the page shows (sizes are asserted, never times).
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadTrialDetails,
  renderVerdictHtml,
  type VerdictDocument,
} from "../../src/compare/index.js";
import {
  type DecisionsExcerpt,
  renderHtmlReport,
  type TraceRow,
  type TrialDetails,
} from "../../src/report/index.js";
import { buildVerdict, cell } from "./verdicts.js";

const DECISIONS = 200_000;
const TRACE_EVENTS = 120_000;
const PATCH_LINES = 200_000;
const LONG_INPUT = "i".repeat(5000);

let base: string;
let verdict: VerdictDocument;
let bigDir: string;
/** The page and the reader's excerpts, made once: reading 200 000 decisions takes a moment. */
let page: string;
let loaded: Map<string, TrialDetails>;
/** Line numbers of trace.jsonl: the last event's and how many lines the file has. */
let lastEventLine = 0;

/** `{"schemaVersion": …, "decisions": [ … ]}` as the harness writes it (indented JSON). */
function decisionsFile(count: number): string {
  const items: string[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const deny = seq % 7 === 0;
    // The first one is long, and the last has braces, brackets and quotes inside its strings.
    const input = seq === 1 ? LONG_INPUT : seq === count ? 'echo "}]{[" \\ done' : `ls ${seq}`;
    items.push(
      [
        "    {",
        `      "seq": ${seq},`,
        '      "tool": "Bash",',
        `      "inputSummary": ${JSON.stringify(input)},`,
        `      "decision": "${deny ? "deny" : "allow"}",`,
        `      "reason": "${deny ? "not a validation command" : "allowed"}",`,
        `      "rule": "${deny ? "bash-not-allowed" : "read-anywhere"}",`,
        `      "atMs": ${seq}`,
        "    }",
      ].join("\n"),
    );
  }
  return `{\n  "schemaVersion": "harnesslab.permission-decisions.v1",\n  "decisions": [\n${items.join(",\n")}\n  ]\n}\n`;
}

/** One event per line, with a blank line after every 1000th event (blank lines keep their number). */
function traceFile(events: number): string {
  const lines: string[] = [];
  for (let i = 1; i <= events; i++) {
    lines.push(JSON.stringify({ type: "tool_call", tool: "Read", input: { path: `f${i}.txt` } }));
    if (i % 1000 === 0) lines.push("");
  }
  lastEventLine = lines.length - (events % 1000 === 0 ? 1 : 0);
  return `${lines.join("\n")}\n`;
}

function patchFile(lines: number): string {
  const body = Array.from({ length: lines }, (_, i) => `+${`line ${i} `.padEnd(99, "x")}`);
  return `diff --git a/data.txt b/data.txt\nnew file mode 100644\n--- /dev/null\n+++ b/data.txt\n@@ -0,0 +1,${lines} @@\n${body.join("\n")}\n`;
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-report-bounds-"));
  verdict = buildVerdict([...cell("baseline", "t", "p"), ...cell("candidate", "t", "f")]);
  for (const t of verdict.trials) await mkdir(join(base, t.artifactDir), { recursive: true });
  bigDir = join(base, verdict.trials[1]!.artifactDir);
  await writeFile(join(bigDir, "permission-decisions.json"), decisionsFile(DECISIONS));
  await writeFile(join(bigDir, "trace.jsonl"), traceFile(TRACE_EVENTS));
  await writeFile(join(bigDir, "patch.diff"), patchFile(PATCH_LINES));
  await writeFile(join(bigDir, "response.txt"), `${"report ".repeat(800_000)}THE END`);
  await writeFile(join(bigDir, "stderr.txt"), "e".repeat(3_000_000));
  page = await renderVerdictHtml(base, verdict);
  loaded = await loadTrialDetails(base, verdict);
});

afterAll(() => rm(base, { recursive: true, force: true }));

function expectInNot(page: string, text: string): void {
  expectIn(page, text, false);
}

/** `toContain` on a page of a megabyte would print all of it on failure. */
function expectIn(page: string, text: string | RegExp, present = true): void {
  const found = typeof text === "string" ? page.includes(text) : text.test(page);
  expect(found, `${present ? "missing" : "unexpected"}: ${String(text)}`).toBe(present);
}

describe("a trial with huge files", () => {
  it("keeps the page under 1.5 MB and the reader's excerpt to what the page shows", async () => {
    expect(Buffer.byteLength(page)).toBeLessThan(1_500_000);
    // Reading one trial at a time gives the same page as reading them all first.
    expect(renderHtmlReport(verdict, loaded) === page).toBe(true);

    const details = loaded.get(verdict.trials[1]!.artifactDir)!;
    const patchSize = (await stat(join(bigDir, "patch.diff"))).size;
    expect(details.clips?.patch?.totalBytes).toBe(patchSize);
    expect(details.patch.length).toBeLessThanOrEqual(512_000);
    expect(details.patch.endsWith("\n")).toBe(true);
    expect(details.response.length).toBeLessThanOrEqual(80 * 1024);
    expect(details.stderr.length).toBeLessThanOrEqual(80 * 1024);
    const decisions = details.decisions as DecisionsExcerpt;
    expect(decisions.head.length + decisions.tail.length).toBeLessThanOrEqual(400);
    const trace = details.trace as { head: TraceRow[]; tail: TraceRow[]; omitted: number };
    expect(trace.head.length + trace.tail.length).toBeLessThanOrEqual(400);
  });

  it("counts every decision, shows the first and the last with a note, and clips every field", () => {
    const denied = Math.floor(DECISIONS / 7);
    expectIn(page, `(${DECISIONS}, ${denied} denied)`);
    expectIn(
      page,
      `… ${DECISIONS - 400} more decision(s) in <a href="candidate/t/trial-001/permission-decisions.json">permission-decisions.json</a> …`,
    );
    expectIn(page, '<td class="num">1</td>');
    expectIn(page, '<td class="num">300</td>');
    expectInNot(page, '<td class="num">301</td>');
    expectIn(page, `<td class="num">${DECISIONS}</td>`);
    expectIn(page, "echo &quot;}]{[&quot; \\ done");
    expectIn(page, `${"i".repeat(600)}… (4400 more characters)`);
    expectInNot(page, "i".repeat(601));
  });

  it("shows the trace's first and last events with their line numbers and what lies between", () => {
    expectIn(page, "path: f1.txt");
    expectIn(page, "path: f300.txt");
    expectInNot(page, "path: f301.txt<");
    expectIn(page, `path: f${TRACE_EVENTS}.txt`);
    // The last event sits below 119 blank lines; the first of the tail is 99 lines up.
    expectIn(
      page,
      new RegExp(
        `<td class="num">${lastEventLine}</td><td><code>tool_call</code></td><td><code>Read</code></td><td class="ev"><div class="in">path: f${TRACE_EVENTS}\\.txt`,
      ),
    );
    expectIn(
      page,
      `<td class="num">${lastEventLine - 99}</td><td><code>tool_call</code></td><td><code>Read</code></td><td class="ev"><div class="in">path: f${TRACE_EVENTS - 99}.txt`,
    );
    expectIn(page, `… ${TRACE_EVENTS - 400} event(s) not shown`);
  });

  it("says how big the patch, the final report and stderr are and links them", () => {
    expectIn(
      page,
      /Patch clipped: \d+ more read diff line\(s\) not shown\. patch\.diff is 19\.\d\d MB; only its first 500\.0 KB were read for this page\./,
    );
    expectIn(
      page,
      'The whole file is <a href="candidate/t/trial-001/response.txt">response.txt</a>',
    );
    expectIn(page, /stderr\.txt is 2\.86 MB; only its first 80\.0 KB were read/);
    expectInNot(page, "THE END");
  });
});

describe("a trace whose first line is bigger than what is read of its beginning", () => {
  it("shows the events after it and counts it as not shown", async () => {
    const out = await mkdtemp(join(tmpdir(), "hl-report-long-line-"));
    try {
      const small = buildVerdict([...cell("baseline", "t", "p"), ...cell("candidate", "t", "p")]);
      const dir = join(out, small.trials[0]!.artifactDir);
      await mkdir(dir, { recursive: true });
      const huge = JSON.stringify({ type: "final", text: "z".repeat(2 * 1024 * 1024) });
      const rest = Array.from({ length: 20 }, (_, i) =>
        JSON.stringify({ type: "tool_call", tool: "Read", input: { path: `g${i + 2}.txt` } }),
      );
      await writeFile(join(dir, "trace.jsonl"), `${huge}\n${rest.join("\n")}\n`);
      const html = await renderVerdictHtml(out, small);
      expectIn(html, "… 1 event(s) not shown");
      expectIn(
        html,
        '<td class="num">2</td><td><code>tool_call</code></td><td><code>Read</code></td><td class="ev"><div class="in">path: g2.txt',
      );
      expectIn(html, '<td class="num">21</td>');
      expectInNot(html, "z".repeat(1000));
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});

describe("odd permission-decisions.json files", () => {
  it("counts only the objects of the top-level decisions list and keeps what a cut file holds", async () => {
    const out = await mkdtemp(join(tmpdir(), "hl-report-odd-decisions-"));
    try {
      const odd = buildVerdict([...cell("baseline", "t", "p"), ...cell("candidate", "t", "p")]);
      const [first, second] = odd.trials.map((t) => join(out, t.artifactDir));
      for (const dir of [first!, second!]) await mkdir(dir, { recursive: true });
      await writeFile(
        join(first!, "permission-decisions.json"),
        JSON.stringify({
          other: [{ seq: 100, decision: "deny" }],
          decisions: [
            1,
            "x",
            { seq: 2, tool: 5, decision: "deny", reason: 'a "quoted" {brace} [bracket] \\' },
            { seq: 3, nested: { decisions: [{ seq: 99 }] } },
          ],
        }),
      );
      await writeFile(
        join(second!, "permission-decisions.json"),
        '{"decisions": [{"seq": 1, "decision": "allow", "tool": "Read"}, {"seq": 2, "dec',
      );
      const details = await loadTrialDetails(out, odd);
      const a = details.get(odd.trials[0]!.artifactDir)!.decisions as DecisionsExcerpt;
      expect(a.total).toBe(2);
      expect(a.denied).toBe(1);
      expect(a.head.map((d) => [d.seq, d.tool, d.reason])).toEqual([
        [2, "", 'a "quoted" {brace} [bracket] \\'],
        [3, "", ""],
      ]);
      const b = details.get(odd.trials[1]!.artifactDir)!.decisions as DecisionsExcerpt;
      expect(b.head.map((d) => [d.seq, d.tool])).toEqual([[1, "Read"]]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
