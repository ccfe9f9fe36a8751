// `harness compare plan`, `compare run --calibrate` and the budget options, through the CLI.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verdictDocumentSchema } from "../../src/compare/index.js";
import { runHarness } from "../support/cli.js";
import { makeExperiment, syntheticManifest, type TempExperiment } from "../support/experiment.js";

const example = fileURLToPath(
  new URL("../../examples/fix-the-bug/experiment.json", import.meta.url),
);

describe("harness compare plan", () => {
  it("says how many trials an effect needs and what the planned count can detect", async () => {
    const run = await runHarness([
      "compare",
      "plan",
      example,
      "--effect",
      "0.4",
      "--pass-rate",
      "0.3",
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(
      `plan for ${example}: 1 task(s), 1 candidate(s) against the baseline, paired-v1 at alpha 0.05, fixed design, minTrials 5`,
    );
    expect(lines[1]).toMatch(
      /^to accept a candidate \+0\.40 better than a baseline passing 30% of trials on every task with 80% power: \d+ trials per variant and task, \d+ trials in all$/,
    );
    expect(lines[2]).toBe(
      "expected cost: unknown (give earlier runs with --from <out-dir> to estimate it)",
    );
    expect(lines[3]).toMatch(
      /^with the planned 5 trials per variant and task: \d+% chance to accept \+0\.40; /,
    );
  });

  it("prints the same plan twice (the simulation is seeded by the manifest)", async () => {
    const first = await runHarness(["compare", "plan", example, "--json"]);
    const second = await runHarness(["compare", "plan", example, "--json"]);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toBe(second.stdout);
    expect(JSON.parse(first.stdout)).toMatchObject({
      tasks: 1,
      candidates: 1,
      request: { effect: 0.2, power: 0.8, passRate: 0.5 },
      planned: { trialsPerCell: 5, totalTrials: 10 },
    });
  });

  it.each([
    [
      ["--effect", "0"],
      '--effect must be a pass-rate difference greater than 0 and at most 1, got "0"',
    ],
    [["--power", "1"], '--power must be a number between 0 and 1, both excluded, got "1"'],
    [["--pass-rate", "-0.1"], "--pass-rate must be a number from 0 up to, but not including, 1"],
    [
      ["--effect", "0.8"],
      "--effect 0.8 with --pass-rate 0.5: the candidate's pass rate would be above 1",
    ],
  ])("exits 2 naming the option for %j", async (args, message) => {
    const run = await runHarness(["compare", "plan", example, ...args]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it("exits 2 when --from names a directory without a finished run", async () => {
    const run = await runHarness(["compare", "plan", example, "--from", "/nonexistent-run"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(
      "/nonexistent-run: has no readable verdict.json: --from takes the --out directory of a finished run",
    );
  });
});

describe("harness compare run --calibrate and budgets", () => {
  let exp: TempExperiment;

  beforeAll(async () => {
    exp = await makeExperiment({ manifest: syntheticManifest({ concurrency: 1 }) });
  });

  afterAll(() => exp.cleanup());

  it("runs the baseline against a copy of itself and reports how often the policy claims a difference", async () => {
    const out = exp.freshOut("aa");
    const run = await runHarness(["compare", "run", exp.manifestPath, "--out", out, "--calibrate"]);
    expect(run.exitCode, run.stderr).toBe(0);
    const verdict = verdictDocumentSchema.parse(
      JSON.parse(await readFile(join(out, "verdict.json"), "utf8")),
    );
    expect(verdict.variants.map((v) => v.id)).toEqual(["baseline", "baseline-copy"]);
    expect(verdict.trials.every((t) => t.artifactDir.startsWith("baseline"))).toBe(true);
    expect(verdict.calibration).toMatchObject({
      variant: "baseline",
      copy: "baseline-copy",
      resplits: 200,
      nominal: 0.5,
    });
    expect(run.stdout).toContain("note: A/A calibration: baseline compared with a copy of itself");
    const md = await readFile(join(out, "verdict.md"), "utf8");
    expect(md).toContain("> A/A calibration: baseline compared with a copy of itself");

    // Regrade knows the run was an A/A run and re-grades the same two arms.
    const regrade = await runHarness(["compare", "regrade", out]);
    expect(regrade.exitCode, regrade.stderr).toBe(0);
    const stem = /new verdict \((verdict\.regrade-\d{3})\.json\)/.exec(regrade.stdout)?.[1];
    const regraded = verdictDocumentSchema.parse(
      JSON.parse(await readFile(join(out, `${stem}.json`), "utf8")),
    );
    expect(regraded.calibration).toEqual(verdict.calibration);
  });

  it.each([
    [
      ["--max-cost-usd", "abc"],
      '--max-cost-usd must be a number of US dollars greater than 0, got "abc"',
    ],
    [
      ["--max-cost-usd", "0"],
      '--max-cost-usd must be a number of US dollars greater than 0, got "0"',
    ],
    [["--max-tokens", "1.5"], "--max-tokens must be a whole number from 1 to"],
  ])("exits 2 for %j, naming the option and what it takes", async (args, message) => {
    const run = await runHarness([
      "compare",
      "run",
      exp.manifestPath,
      "--out",
      exp.freshOut("never"),
      ...args,
    ]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(message);
  });

  it("warns when no trial reported what a budget counts", async () => {
    const run = await runHarness([
      "compare",
      "run",
      exp.manifestPath,
      "--out",
      exp.freshOut("budget"),
      "--max-cost-usd",
      "5",
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      "warning: no trial reported a USD cost, so --max-cost-usd 5 could not limit this run",
    );
  });
});
