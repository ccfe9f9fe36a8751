// `harness compare run | validate` and the `harness-compare` alias: exit codes, what
// goes to stdout and stderr, and that bad input writes nothing.
import { access, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runManifestSchema, verdictDocumentSchema } from "../../src/compare/index.js";
import { runCommand } from "../../src/shared/index.js";
import { runHarness } from "../support/cli.js";
import {
  EXAMPLE_DIR,
  listFiles,
  makeExperiment,
  readJson,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

const absent = (path: string) =>
  access(path).then(
    () => false,
    () => true,
  );

let exp: TempExperiment;
beforeAll(async () => {
  exp = await makeExperiment();
  await exp.writeAgent(
    "no-default.mjs",
    "export const agent = async () => 'not the default export';\n",
  );
});
afterAll(() => exp.cleanup());

describe("harness compare run", () => {
  it("runs the example offline, lowers the trial count with --trials and prints the four-line summary", async () => {
    const out = exp.freshOut("example-out");
    const run = await runHarness([
      "compare",
      "run",
      join(EXAMPLE_DIR, "experiment.json"),
      "--out",
      out,
      "--trials",
      "2",
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^verdict: need_more_work — /);
    expect(lines[1]).toMatch(
      /^variants: baseline \(baseline\) \d\/2 passed, score [\d.]+; verified 2\/2 passed, score 100\.0$/,
    );
    expect(lines[2]).toMatch(/^difference: verified − baseline: /);
    expect(lines[3]).toBe(
      `evidence: ${out}/verdict.md (also verdict.json, verdict.html, per-trial folders)`,
    );
    // Fewer trials than the verdict policy needs: warned, and progress lines on stderr.
    expect(run.stderr).toContain("warning:");
    expect(run.stderr).toMatch(/\[4\/4\] · passed \d · failed \d · infra errors 0 · elapsed/);
    const verdict = verdictDocumentSchema.parse(await readJson(out, "verdict.json"));
    expect(verdict.trialsPerCell).toBe(2);
    expect(verdict.trials).toHaveLength(4);
    expect((await readdir(join(out, "verified", "fix-the-bug"))).sort()).toEqual([
      "trial-001",
      "trial-002",
    ]);
  });

  it("prints exactly one JSON document on stdout with --json and exits 0 on accept", async () => {
    const out = exp.freshOut("json-out");
    const run = await runHarness([
      "compare",
      "run",
      exp.manifestPath,
      "--out",
      out,
      "--json",
      "--concurrency",
      "1",
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const verdict = verdictDocumentSchema.parse(JSON.parse(run.stdout));
    expect(verdict.status).toBe("accept");
    // Nothing but the document: it is byte for byte the verdict.json of the run.
    expect(run.stdout).toBe(await readFile(join(out, "verdict.json"), "utf8"));
    expect(run.stderr).toContain("[4/4]");
    expect(
      runManifestSchema.parse(await readJson(out, "manifest.json")).effective.concurrency,
    ).toBe(1);
  });

  it("exits 1 on reject", async () => {
    const manifest = await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "fixer", composition: "careful", agent: "./agents/fixer.mjs" },
          { id: "idle", composition: "plain", agent: "nop" },
        ],
        baseline: "fixer",
      }),
      "reject.json",
    );
    const run = await runHarness(["compare", "run", manifest, "--out", exp.freshOut("reject-out")]);
    expect(run.stdout).toMatch(/^verdict: reject — /);
    expect(run.exitCode).toBe(1);
  });

  it("exits 1 on an infrastructure error (a scripted agent that throws: the experiment's bug)", async () => {
    await exp.writeAgent(
      "crashes.mjs",
      'export default async () => { throw new Error("boom"); };\n',
    );
    const manifest = await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "./agents/crashes.mjs" },
          { id: "fixer", composition: "careful", agent: "./agents/crashes.mjs" },
        ],
      }),
      "infra.json",
    );
    const out = exp.freshOut("infra-out");
    const run = await runHarness(["compare", "run", manifest, "--out", out, "--json"]);
    expect(run.exitCode).toBe(1);
    const verdict = verdictDocumentSchema.parse(JSON.parse(run.stdout));
    expect(verdict.status).toBe("infrastructure_error");
    expect(new Set(verdict.trials.map((t) => t.infraReason))).toEqual(
      new Set(["scripted_agent_failed"]),
    );
  });

  it("exits 2 before any trial for an agent module without a default export", async () => {
    const manifest = await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "broken", composition: "careful", agent: "./agents/no-default.mjs" },
        ],
      }),
      "no-default.json",
    );
    const out = exp.freshOut("no-default-out");
    const run = await runHarness(["compare", "run", manifest, "--out", out]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(
      "variants[1].agent: agent module no-default.mjs has no default-exported function",
    );
  });

  it("exits 2 naming the field for a bad manifest, and writes nothing", async () => {
    const bad = await exp.writeManifest(
      { ...syntheticManifest(), trials: { count: 0, seed: 1 }, colour: "blue" },
      "bad.json",
    );
    const out = exp.freshOut("bad-out");
    const run = await runHarness(["compare", "run", bad, "--out", out]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("trials.count");
    expect(run.stderr).toContain("colour");
    expect(run.stdout).toBe("");
    expect(await absent(out)).toBe(true);
  });

  it("exits 2 for a non-empty --out and leaves it as it was", async () => {
    const out = exp.freshOut("busy-out");
    await mkdir(out);
    await writeFile(join(out, "notes.txt"), "mine\n");
    const run = await runHarness(["compare", "run", exp.manifestPath, "--out", out]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("--out");
    expect(run.stderr).toContain("not empty");
    expect(await listFiles(out)).toEqual(["notes.txt"]);
  });

  it("says so when --resume finds no earlier run, and runs from the start", async () => {
    const out = exp.freshOut("resume-nothing");
    const run = await runHarness(["compare", "run", exp.manifestPath, "--out", out, "--resume"]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(`--resume: no earlier run in ${out}; starting a new run there`);
    const verdict = verdictDocumentSchema.parse(await readJson(out, "verdict.json"));
    expect(verdict.resumedTrials).toBe(0);
    // Resumed at once: every trial comes from the earlier run, and the verdict says how many.
    const again = await runHarness(["compare", "run", exp.manifestPath, "--out", out, "--resume"]);
    expect(again.stderr).not.toContain("no earlier run");
    const resumed = verdictDocumentSchema.parse(await readJson(out, "verdict.json"));
    expect(resumed.resumedTrials).toBe(verdict.trials.length);
  });

  it("exits 2 for --out inside the fixture", async () => {
    const out = join(exp.fixtureDir, "results");
    const run = await runHarness(["compare", "run", exp.manifestPath, "--out", out]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("inside the fixture");
    expect(await absent(out)).toBe(true);
  });

  it("exits 2 when --trials would raise the count or is not a positive number", async () => {
    const out = exp.freshOut("trials-out");
    const raised = await runHarness([
      "compare",
      "run",
      exp.manifestPath,
      "--out",
      out,
      "--trials",
      "3",
    ]);
    expect(raised.exitCode).toBe(2);
    expect(raised.stderr).toContain("--trials");
    for (const value of ["0", "two", "-1"]) {
      const run = await runHarness([
        "compare",
        "run",
        exp.manifestPath,
        "--out",
        out,
        "--trials",
        value,
      ]);
      expect(run.exitCode, value).toBe(2);
      expect(run.stderr).toContain("--trials");
    }
    expect(await absent(out)).toBe(true);
  });

  it("exits 2 without --out or for a manifest that does not exist", async () => {
    const missingOut = await runHarness(["compare", "run", exp.manifestPath]);
    expect(missingOut.exitCode).toBe(2);
    expect(missingOut.stderr).toContain("--out");
    const out = exp.freshOut("nowhere-out");
    const missing = await runHarness(["compare", "run", join(exp.dir, "nope.json"), "--out", out]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("nope.json");
    expect(await absent(out)).toBe(true);
  });
});

describe("harness compare validate", () => {
  it("exits 0 and summarizes a valid manifest", async () => {
    const run = await runHarness(["compare", "validate", exp.manifestPath]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("valid harness-compare.v2 manifest");
    expect(run.stdout).toContain("2 per task × variant = 4 runs");
  });

  it("exits 1 listing every problem with its field path", async () => {
    const manifest = syntheticManifest({ concurrency: 99 });
    (manifest.runtime as Record<string, unknown>).timeoutMs = 5;
    (manifest.tasks as Array<Record<string, unknown>>)[0]!.fixture = "../elsewhere";
    const bad = await exp.writeManifest(manifest, "invalid.json");
    const run = await runHarness(["compare", "validate", bad]);
    expect(run.exitCode).toBe(1);
    for (const field of ["runtime.timeoutMs", "tasks[0].fixture", "concurrency"])
      expect(run.stderr).toContain(`  ${field}: `);
    const json = await runHarness(["compare", "validate", bad, "--json"]);
    expect(json.exitCode).toBe(1);
    const doc = JSON.parse(json.stdout) as { ok: boolean; problems: Array<{ path: string }> };
    expect(doc.ok).toBe(false);
    expect(doc.problems.map((p) => p.path).sort()).toEqual(
      ["concurrency", "runtime.timeoutMs", "tasks[0].fixture"].sort(),
    );
  });

  it("exits 2 on usage errors", async () => {
    expect((await runHarness(["compare", "validate"])).exitCode).toBe(2);
    expect(
      (await runHarness(["compare", "validate", exp.manifestPath, "--trials", "x"])).exitCode,
    ).toBe(2);
  });
});

describe("harness-compare (alias of harness compare)", () => {
  it("validates a manifest through the compare-bin entry point", async () => {
    const run = await runCommand(
      [
        process.execPath,
        "--import",
        "tsx",
        join(REPO, "src/cli/compare-bin.ts"),
        "validate",
        exp.manifestPath,
      ],
      { cwd: REPO, env: { PATH: process.env.PATH ?? "" }, timeoutMs: 60_000 },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toContain("valid harness-compare.v2 manifest");
  });
});

describe("compare run --stop-early", () => {
  it("stops once the status is settled and says so in the summary", async () => {
    const exp = await makeExperiment({
      manifest: syntheticManifest({
        trials: { count: 12, seed: 1, order: "sequential" },
        concurrency: 1,
        verdict: { policy: "paired-v1", alpha: 0.05, minTrials: 2, maxCostRatio: 1.25 },
      }),
    });
    try {
      const run = await runHarness([
        "compare",
        "run",
        exp.manifestPath,
        "--out",
        exp.outDir,
        "--stop-early",
      ]);
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toMatch(/^verdict: accept — stopped early after \d+ of 24 trials/);
    } finally {
      await exp.cleanup();
    }
  });
});
