// Concurrency (issue 7): a run with several trials at once records exactly what a sequential run
// with the same seed records, except measurements of time; and a trial that breaks for
// infrastructure reasons does not stop or change the trials running beside it.
//
// Timing fields normalized before comparing (each is a clock reading or a measured duration, so
// it differs between any two runs, sequential or not); every other byte must be identical:
// - verdict.json: `startedAt`, `finishedAt` (wall clock of the run); `trials[].durationMs`,
//   `trials[].agentWallTimeMs`, `trials[].retriedAttempts[].durationMs` (measured per trial);
//   `statistics.aggregates.{variants,cells}[].duration.{meanMs,medianMs}` (means and medians of
//   those durations).
// - metrics.json: `durationMs`, `agentWallTimeMs`, `retriedAttempts[].durationMs`.
// - runtime-receipt.json: `wallTimeMs`, `durations.agentMs`, `durations.apiMs` (measured by the
//   executor); `permissionDenials[].atMs` (when each denied call came, in ms since the trial's
//   policy was created).
// - permission-decisions.json: `decisions[].atMs` (the same clock, for every decision).
// - validation.json: every `durationMs` inside `grades[].checks[].evidence` (how long a grading
//   command ran, e.g. the command grader's `evidence.durationMs`).
// - trace.jsonl: nothing; the scripted host's trace holds no time, so it is compared byte for byte
//   (as are prompt.txt, response.txt, stderr.txt and patch.diff).
// - metrics.json: `seal` too: each run has its own secret key and run id, and the seal's file
//   digests cover the files above whose timings differ. (The seal is checked by its own tests.)
// - manifest.json: `effective.concurrency`, which records the setting itself (1 or 4), and
//   `evidence.runId`, each run's own.
// - verdict.md and verdict.html are renderings of verdict.json (and, for the HTML, the trial
//   files): the test checks that each file is exactly that rendering, then compares the
//   renderings of the two normalized verdicts.
// Numbers are masked as 0 and timestamps as the epoch, so the documents keep their types.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadTrialDetails,
  type RunManifest,
  type RunProgress,
  type VerdictDocument,
} from "../../src/compare/index.js";
import { type Executor, type ExecutorRunInput, ScriptedExecutor } from "../../src/exec/index.js";
import { renderHtmlReport, renderMarkdownReport } from "../../src/report/index.js";
import {
  fixtureAgent,
  listFiles,
  makeExperiment,
  RUN_FILES,
  runManifest,
  SYNTHETIC_FIXTURE,
  syntheticManifest,
  type TempExperiment,
  TRIAL_FILES,
} from "../support/experiment.js";

const MASKED_MS = 0;
const MASKED_TIME = new Date(0).toISOString();

type Json = Record<string, unknown>;

/** Sets `record[key]` to `mask` when it holds a number (null stays null, so a missing measurement still shows). */
function maskNumber(record: unknown, key: string): void {
  if (record !== null && typeof record === "object" && typeof (record as Json)[key] === "number")
    (record as Json)[key] = MASKED_MS;
}

function maskAttempts(attempts: unknown): void {
  if (Array.isArray(attempts)) for (const a of attempts) maskNumber(a, "durationMs");
}

function normalizeMetrics(metrics: Json): Json {
  delete metrics.seal;
  maskNumber(metrics, "durationMs");
  maskNumber(metrics, "agentWallTimeMs");
  maskAttempts(metrics.retriedAttempts);
  return metrics;
}

function normalizeVerdict(verdict: VerdictDocument): VerdictDocument {
  const copy = structuredClone(verdict);
  copy.startedAt = MASKED_TIME;
  copy.finishedAt = MASKED_TIME;
  for (const trial of copy.trials) normalizeMetrics(trial as unknown as Json);
  const aggregates = copy.statistics?.aggregates;
  for (const aggregate of [...(aggregates?.variants ?? []), ...(aggregates?.cells ?? [])]) {
    maskNumber(aggregate.duration, "meanMs");
    maskNumber(aggregate.duration, "medianMs");
  }
  return copy;
}

