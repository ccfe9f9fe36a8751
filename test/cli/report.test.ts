// `harness report <out-dir> [--format md|html|json] [--verdict file]`: re-renders a finished run
// from its artifacts, exactly as the run rendered it.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { regradeRun, verdictDocumentSchema } from "../../src/compare/index.js";
import { runHarness } from "../support/cli.js";
import { makeExperiment, runManifest, type TempExperiment } from "../support/experiment.js";

let exp: TempExperiment;

beforeAll(async () => {
  exp = await makeExperiment();
  await runManifest(exp.manifestPath, { outDir: exp.outDir, tempParent: exp.trialsDir });
});
afterAll(() => exp.cleanup());

const stored = (name: string) => readFile(join(exp.outDir, name), "utf8");

describe("harness report", () => {
  it("prints verdict.md by default, byte for byte", async () => {
    const run = await runHarness(["report", exp.outDir]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(await stored("verdict.md"));
  });

  it("prints verdict.html with --format html, byte for byte", async () => {
    const run = await runHarness(["report", exp.outDir, "--format", "html"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(await stored("verdict.html"));
  });

  it("prints the verdict document with --format json", async () => {
    const run = await runHarness(["report", exp.outDir, "--format", "json"]);
    expect(run.exitCode).toBe(0);
    expect(verdictDocumentSchema.parse(JSON.parse(run.stdout))).toEqual(
      verdictDocumentSchema.parse(JSON.parse(await stored("verdict.json"))),
    );
  });

  it("renders a re-grade's verdict with that re-grade's checks", async () => {
    const { stem } = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    const run = await runHarness([
      "report",
      exp.outDir,
      "--format",
      "html",
      "--verdict",
      `${stem}.json`,
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(await stored(`${stem}.html`));
    expect(run.stdout).toContain("re-grade of <code>verdict.json</code>");
    expect(run.stdout).toContain("node check.mjs exited with code 0");
  });

  it("exits 2 for an unknown format, a missing directory or a file that is not a verdict", async () => {
    const format = await runHarness(["report", exp.outDir, "--format", "pdf"]);
    expect(format.exitCode).toBe(2);
    expect(format.stderr).toContain("--format must be one of md, html, json");
    const missing = await runHarness(["report", join(exp.base, "nowhere")]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("verdict.json");
    await writeFile(join(exp.base, "not-a-verdict.json"), '{"status": "accept"}\n');
    const wrong = await runHarness(["report", exp.base, "--verdict", "not-a-verdict.json"]);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain("not-a-verdict.json");
    expect(wrong.stderr).toContain("schemaVersion");
    expect(wrong.stdout).toBe("");
  });
});
