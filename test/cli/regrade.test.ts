// `harness compare regrade`: re-grading a real readme-package-v1 run (the readme-compare example)
// with other contracts, what it prints, what it writes beside the old verdict, and that every bad
// --grader-contract value exits 2 naming the problem and writes nothing.
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  frozenTasksSchema,
  type VerdictDocument,
  verdictDocumentSchema,
} from "../../src/compare/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import { runHarness } from "../support/cli.js";
import { makeExperiment, syntheticManifest, type TempExperiment } from "../support/experiment.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/readme-compare/", import.meta.url));
const README_GRADER = "readme-package-v1";

let base: string;
/** A copy of the example, with extra manifests and contracts beside it. */
let dir: string;
/** One task graded by scope + readme-package-v1, 2 trials per variant. */
let out: string;
/** Two tasks that each have a readme-package-v1 grader, 1 trial per variant. */
let twoTaskOut: string;
let runContractHash: string;

async function writeJson(name: string, value: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `${JSON.stringify(value, null, 2)}\n`);
  return path;
}

async function verdictFile(outDir: string, name: string): Promise<VerdictDocument> {
  return verdictDocumentSchema.parse(JSON.parse(await readFile(join(outDir, name), "utf8")));
}

/** `verdict.regrade-NNN` as printed in the `new verdict (…)` line. */
function printedStem(text: string): string {
  const match = /^new verdict \((verdict\.regrade-\d{3})\.json\)/m.exec(text);
  if (!match?.[1]) throw new Error(`no new verdict line in:\n${text}`);
  return match[1];
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-regrade-cli-"));
  dir = join(base, "exp");
  await cp(EXAMPLE, dir, { recursive: true });
  const example = JSON.parse(await readFile(join(dir, "experiment.offline.json"), "utf8")) as {
    tasks: Array<Record<string, unknown>>;
    variants: Array<Record<string, unknown>>;
  };
  const readmeTask = example.tasks[0] ?? {};
  const single = await writeJson("single.json", {
    ...example,
    tasks: [{ ...readmeTask, graders: [{ kind: "scope" }, ...(readmeTask.graders as [])] }],
  });
  // The baseline writes nothing here (cheap to grade); only the grounded trials have a README.
  const twoTasks = await writeJson("two-tasks.json", {
    ...example,
    tasks: [readmeTask, { ...readmeTask, id: "write-readme-again" }],
    variants: example.variants.map((v) => (v.id === "baseline" ? { ...v, agent: "nop" } : v)),
  });
  const contract = JSON.parse(await readFile(join(dir, "contract.json"), "utf8")) as {
    requiredHeadings: string[];
  };
  // The grounded README has no Contributing section: under this contract it fails `structure`.
  await writeJson("strict.json", {
    ...contract,
    requiredHeadings: [...contract.requiredHeadings, "Contributing"],
  });
  // Stricter on headings, looser on claims and links: some baseline trials score higher.
  await writeJson("mixed.json", {
    ...contract,
    requiredHeadings: [...contract.requiredHeadings, "Contributing"],
    forbiddenClaims: [],
    forbidRemoteLinks: false,
  });
  await writeFile(join(dir, "broken.json"), '{\n  "requiredHeadings": [\n');
  await writeJson("wrong-field.json", { ...contract, requiredHeadings: "Installation" });

  out = join(base, "out");
  twoTaskOut = join(base, "out-two-tasks");
  const runs = await Promise.all([
    runHarness(["compare", "run", single, "--out", out, "--trials", "2"]),
    runHarness(["compare", "run", twoTasks, "--out", twoTaskOut, "--trials", "1"]),
  ]);
  for (const run of runs) expect(run.exitCode, run.stderr).toBe(0);
  const frozen = frozenTasksSchema.parse(
    JSON.parse(await readFile(join(out, "frozen-task.json"), "utf8")),
  );
  runContractHash =
    frozen.tasks[0]?.graders.find((g) => g.id === README_GRADER)?.contractHash ?? "";
  expect(runContractHash).toMatch(/^sha256:/);
}, 60_000);

afterAll(() => rm(base, { recursive: true, force: true }));