/** Masks every `durationMs` inside a check's evidence: how long each grading command ran. */
function maskDurations(evidence: unknown): void {
  if (Array.isArray(evidence)) for (const item of evidence) maskDurations(item);
  else if (evidence !== null && typeof evidence === "object") {
    maskNumber(evidence, "durationMs");
    for (const value of Object.values(evidence)) maskDurations(value);
  }
}

function normalizeDecisions(decisions: unknown): void {
  if (Array.isArray(decisions)) for (const d of decisions) maskNumber(d, "atMs");
}

/** A trial file's content with its timing fields masked (see the list at the top). */
function normalizeTrialFile(name: string, bytes: Buffer): string {
  const text = bytes.toString("utf8");
  switch (name) {
    case "metrics.json":
      return JSON.stringify(normalizeMetrics(JSON.parse(text) as Json), null, 2);
    case "runtime-receipt.json": {
      const receipt = JSON.parse(text) as Json | null;
      if (receipt !== null) {
        maskNumber(receipt, "wallTimeMs");
        maskNumber(receipt.durations, "agentMs");
        maskNumber(receipt.durations, "apiMs");
        normalizeDecisions(receipt.permissionDenials);
      }
      return JSON.stringify(receipt, null, 2);
    }
    case "permission-decisions.json": {
      const document = JSON.parse(text) as Json;
      normalizeDecisions(document.decisions);
      return JSON.stringify(document, null, 2);
    }
    case "validation.json": {
      const document = JSON.parse(text) as { grades?: Array<{ checks?: Array<Json> }> };
      for (const grade of document.grades ?? [])
        for (const check of grade.checks ?? []) maskDurations(check.evidence);
      return JSON.stringify(document, null, 2);
    }
    default:
      // prompt, response, stderr, patch and trace hold no time: compared as they are.
      return bytes.toString("latin1");
  }
}

async function readVerdict(outDir: string): Promise<VerdictDocument> {
  return JSON.parse(await readFile(join(outDir, "verdict.json"), "utf8")) as VerdictDocument;
}

/** Every trial file of `outDir`, relative path → normalized content. */
async function normalizedTrialFiles(outDir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const path of await listFiles(outDir)) {
    if (!path.includes("/")) continue;
    const name = path.slice(path.lastIndexOf("/") + 1);
    files.set(path, normalizeTrialFile(name, await readFile(join(outDir, path))));
  }
  return files;
}

/**
 * The HTML report's inputs read back from the trial files, with decision times and the grading
 * commands' durations (shown with each check's evidence) masked.
 */
async function normalizedDetails(outDir: string, verdict: VerdictDocument) {
  const details = await loadTrialDetails(outDir, verdict);
  for (const detail of details.values()) {
    detail.decisions = structuredClone(detail.decisions);
    if (Array.isArray(detail.decisions)) normalizeDecisions(detail.decisions);
    else {
      normalizeDecisions(detail.decisions.head);
      normalizeDecisions(detail.decisions.tail);
    }
    detail.checks = structuredClone(detail.checks);
    for (const check of detail.checks) maskDurations(check.evidence);
  }
  return details;
}

interface Gauge {
  /** Runs in flight now, and the most seen at once. */
  now: number;
  max: number;
  /** Runs that have returned. */
  returned: number;
}

const newGauge = (): Gauge => ({ now: 0, max: 0, returned: 0 });

/**
 * Waits (polling) until `ready()`; a slow machine only makes the wait longer. The 20 s bound (inside
 * the runs' 30 s timeout) only keeps a broken runner from hanging the test, which then fails on
 * what the gauge saw.
 */
