// The offline example (examples/fix-the-bug) run end to end on the scripted host, once, and
// every observable promise of docs/artifacts.md checked on what it left on disk.
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  frozenTasksSchema,
  planTrials,
  runManifestSchema,
  type TrialMetrics,
  trialMetricsSchema,
  type VerdictDocument,
  validationDocumentSchema,
  verdictDocumentSchema,
} from "../../src/compare/index.js";
import {
  permissionDecisionsSchema,
  runtimeReceiptSchema,
  traceEventSchema,
} from "../../src/exec/index.js";
import { minimalEnv, runCommand } from "../../src/shared/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import {
  EXAMPLE_DIR,
  filesContaining,
  listFiles,
  loadForRun,
  RUN_FILES,
  readJson,
  runManifest,
  TRIAL_FILES,
} from "../support/experiment.js";

const FAKE_SECRET = "sk-test-e2e-9f3c1d7a5b2e4f60a8c9d1e2f3a4b5c6";
const MANIFEST = join(EXAMPLE_DIR, "experiment.json");
const FIXTURE = join(EXAMPLE_DIR, "fixture");

let base: string;
let out: string;
let trialsDir: string;
let fixtureBefore: string[];
let verdict: VerdictDocument;
let metrics: TrialMetrics[];
let previousSecret: string | undefined;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-e2e-example-"));
  out = join(base, "out");
  trialsDir = join(base, "trials");
  await mkdir(trialsDir);
  fixtureBefore = await listTree(FIXTURE);
  // A credential in the harness's own environment must never reach an artifact.
  previousSecret = process.env.FAKE_API_KEY;
  process.env.FAKE_API_KEY = FAKE_SECRET;
  try {
    ({ verdict } = await runManifest(MANIFEST, { outDir: out, tempParent: trialsDir }));
  } finally {
    if (previousSecret === undefined) delete process.env.FAKE_API_KEY;
    else process.env.FAKE_API_KEY = previousSecret;
  }
  metrics = await Promise.all(
    verdict.trials.map(
      async (t) =>
        trialMetricsSchema.parse(
          await readJson(out, `${t.artifactDir}/metrics.json`),
        ) as TrialMetrics,
    ),
  );
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("compare run on examples/fix-the-bug (scripted host)", () => {
  it("accepts the verify-before-finishing candidate over the baseline", () => {
    expect(verdict.status).toBe("accept");
    expect(verdict.fixturesUnchanged).toBe(true);
    const byVariant = (id: string) =>
      verdict.statistics?.aggregates.variants.find((v) => v.variant === id);
    expect(byVariant("verified")).toMatchObject({ completed: 5, passed: 5 });
    expect(byVariant("baseline")?.completed).toBe(5);
    expect(byVariant("baseline")?.passed).toBeLessThan(5);
  });

  it("writes every artifact docs/artifacts.md lists and nothing else at the top level", async () => {
    const top = (await readdir(out)).sort();
    expect(top).toEqual([...RUN_FILES, "baseline", "verified"].sort());
    const files = await listFiles(out);
    for (const variant of ["baseline", "verified"])
      for (let trial = 1; trial <= 5; trial += 1) {
        const dir = `${variant}/fix-the-bug/trial-${String(trial).padStart(3, "0")}`;
        const present = files
          .filter((f) => f.startsWith(`${dir}/`))
          .map((f) => f.slice(dir.length + 1));
        expect(present, dir).toEqual([...TRIAL_FILES]);
      }
    expect(files).toHaveLength(RUN_FILES.length + 10 * TRIAL_FILES.length);
  });

  it("writes artifacts that parse against their schemas", async () => {
    expect(verdictDocumentSchema.safeParse(await readJson(out, "verdict.json")).success).toBe(true);
    expect(runManifestSchema.safeParse(await readJson(out, "manifest.json")).success).toBe(true);
    expect(frozenTasksSchema.safeParse(await readJson(out, "frozen-task.json")).success).toBe(true);
    for (const trial of verdict.trials) {
      const dir = trial.artifactDir;
      const parse = async (name: string, schema: { safeParse(v: unknown): { success: boolean } }) =>
        expect(
          schema.safeParse(await readJson(out, `${dir}/${name}`)).success,
          `${dir}/${name}`,
        ).toBe(true);
      await parse("metrics.json", trialMetricsSchema);
      await parse("validation.json", validationDocumentSchema);
      await parse("runtime-receipt.json", runtimeReceiptSchema);
      await parse("permission-decisions.json", permissionDecisionsSchema);
      const trace = (await readFile(join(out, dir, "trace.jsonl"), "utf8"))
        .split("\n")
        .filter(Boolean);
      expect(trace.length, `${dir}/trace.jsonl`).toBeGreaterThan(0);
      for (const line of trace)
        expect(traceEventSchema.safeParse(JSON.parse(line)).success).toBe(true);
    }
    const md = await readFile(join(out, "verdict.md"), "utf8");
    expect(md).toMatch(/^# Verdict: ACCEPT/);
    const html = await readFile(join(out, "verdict.html"), "utf8");
    expect(html).toMatch(/^<!doctype html>/);
  });

  it("records real graded changes: the candidate edited src/index.js and its tests were reported passed", () => {
    for (const m of metrics.filter((x) => x.variant === "verified")) {
      expect(m.changedFiles).toEqual(["src/index.js"]);
      expect(m.graders.find((g) => g.grader === "unit-tests")?.passed).toBe(true);
    }
    // The baseline's attempts to edit the test were denied and recorded.
    const denied = metrics.filter((m) => m.variant === "baseline" && m.permissionDenials > 0);
    expect(denied.length).toBeGreaterThan(0);
  });

  it("stores patches that apply with git apply to a fresh copy of the fixture and reproduce the graded result", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "hl-e2e-apply-"));
    try {
      for (const m of metrics) {
        const dir = `${m.variant}/fix-the-bug/trial-${String(m.trial).padStart(3, "0")}`;
        const copy = join(scratch, `${m.variant}-${m.trial}`);
        await cp(FIXTURE, copy, { recursive: true });
        const env = minimalEnv({ GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" });
        const patch = join(out, dir, "patch.diff");
        if ((await readFile(patch)).length > 0) {
          const applied = await runCommand(["git", "apply", "--binary", patch], {
            cwd: copy,
            env,
            timeoutMs: 30_000,
          });
          expect(applied.exitCode, `${dir}: ${applied.stderr}`).toBe(0);
        }
        const before = new Map(fixtureBefore.map((line) => [line.split(" ")[0], line]));
        const changed = (await listTree(copy))
          .filter((line) => before.get(line.split(" ")[0]!) !== line)
          .map((line) => line.split(" ")[0]);
        expect(changed, dir).toEqual(m.changedFiles);
        const tests = await runCommand([process.execPath, "--test"], {
          cwd: copy,
          env,
          timeoutMs: 60_000,
        });
        const graded = m.graders.find((g) => g.grader === "unit-tests")?.passed;
        expect(tests.exitCode === 0, `${dir}: tests on the re-applied patch`).toBe(graded);
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it("gives each variant its own composition's preamble before the task prompt", async () => {
    const prompt = await readFile(join(EXAMPLE_DIR, "prompt.md"), "utf8");
    for (const trial of verdict.trials) {
      const text = await readFile(join(out, trial.artifactDir, "prompt.txt"), "utf8");
      expect(text.endsWith(prompt)).toBe(true);
      expect(text).toContain(`(composition ${trial.variant}, host scripted)`);
      expect(text.includes("- [verify-before-finishing]")).toBe(trial.variant === "verified");
    }
  });

  it("freezes the task: prompt hash, fixture file list and hashes, expected files, graders", async () => {
    const frozen = frozenTasksSchema.parse(await readJson(out, "frozen-task.json"));
    expect(frozen.tasks).toHaveLength(1);
    const task = frozen.tasks[0]!;
    const prompt = await readFile(join(EXAMPLE_DIR, "prompt.md"), "utf8");
    expect(task.prompt).toBe(prompt);
    expect(task.promptHash).toBe(`sha256:${createHash("sha256").update(prompt).digest("hex")}`);
    expect(task.fixtureFiles.filter((f) => f.kind === "file").map((f) => f.path)).toEqual([
      "package.json",
      "src/index.js",
      "test/duration.test.js",
    ]);
    for (const file of task.fixtureFiles.filter((f) => f.kind === "file")) {
      const bytes = await readFile(join(FIXTURE, file.path));
      expect(file.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
      expect(file.bytes).toBe(bytes.length);
    }
    expect(task.fixtureHash).toBe(verdict.evidence.fixtureHashes["fix-the-bug"]);
    expect(task.expectedFiles).toEqual(["src/index.js"]);
    expect(task.graders).toEqual([
      { id: "scope", kind: "scope", contractHash: null },
      {
        id: "unit-tests",
        kind: "tests",
        contractHash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      },
    ]);
  });

  it("leaves the source fixture byte-identical", async () => {
    expect(await listTree(FIXTURE)).toEqual(fixtureBefore);
  });

  it("removes every trial directory and never stores a trial path", async () => {
    expect(await readdir(trialsDir)).toEqual([]);
    expect(await filesContaining(out, trialsDir)).toEqual([]);
    expect(await filesContaining(out, "harnesslab-trial-")).toEqual([]);
    expect(await filesContaining(out, "/scratch")).toEqual([]);
  });

  it("never stores a credential from the harness's environment", async () => {
    expect(await filesContaining(out, FAKE_SECRET)).toEqual([]);
    expect(await filesContaining(out, FAKE_SECRET.slice(8, 30))).toEqual([]);
  });

  it("runs the trials in the order manifest.json records, which the seed determines", async () => {
    const run = runManifestSchema.parse(await readJson(out, "manifest.json"));
    const order = run.evidence.executionOrder;
    expect(order.map((o) => o.seq)).toEqual(order.map((_, i) => i + 1));
    // Every trial's metrics carry the position it ran at.
    for (const m of metrics) {
      expect(order[m.seq - 1]).toEqual({
        seq: m.seq,
        task: m.task,
        variant: m.variant,
        trial: m.trial,
      });
    }
    expect(verdict.trials.map((t) => t.seq)).toEqual(order.map((o) => o.seq));
    const { experiment } = await loadForRun(MANIFEST);
    expect(
      planTrials(experiment).map(({ seq, task, variant, trialIndex }) => ({
        seq,
        task,
        variant,
        trial: trialIndex,
      })),
    ).toEqual(order);
  });
});