describe("harness compare regrade --grader-contract on the readme-compare example", () => {
  it("with the run's own contract reproduces every outcome and says no trial changed", async () => {
    const before = await listTree(out);
    const run = await runHarness(
      ["compare", "regrade", out, "--grader-contract", "contract.json"],
      dir,
    );
    expect(run.exitCode, run.stderr).toBe(0);
    // Not a terminal: a progress line per re-graded trial, ending at the total.
    const progress = run.stderr.split("\n").filter((line) => line.startsWith("re-grading "));
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toMatch(/^re-grading (\d+)\/\1$/);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(
      `grader contract write-readme/${README_GRADER}: ${join(dir, "contract.json")} ${runContractHash} (from --grader-contract; same as the run)`,
    );
    expect(lines[1]).toBe("no trial changed");
    expect(lines[2]).toMatch(/^previous verdict: need_more_work — /);
    expect(lines[3]).toMatch(/^new verdict \(verdict\.regrade-\d{3}\.json\): need_more_work — /);
    expect(lines).toHaveLength(4);

    const stem = printedStem(run.stdout);
    const previous = await verdictFile(out, "verdict.json");
    const regraded = await verdictFile(out, `${stem}.json`);
    expect(regraded.trials.map((t) => [t.artifactDir, t.outcome, t.score])).toEqual(
      previous.trials.map((t) => [t.artifactDir, t.outcome, t.score]),
    );
    expect(regraded.graderContracts).toEqual([
      {
        task: "write-readme",
        grader: README_GRADER,
        path: join(dir, "contract.json"),
        contractHash: runContractHash,
        source: "option",
      },
    ]);
    // Regrade only added files.
    const now = await listTree(out);
    for (const entry of before) expect(now).toContain(entry);
  });

  it("with a stricter contract fails the grounded trials, prints the exact summary and leaves the old verdict byte-identical", async () => {
    const names = ["verdict.json", "verdict.md", "verdict.html"];
    const old = await Promise.all(names.map((n) => readFile(join(out, n))));
    const run = await runHarness(
      ["compare", "regrade", out, "--grader-contract", "strict.json"],
      dir,
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      new RegExp(
        `^grader contract write-readme/${README_GRADER}: ${join(dir, "strict.json")} sha256:[0-9a-f]{64} \\(from --grader-contract; the run used ${runContractHash}\\)$`,
      ),
    );
    expect(lines.slice(1, 4)).toEqual([
      "2 trials changed: 0 up, 2 down; grounded pass rate 1.00 → 0.00",
      // scope 100 and readme 90 (structure, weight 10, now fails): mean 95.
      "  grounded/write-readme/trial-001: passed (100) → failed (95)",
      "  grounded/write-readme/trial-002: passed (100) → failed (95)",
    ]);
    expect(lines[4]).toMatch(
      /^previous verdict: need_more_work — grounded is not clearly different/,
    );
    expect(lines[5]).toMatch(/^new verdict \(verdict\.regrade-\d{3}\.json\): need_more_work — /);

    const stem = printedStem(run.stdout);
    const suffix = stem.replace(/^verdict\./, "");
    const regraded = await verdictFile(out, `${stem}.json`);
    expect(regraded.regradeOf).toBe("verdict.json");
    expect(regraded.graderContracts?.[0]).toMatchObject({
      path: join(dir, "strict.json"),
      source: "option",
    });
    expect(regraded.graderContracts?.[0]?.contractHash).not.toBe(runContractHash);
    const validation = JSON.parse(
      await readFile(
        join(out, "grounded/write-readme/trial-001", `validation.${suffix}.json`),
        "utf8",
      ),
    ) as { grades: Array<{ grader: string; checks: Array<{ id: string; passed: boolean }> }> };
    const structure = validation.grades
      .find((g) => g.grader === README_GRADER)
      ?.checks.find((c) => c.id === "structure");
    expect(structure?.passed).toBe(false);
    for (const ext of ["json", "md", "html"])
      expect(await readdir(out)).toContain(`${stem}.${ext}`);
    expect(await Promise.all(names.map((n) => readFile(join(out, n))))).toEqual(old);

    // `harness report` renders the new verdict from the artifacts alone.
    const report = await runHarness(["report", out, "--verdict", `${stem}.json`, "--format", "md"]);
    expect(report.exitCode, report.stderr).toBe(0);
    expect(report.stdout).toBe(await readFile(join(out, `${stem}.md`), "utf8"));
    expect(report.stdout).toContain("re-grade of `verdict.json`");
    expect(report.stdout).not.toBe(await readFile(join(out, "verdict.md"), "utf8"));
  });

  it("with --json prints only the new verdict on stdout, the summary on stderr, and counts a higher score as up", async () => {
    const run = await runHarness(
      ["compare", "regrade", out, "--grader-contract", `${README_GRADER}=mixed.json`, "--json"],
      dir,
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const printed = verdictDocumentSchema.parse(JSON.parse(run.stdout));
    expect(printed).toEqual(await verdictFile(out, `${printedStem(run.stderr)}.json`));
    // The mixed contract no longer forbids claims: one baseline trial loses a failed check.
    expect(run.stderr.split("\n").slice(1, 5)).toEqual([
      "3 trials changed: 1 up, 2 down; grounded pass rate 1.00 → 0.00",
      "  baseline/write-readme/trial-002: failed (72.5) → failed (75)",
      "  grounded/write-readme/trial-001: passed (100) → failed (95)",
      "  grounded/write-readme/trial-002: passed (100) → failed (95)",
    ]);
  });
});

describe("harness compare regrade refuses a bad --grader-contract", () => {
  const cases: Array<{ name: string; value: string; outDir: () => string; messages: string[] }> = [
    {
      name: "an unknown grader id",
      value: "readme=strict.json",
      outDir: () => out,
      messages: [
        "--grader-contract readme=strict.json",
        `unknown grader id "readme"; graders that take a contract: write-readme/${README_GRADER}`,
      ],
    },
    {
      name: "a grader that takes no contract",
      value: "scope=strict.json",
      outDir: () => out,
      messages: [
        'grader "scope" is a scope grader and takes no contract',
        `graders that take one: write-readme/${README_GRADER}`,
      ],
    },
    {
      name: "a bare file when several graders take a contract",
      value: "strict.json",
      outDir: () => twoTaskOut,
      messages: [
        "a bare file is allowed only when exactly one grader takes a contract",
        `these do: write-readme/${README_GRADER}, write-readme-again/${README_GRADER}`,
      ],
    },
    {
      name: "a missing file",
      value: "missing.json",
      outDir: () => out,
      messages: [
        "missing.json: cannot use the contract given with --grader-contract missing.json\n  file not found\n",
      ],
    },
    {
      name: "a file that is not JSON",
      value: `${README_GRADER}=broken.json`,
      outDir: () => out,
      messages: [
        "broken.json: cannot use the contract given with --grader-contract",
        "line 3, column 1: not valid JSON",
      ],
    },
    {
      name: "a contract with a wrong field",
      value: "wrong-field.json",
      outDir: () => out,
      messages: [
        "wrong-field.json: cannot use the contract given with --grader-contract",
        "requiredHeadings: expected array",
      ],
    },
  ];

  for (const c of cases) {
    it(`exits 2 for ${c.name}, naming it, and writes nothing`, async () => {
      const target = c.outDir();
      const before = await listTree(target);
      const run = await runHarness(
        ["compare", "regrade", target, "--grader-contract", c.value],
        dir,
      );
      expect(run.exitCode).toBe(2);
      expect(run.stdout).toBe("");
      for (const message of c.messages) expect(run.stderr).toContain(message);
      expect(await listTree(target)).toEqual(before);
    });
  }

  it("with --json prints the problem as a JSON error document", async () => {
    const run = await runHarness(
      ["compare", "regrade", out, "--grader-contract", "nope=strict.json", "--json"],
      dir,
    );
    expect(run.exitCode).toBe(2);
    const document = JSON.parse(run.stdout) as {
      ok: boolean;
      error: { file?: string; problems: Array<{ path: string; message: string }> };
    };
    expect(document.ok).toBe(false);
    expect(document.error.file).toBe("--grader-contract");
    expect(document.error.problems[0]?.path).toBe("--grader-contract nope=strict.json");
  });
});

describe("harness compare regrade on a two-task run", () => {
  it("re-grades one task's grader with <task>/<grader-id>=<file> and keeps the other's contract", async () => {
    const run = await runHarness(
      [
        "compare",
        "regrade",
        twoTaskOut,
        "--grader-contract",
        `write-readme/${README_GRADER}=strict.json`,
      ],
      dir,
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toContain(`write-readme/${README_GRADER}: ${join(dir, "strict.json")}`);
    expect(lines[1]).toBe(
      `grader contract write-readme-again/${README_GRADER}: ${join(dir, "contract.json")} ${runContractHash} (from the manifest; same as the run)`,
    );
    expect(lines.slice(2, 4)).toEqual([
      "1 trial changed: 0 up, 1 down; grounded pass rate 1.00 → 0.50",
      "  grounded/write-readme/trial-001: passed (100) → failed (90)",
    ]);
  });
});

describe("harness compare regrade on a run graded by commands", () => {
  let exp: TempExperiment;
  beforeAll(async () => {
    exp = await makeExperiment();
  });
  afterAll(() => exp.cleanup());

  it("re-grades after the manifest's grader changed, prints what changed and exits by the new verdict", async () => {
    const runOut = exp.freshOut("regrade-out");
    const manifest = await exp.writeManifest(syntheticManifest(), "regrade.json");
    expect((await runHarness(["compare", "run", manifest, "--out", runOut])).exitCode).toBe(0);
    const same = await runHarness(["compare", "regrade", runOut]);
    expect(same.exitCode).toBe(0);
    expect(same.stdout).toContain("\nprevious verdict: accept");
    expect(same.stdout).toContain("\nnew verdict (verdict.regrade-001.json): accept");
    expect(same.stdout.split("\n")[0]).toBe("no trial changed");

    const flipped = syntheticManifest({
      tasks: [
        {
          id: "fix-value",
          fixture: "./fixture",
          prompt: "./prompt.md",
          expectedFiles: ["src/value.txt"],
          graders: [{ kind: "command", id: "check", argv: ["node", "check-old.mjs"] }],
        },
      ],
    });
    await exp.writeManifest(flipped, "regrade.json");
    const changed = await runHarness(["compare", "regrade", runOut, "--json"]);
    expect(changed.exitCode).toBe(1);
    expect(verdictDocumentSchema.parse(JSON.parse(changed.stdout)).status).toBe("reject");
    // The notes name what differs from the inputs the run recorded.
    expect(
      changed.stderr
        .split("\n")
        .filter((line) => line.startsWith("note: "))
        .map((line) => line.replace(/sha256:[0-9a-f]{12}…/g, "#")),
    ).toEqual([
      "note: changed since the run: the settings of grader check of task fix-value differ: # then, # now",
      "note: changed since the run: grader scope of task fix-value of the earlier run is not in the manifest now",
    ]);
    expect(changed.stderr).toContain(
      "4 trials changed: 2 up, 2 down; baseline pass rate 0.00 → 1.00; fixer pass rate 1.00 → 0.00",
    );
    expect(changed.stderr).toContain("  fixer/fix-value/trial-001: passed (100) → failed (0)\n");
    expect((await readdir(runOut)).filter((f) => f.startsWith("verdict.")).sort()).toEqual([
      "verdict.html",
      "verdict.json",
      "verdict.md",
      "verdict.regrade-001.html",
      "verdict.regrade-001.json",
      "verdict.regrade-001.md",
      "verdict.regrade-002.html",
      "verdict.regrade-002.json",
      "verdict.regrade-002.md",
    ]);
  });

  it("exits 2 for a contract when no grader of the run takes one", async () => {
    const runOut = exp.freshOut("regrade-out");
    const before = await listTree(runOut);
    const run = await runHarness(["compare", "regrade", runOut, "--grader-contract", "c.json"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("no grader of this run takes a contract");
    expect(await listTree(runOut)).toEqual(before);
  });

  it("exits 2 for a directory without a run, saying so in one line", async () => {
    for (const dir of [exp.fixtureDir, exp.freshOut("never-written")]) {
      const run = await runHarness(["compare", "regrade", dir]);
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toBe(
        `harness: ${dir}: no finished run in this directory (manifest.json not found)\n`,
      );
    }
  });
});