async function waitFor(ready: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * Counts the runs in flight. When `lanes` > 1 the first `lanes` runs wait until all of them have
 * started, so a concurrent run really overlaps its trials, and the first run returns only after
 * another one has, so trials finish in another order than they started.
 */
function overlappingExecutor(inner: Executor, lanes: number, gauge: Gauge): Executor {
  let started = 0;
  return {
    host: inner.host,
    async run(input) {
      const position = ++started;
      gauge.now += 1;
      gauge.max = Math.max(gauge.max, gauge.now);
      try {
        if (lanes > 1) await waitFor(() => started >= lanes);
        const receipt = await inner.run(input);
        if (lanes > 1 && position === 1) await waitFor(() => gauge.returned > 0);
        return receipt;
      } finally {
        gauge.now -= 1;
        gauge.returned += 1;
      }
    },
  };
}

const trialKey = (input: Pick<ExecutorRunInput, "variant" | "task" | "trialIndex">) =>
  `${input.variant}/${input.task}/${input.trialIndex}`;

/** The scripted executor, except that the runs named in `broken` throw as a broken SDK adapter would. */
function throwingFor(broken: ReadonlySet<string>): Executor {
  const inner = new ScriptedExecutor();
  return {
    host: "scripted",
    async run(input) {
      if (broken.has(trialKey(input)))
        throw new Error(`SDK transport closed unexpectedly (${trialKey(input)})`);
      return inner.run(input);
    },
  };
}

const NAME_FIXTURE: Record<string, string> = {
  "lib/name.txt": "anon\n",
  "check-name.mjs":
    'import { readFileSync } from "node:fs";\nconst name = readFileSync("lib/name.txt", "utf8");\nif (name !== "named\\n") { console.error("name is " + JSON.stringify(name)); process.exit(1); }\nconsole.log("ok");\n',
  "README.md": "# names\n",
};

describe("a concurrent run", () => {
  let exp: TempExperiment;
  const sequentialOut = () => exp.freshOut("sequential");
  const concurrentOut = () => exp.freshOut("concurrent");
  let sequential: VerdictDocument;
  let concurrent: VerdictDocument;
  const gauges = { sequential: newGauge(), concurrent: newGauge() };
  /** The seq of each trial in the order the concurrent run finished them. */
  const finishOrder: number[] = [];

  beforeAll(async () => {
    exp = await makeExperiment({
      fixture: { ...SYNTHETIC_FIXTURE, "check-name.mjs": NAME_FIXTURE["check-name.mjs"]! },
      agents: { "varied.mjs": await fixtureAgent("varied.mjs") },
    });
    // A second task with its own fixture.
    for (const [path, content] of Object.entries(NAME_FIXTURE)) {
      await mkdir(dirname(join(exp.dir, "fixture-b", path)), { recursive: true });
      await writeFile(join(exp.dir, "fixture-b", path), content);
    }
    await exp.writeManifest(
      syntheticManifest({
        tasks: [
          {
            id: "fix-value",
            fixture: "./fixture",
            prompt: "./prompt.md",
            expectedFiles: ["src/value.txt"],
            graders: [
              { kind: "scope", mode: "subset" },
              { kind: "command", id: "check", argv: ["node", "check.mjs"], timeoutMs: 30000 },
            ],
          },
          {
            id: "name-it",
            fixture: "./fixture-b",
            prompt: "./prompt.md",
            expectedFiles: ["lib/name.txt"],
            graders: [
              { kind: "scope", mode: "subset" },
              { kind: "command", id: "check", argv: ["node", "check-name.mjs"], timeoutMs: 30000 },
            ],
          },
        ],
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "steady", composition: "careful", agent: "./agents/varied.mjs" },
          { id: "flaky", composition: "extra", agent: "./agents/varied.mjs" },
        ],
        runtime: {
          host: "scripted",
          timeoutMs: 30000,
          validationCommands: [
            ["node", "check.mjs"],
            ["node", "check-name.mjs"],
          ],
        },
        trials: { count: 2, seed: 20240607, order: "randomized" },
        concurrency: 1,
      }),
    );
    const broken = new Set(["steady/name-it/2"]);
    ({ verdict: sequential } = await runManifest(exp.manifestPath, {
      outDir: sequentialOut(),
      tempParent: exp.trialsDir,
      concurrency: 1,
      executorFor: () => overlappingExecutor(throwingFor(broken), 1, gauges.sequential),
    }));
    ({ verdict: concurrent } = await runManifest(exp.manifestPath, {
      outDir: concurrentOut(),
      tempParent: exp.trialsDir,
      concurrency: 4,
      executorFor: () => overlappingExecutor(throwingFor(broken), 4, gauges.concurrent),
      onProgress: (p: RunProgress) => {
        if (p.last) finishOrder.push(p.last.seq);
      },
    }));
  });
  afterAll(() => exp?.cleanup());

  it("really ran one trial at a time, then four at once, over passes, failures and infrastructure errors", async () => {
    expect(gauges.sequential.max).toBe(1);
    expect(gauges.concurrent.max).toBe(4);
    // Trials finished out of order, so the records' order is the runner's doing, not luck.
    expect([...finishOrder].sort((x, y) => x - y)).toEqual(sequential.trials.map((t) => t.seq));
    expect(finishOrder).not.toEqual(sequential.trials.map((t) => t.seq));
    const outcomes = Object.fromEntries(
      sequential.trials.map((t) => {
        const why = t.infraReason ?? (t.receiptStatus === "agent_error" ? t.receiptStatus : null);
        return [`${t.variant}/${t.task}/${t.trial}`, why ? `${t.outcome} (${why})` : t.outcome];
      }),
    );
    expect(outcomes).toEqual({
      "baseline/fix-value/1": "failed",
      "baseline/fix-value/2": "failed",
      "baseline/name-it/1": "failed",
      "baseline/name-it/2": "failed",
      "steady/fix-value/1": "passed",
      "steady/fix-value/2": "failed",
      "steady/name-it/1": "passed",
      "steady/name-it/2": "infrastructure_error (executor_threw)",
      // It deleted its own trial: what it left cannot be captured, and that is its failure.
      "flaky/fix-value/1": "failed",
      "flaky/fix-value/2": "passed",
      "flaky/name-it/1": "failed",
      // It throws after writing: the experiment's scripted agent is broken, not the setup.
      "flaky/name-it/2": "infrastructure_error (scripted_agent_failed)",
    });
    expect(await readdir(exp.trialsDir)).toEqual([]);
  });

  it("writes the same verdict.json as the sequential run, except timings", async () => {
    expect(await readVerdict(sequentialOut())).toEqual(sequential);
    expect(await readVerdict(concurrentOut())).toEqual(concurrent);
    expect(normalizeVerdict(concurrent)).toEqual(normalizeVerdict(sequential));
  });

  it("writes verdict.md and verdict.html that differ only where the verdict's timings do", async () => {
    for (const [out, verdict] of [
      [sequentialOut(), sequential],
      [concurrentOut(), concurrent],
    ] as const) {
      expect(await readFile(join(out, "verdict.md"), "utf8")).toBe(renderMarkdownReport(verdict));
      expect(await readFile(join(out, "verdict.html"), "utf8")).toBe(
        renderHtmlReport(verdict, await loadTrialDetails(out, verdict)),
      );
    }
    expect(renderMarkdownReport(normalizeVerdict(concurrent))).toBe(
      renderMarkdownReport(normalizeVerdict(sequential)),
    );
    expect(
      renderHtmlReport(
        normalizeVerdict(concurrent),
        await normalizedDetails(concurrentOut(), concurrent),
      ),
    ).toBe(
      renderHtmlReport(
        normalizeVerdict(sequential),
        await normalizedDetails(sequentialOut(), sequential),
      ),
    );
  });

  it("writes every trial file byte for byte as the sequential run, except timing fields", async () => {
    const topLevel = async (out: string) => (await listFiles(out)).filter((p) => !p.includes("/"));
    expect(await topLevel(concurrentOut())).toEqual(await topLevel(sequentialOut()));
    expect(await topLevel(sequentialOut())).toEqual(expect.arrayContaining([...RUN_FILES]));
    const a = await normalizedTrialFiles(sequentialOut());
    const b = await normalizedTrialFiles(concurrentOut());
    expect([...b.keys()]).toEqual([...a.keys()]);
    // Every trial folder is complete, whatever the trial's outcome.
    const folders = sequential.trials.map((t) => t.artifactDir).sort();
    expect(folders).toHaveLength(12);
    for (const folder of folders)
      expect([...a.keys()].filter((p) => p.startsWith(`${folder}/`))).toEqual(
        TRIAL_FILES.map((f) => `${folder}/${f}`),
      );
    for (const [path, content] of a) expect(b.get(path), path).toBe(content);
  });

  it("records the same execution order and run manifest, apart from the concurrency setting", async () => {
    const read = async (out: string) =>
      JSON.parse(await readFile(join(out, "manifest.json"), "utf8")) as RunManifest;
    const a = await read(sequentialOut());
    const b = await read(concurrentOut());
    expect(a.effective.concurrency).toBe(1);
    expect(b.effective.concurrency).toBe(4);
    expect(b.evidence.executionOrder).toEqual(a.evidence.executionOrder);
    expect(b.evidence.executionOrder.map((j) => j.seq)).toEqual(
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    expect(b.evidence.runId).not.toBe(a.evidence.runId);
    const withoutRunId = (m: RunManifest) => ({
      ...m,
      evidence: { ...m.evidence, runId: undefined },
    });
    expect(withoutRunId({ ...b, effective: { ...b.effective, concurrency: 1 } })).toEqual(
      withoutRunId(a),
    );
    expect(await readFile(join(concurrentOut(), "frozen-task.json"), "utf8")).toBe(
      await readFile(join(sequentialOut(), "frozen-task.json"), "utf8"),
    );
  });
});

