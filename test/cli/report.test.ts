// `harness report <out-dir> [--format md|html|json] [--verdict file] [--output file]`: re-renders
// a finished run from its artifacts, exactly as the run rendered it.
import { spawn } from "node:child_process";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
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

  it("prints verdict.json itself with --format json, byte for byte, after checking it", async () => {
    const run = await runHarness(["report", exp.outDir, "--format", "json"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(await stored("verdict.json"));
    // Keys in another order and a field left to its default: printed as the file has them.
    const reordered = join(exp.base, "reordered");
    await mkdir(reordered, { recursive: true });
    const {
      infraRetries: _r,
      interrupted: _i,
      ...rest
    } = JSON.parse(await stored("verdict.json")) as Record<string, unknown>;
    const text = JSON.stringify(Object.fromEntries(Object.entries(rest).reverse()));
    await writeFile(join(reordered, "verdict.json"), text);
    const again = await runHarness(["report", reordered, "--format", "json"]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).toBe(text);
    await writeFile(join(reordered, "verdict.json"), `${text.slice(0, -1)},}`);
    const broken = await runHarness(["report", reordered, "--format", "json"]);
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toContain("not valid JSON");
    expect(broken.stdout).toBe("");
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

  it("writes the report to --output atomically instead of stdout", async () => {
    const target = join(exp.outDir, "again.html");
    const run = await runHarness(["report", exp.outDir, "--format", "html", "--output", target]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(`wrote ${target}\n`);
    expect(await readFile(target, "utf8")).toBe(await stored("verdict.html"));
    // Over an existing file too, and no temporary file is left behind.
    const again = await runHarness(["report", exp.outDir, "--format", "md", "--output", target]);
    expect(again.exitCode).toBe(0);
    expect(await readFile(target, "utf8")).toBe(await stored("verdict.md"));
    expect((await readdir(exp.outDir)).filter((name) => name.startsWith(".again.html"))).toEqual(
      [],
    );
    await rm(target);
  });

  it("points the trial links back at the run when --output is elsewhere", async () => {
    const elsewhere = join(exp.base, "reports", "nested");
    await mkdir(elsewhere, { recursive: true });
    const target = join(elsewhere, "report.html");
    const run = await runHarness(["report", exp.outDir, "--format", "html", "--output", target]);
    expect(run.exitCode, run.stderr).toBe(0);
    const html = await readFile(target, "utf8");
    expect(html).toContain('<a href="../../out/baseline/fix-value/trial-001/">');
    const md = join(elsewhere, "report.md");
    await runHarness(["report", exp.outDir, "--output", md]);
    expect(await readFile(md, "utf8")).toContain(
      "[baseline/fix-value/trial-001](../../out/baseline/fix-value/trial-001/)",
    );
  });

  it("names the file it cannot write and refuses to overwrite the verdict it reads", async () => {
    const noDir = join(exp.base, "no-such-dir", "r.html");
    const run = await runHarness(["report", exp.outDir, "--output", noDir]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(
      `${noDir}: cannot write the report (its directory does not exist)`,
    );
    const self = await runHarness([
      "report",
      exp.outDir,
      "--format",
      "html",
      "--output",
      join(exp.outDir, "verdict.json"),
    ]);
    expect(self.exitCode).toBe(2);
    expect(self.stderr).toContain("that is the verdict being rendered");
    expect(verdictDocumentSchema.safeParse(JSON.parse(await stored("verdict.json"))).success).toBe(
      true,
    );
  });

  it("says whether the directory or the verdict is missing, and which verdicts exist", async () => {
    const nowhere = join(exp.base, "nowhere");
    const missing = await runHarness(["report", nowhere]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(`${nowhere}: no such directory`);
    expect(missing.stdout).toBe("");

    const empty = join(exp.base, "empty-run");
    await mkdir(empty);
    const noVerdict = await runHarness(["report", empty]);
    expect(noVerdict.exitCode).toBe(2);
    expect(noVerdict.stderr).toContain(`${join(empty, "verdict.json")}: no verdict file here`);
    expect(noVerdict.stderr).toContain(`no comparison run was started in ${empty}`);

    // A run that was killed: its manifest but no verdict.
    await writeFile(join(empty, "manifest.json"), "{}\n");
    const killed = await runHarness(["report", empty]);
    expect(killed.exitCode).toBe(2);
    expect(killed.stderr).toContain("finish it with `harness compare run … --resume`");

    const wrongName = await runHarness([
      "report",
      exp.outDir,
      "--verdict",
      "verdict.regrade-999.json",
    ]);
    expect(wrongName.exitCode).toBe(2);
    expect(wrongName.stderr).toContain(join(exp.outDir, "verdict.regrade-999.json"));
    expect(wrongName.stderr).toMatch(/verdicts in .*: verdict\.json/);
  });

  it("says a run is in progress, not to resume it, while a live run holds the directory", async () => {
    const live = join(exp.base, "live-run");
    await mkdir(live);
    await writeFile(join(live, "manifest.json"), "{}\n");
    const lock = (pid: number) =>
      writeFile(
        join(live, ".harnesslab-run.lock"),
        JSON.stringify({ pid, host: hostname(), startedAt: new Date().toISOString(), token: "t" }),
      );
    // A process that is still running stands for the run holding the lock.
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    const exited = new Promise((done) => holder.on("exit", done));
    try {
      await lock(holder.pid!);
      const running = await runHarness(["report", live]);
      expect(running.exitCode).toBe(2);
      expect(running.stderr).toContain(`a run is in progress in ${live}`);
      expect(running.stderr).toContain("run `harness report` again then");
      expect(running.stderr).not.toContain("--resume");
    } finally {
      holder.kill();
    }
    await exited;

    // The same lock once that process has ended: the run was killed, --resume finishes it.
    const stale = await runHarness(["report", live]);
    expect(stale.exitCode).toBe(2);
    expect(stale.stderr).not.toContain("in progress");
    expect(stale.stderr).toContain("--resume");
  });

  it("exits 2 for an unknown format or a file that is not a verdict", async () => {
    const format = await runHarness(["report", exp.outDir, "--format", "pdf"]);
    expect(format.exitCode).toBe(2);
    expect(format.stderr).toContain("--format must be one of md, html, json");
    await writeFile(join(exp.base, "not-a-verdict.json"), '{"status": "accept"}\n');
    const wrong = await runHarness(["report", exp.base, "--verdict", "not-a-verdict.json"]);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain("not-a-verdict.json");
    expect(wrong.stderr).toContain("schemaVersion");
    expect(wrong.stdout).toBe("");
  });
});