/** A fixer that takes a moment, so the lanes stay busy while the broken trials break. */
const SLOW_FIXER_AGENT = `export default async function slowFixer({ tools }) {
  await new Promise((resolve) => setTimeout(resolve, 100));
  const write = await tools.write("src/value.txt", "fixed\\n");
  if (!write.ok) throw new Error("write refused: " + (write.reason ?? write.error));
  return "fixed src/value.txt after a moment";
}
`;

describe("an infrastructure failure in a concurrent run", () => {
  let exp: TempExperiment;
  const THROWS = "fixer/fix-value/1";
  const HANGS = "baseline/fix-value/2";
  const MALFORMED = "slow/fix-value/3";
  /** For each broken run: how many healthy runs were in flight when it broke. */
  const besides = new Map<string, number>();
  /** Broken runs that gave up waiting for company (the safety net below). */
  const lonely: string[] = [];
  let hungRunToldToStop = false;
  let faulty: VerdictDocument;
  let clean: VerdictDocument;
  const progress: RunProgress[] = [];

  /** Healthy runs (any but the three broken ones) inside `run` now. */
  let healthyInFlight = 0;
  /** Broken runs waiting until healthy runs are in flight beside them. */
  let brokenWaiting = 0;
  // Safety nets only, measured from each run's start: an event normally ends the wait within
  // milliseconds, but starting the runs beside a broken one (their copies, their sandboxes) takes
  // seconds on a loaded machine. Both stay well inside the runs' 10 s timeout, so no run is
  // abandoned for waiting.
  const COMPANY_WAIT_MS = 7000;
  const HOLD_LIMIT_MS = 8000;

  /** Waits (polling) until `ready()` or `deadline` (a performance.now() time); says which came. */
  async function until(ready: () => boolean, deadline: number): Promise<boolean> {
    while (!ready()) {
      if (performance.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return true;
  }

  /**
   * The scripted executor with three broken runs. Each first waits until two healthy runs are in
   * flight beside it, then breaks: one throws, one never returns (and is abandoned after its
   * timeout plus a short grace), one returns a receipt the harness cannot use (a trace that is not
   * a list), which makes `runTrial` itself throw. A healthy run that has its receipt while a broken
   * run is waiting stays in flight until that run has broken (its receipt is unchanged; only its
   * duration grows), so the company a broken run finds is still running when it breaks.
   */
  function faultyExecutor(): Executor {
    const inner = new ScriptedExecutor();
    return {
      host: "scripted",
      async run(input) {
        const started = performance.now();
        const key = trialKey(input);
        if (key !== THROWS && key !== HANGS && key !== MALFORMED) {
          healthyInFlight += 1;
          try {
            const receipt = await inner.run(input);
            await until(() => brokenWaiting === 0, started + HOLD_LIMIT_MS);
            return receipt;
          } finally {
            healthyInFlight -= 1;
          }
        }
        brokenWaiting += 1;
        try {
          if (!(await until(() => healthyInFlight >= 2, started + COMPANY_WAIT_MS)))
            lonely.push(
              `${key}: ${healthyInFlight} healthy runs in flight after ${COMPANY_WAIT_MS} ms`,
            );
          besides.set(key, healthyInFlight);
        } finally {
          brokenWaiting -= 1;
        }
        if (key === THROWS) throw new Error(`SDK transport closed unexpectedly (${key})`);
        if (key === HANGS) {
          input.signal?.addEventListener("abort", () => {
            hungRunToldToStop = true;
          });
          return await new Promise<never>(() => {});
        }
        const receipt = await inner.run(input);
        return { ...receipt, trace: "not a list" } as unknown as typeof receipt;
      },
    };
  }

  beforeAll(async () => {
    exp = await makeExperiment({ agents: { "slow.mjs": SLOW_FIXER_AGENT } });
    await exp.writeManifest(
      syntheticManifest({
        tasks: [
          {
            id: "fix-value",
            fixture: "./fixture",
            prompt: "./prompt.md",
            expectedFiles: ["src/value.txt"],
            graders: [
              { kind: "scope", mode: "subset" },
              { kind: "command", id: "check", argv: ["node", "check.mjs"], timeoutMs: 30000 },
            ],
          },
          {
            // Its grader program cannot be started: every trial of it is an infrastructure error.
            id: "ungradable",
            fixture: "./fixture",
            prompt: "./prompt.md",
            expectedFiles: ["src/value.txt"],
            graders: [
              { kind: "scope", mode: "subset" },
              { kind: "command", id: "missing", argv: ["harnesslab-no-such-grader", "--check"] },
            ],
          },
        ],
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "fixer", composition: "careful", agent: "./agents/fixer.mjs" },
          { id: "slow", composition: "extra", agent: "./agents/slow.mjs" },
        ],
        runtime: {
          host: "scripted",
          timeoutMs: 10_000,
          validationCommands: [["node", "check.mjs"]],
        },
        // Sequential order: the fix-value trials (with the broken runs) come first, so other
        // trials are always waiting to run beside them.
        trials: { count: 3, seed: 5, order: "sequential" },
        concurrency: 4,
      }),
    );
    ({ verdict: faulty } = await runManifest(exp.manifestPath, {
      outDir: exp.freshOut("faulty"),
      tempParent: exp.trialsDir,
      executorFor: faultyExecutor,
      executorGraceMs: 50,
      onProgress: (p) => progress.push(p),
    }));
    ({ verdict: clean } = await runManifest(exp.manifestPath, {
      outDir: exp.freshOut("clean"),
      tempParent: exp.trialsDir,
    }));
  });
  afterAll(() => exp?.cleanup());

  const keyOf = (t: { variant: string; task: string; trial: number }) =>
    `${t.variant}/${t.task}/${t.trial}`;

  it("breaks the three runs while other trials run beside them, and records each as that trial's infrastructure error", () => {
    expect(Object.fromEntries(besides)).toEqual({
      [THROWS]: expect.any(Number),
      [HANGS]: expect.any(Number),
      [MALFORMED]: expect.any(Number),
    });
    expect(lonely).toEqual([]);
    for (const [key, others] of besides) expect(others, key).toBeGreaterThanOrEqual(2);
    const reasons = Object.fromEntries(
      faulty.trials
        .filter((t) => [THROWS, HANGS, MALFORMED].includes(keyOf(t)))
        .map((t) => [keyOf(t), t.infraReason]),
    );
    expect(reasons).toEqual({
      [THROWS]: "executor_threw",
      [HANGS]: "executor_unresponsive",
      [MALFORMED]: "harness_error",
    });
    expect(hungRunToldToStop).toBe(true);
  });

  it("does not stop the run: every trial is recorded and the verdict is written", async () => {
    expect(faulty.trials).toHaveLength(18);
    expect(progress.at(-1)).toMatchObject({ done: 18, total: 18 });
    expect(progress.map((p) => p.done)).toEqual(Array.from({ length: 19 }, (_, i) => i));
    const written = JSON.parse(
      await readFile(join(exp.freshOut("faulty"), "verdict.json"), "utf8"),
    ) as VerdictDocument;
    expect(written).toEqual(faulty);
    expect(faulty.trials.filter((t) => t.task === "ungradable").map((t) => t.infraReason)).toEqual(
      Array(9).fill("grader_failed"),
    );
  });

  it("gives the trials beside them their normal outcomes and byte-identical evidence (except timings)", async () => {
    const broken = new Set([THROWS, HANGS, MALFORMED]);
    const normal = faulty.trials.filter((t) => !broken.has(keyOf(t)));
    expect(normal).toHaveLength(15);
    expect(
      Object.fromEntries(
        normal.filter((t) => t.task === "fix-value").map((t) => [keyOf(t), t.outcome]),
      ),
    ).toEqual({
      "baseline/fix-value/1": "failed",
      "baseline/fix-value/3": "failed",
      "fixer/fix-value/2": "passed",
      "fixer/fix-value/3": "passed",
      "slow/fix-value/1": "passed",
      "slow/fix-value/2": "passed",
    });
    const faultyFiles = await normalizedTrialFiles(exp.freshOut("faulty"));
    const cleanFiles = await normalizedTrialFiles(exp.freshOut("clean"));
    const cleanTrials = new Map(clean.trials.map((t) => [keyOf(t), t]));
    for (const trial of normal) {
      expect(normalizeMetrics({ ...trial }), keyOf(trial)).toEqual(
        normalizeMetrics({ ...cleanTrials.get(keyOf(trial))! }),
      );
      for (const file of TRIAL_FILES) {
        const path = `${trial.artifactDir}/${file}`;
        expect(faultyFiles.get(path), path).toBe(cleanFiles.get(path));
      }
    }
  });

  it("leaves no temporary directory and no workspace note behind, even for the trial whose harness step threw", async () => {
    expect(await readdir(exp.trialsDir)).toEqual([]);
    const malformed = faulty.trials.find((t) => keyOf(t) === MALFORMED)!;
    const folder = join(exp.freshOut("faulty"), malformed.artifactDir);
    expect(await readFile(join(folder, "stderr.txt"), "utf8")).toMatch(/^harness error: /);
    for (const out of [exp.freshOut("faulty"), exp.freshOut("clean")])
      expect((await listFiles(out)).filter((p) => p.includes(".workspace-in-use"))).toEqual([]);
  });
});
