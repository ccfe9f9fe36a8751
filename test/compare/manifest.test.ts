import { createHash } from "node:crypto";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CompositionCatalog,
  checkCompositions,
  checkOutDir,
  type Experiment,
  loadHarnessCatalog,
  loadManifest,
  PORTABLE_RELATIVE_PATH_PATTERN,
  portablePathProblem,
  trialArtifactDir,
  V1_VALIDATION_COMMANDS,
  validateManifestForCli,
} from "../../src/compare/index.js";
import {
  claudeV2Manifest,
  makeWorkspace,
  scriptedV2Manifest,
  type Workspace,
} from "../fixtures/manifests/workspace.js";

let workspace: Workspace;
afterEach(async () => {
  await workspace?.cleanup();
});

async function withWorkspace(): Promise<Workspace> {
  workspace = await makeWorkspace();
  return workspace;
}

async function writeManifest(
  ws: Workspace,
  manifest: unknown,
  name = "case.json",
): Promise<string> {
  const path = join(ws.dir, name);
  await writeFile(path, `${JSON.stringify(manifest, null, 2)}\n`);
  return path;
}

async function loadOk(path: string, options = {}): Promise<Experiment> {
  const loaded = await loadManifest(path, options);
  expect(loaded.problems).toEqual([]);
  if (!loaded.ok) throw new Error("unreachable");
  return loaded.experiment;
}

function catalog(entries: Record<string, string>): CompositionCatalog {
  return {
    compositions: new Map(Object.entries(entries).map(([id, targetHost]) => [id, { targetHost }])),
  };
}

describe("harness-compare.v1 (the seed system's manifests, unchanged)", () => {
  it("loads the conformance experiment.json relative to its directory", async () => {
    const ws = await withWorkspace();
    const path = join(ws.dir, "experiment.json");
    const loaded = await loadManifest(path);
    expect(loaded.problems).toEqual([]);
    if (!loaded.ok) return;
    const experiment = loaded.experiment;
    expect(experiment).toMatchObject({
      schemaVersion: "harness-compare.v1",
      layout: "v1",
      manifestPath: path,
      manifestDir: ws.dir,
      harnessFiles: [join(ws.dir, "readme-compare.harness")],
      baseline: "H0",
      trials: { count: 5, manifestCount: 5, seed: 20260815, order: "randomized" },
      verdict: { kind: "heuristic-v1" },
      concurrency: 1,
      runtime: {
        host: "qoder",
        model: "performance",
        tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
        allowedTools: [],
        disallowedTools: ["WebFetch", "WebSearch", "Task"],
        permissionMode: "default",
        maxTurns: 24,
        timeoutMs: 600000,
        network: "deny",
        enableFileCheckpointing: true,
      },
    });
    expect(experiment.runtime.validationCommands).toEqual(V1_VALIDATION_COMMANDS);
    expect(experiment.variants).toEqual([
      {
        id: "H0",
        label: "baseline",
        composition: "readme-baseline",
        isBaseline: true,
        compositionField: "variants.baseline",
        manifestField: "variants.baseline",
      },
      {
        id: "H1",
        label: "candidate",
        composition: "readme-grounded",
        isBaseline: false,
        compositionField: "variants.candidate",
        manifestField: "variants.candidate",
      },
    ]);
    const [task] = experiment.tasks;
    expect(task).toMatchObject({
      id: "task",
      fixtureDir: join(ws.dir, "fixture"),
      promptFile: join(ws.dir, "prompt.md"),
      expectedFiles: ["README.md"],
      graders: [
        {
          kind: "readme-package-v1",
          id: "readme-package-v1",
          contractFile: join(ws.dir, "grader-contract.json"),
        },
      ],
    });
    expect(task?.prompt).toBe(await readFile(join(ws.dir, "prompt.md"), "utf8"));
  });

  it("hashes the manifest file's bytes", async () => {
    const ws = await withWorkspace();
    const path = join(ws.dir, "experiment.json");
    const loaded = await loadManifest(path);
    const expected = createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
    expect(loaded.ok && loaded.manifestHash).toBe(expected);
  });

  it("returns the parsed document as written", async () => {
    const ws = await withWorkspace();
    const path = join(ws.dir, "experiment.json");
    const loaded = await loadManifest(path);
    expect(loaded.ok && loaded.manifest).toEqual(JSON.parse(await readFile(path, "utf8")));
  });

  it("loads the conformance minimal-profile experiment: same composition, different profiles", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(join(ws.dir, "minimal-profile-experiment.json"));
    expect(experiment.variants.map((v) => [v.id, v.composition, v.runtimeProfile])).toEqual([
      ["H0", "readme-grounded", "qoder-default-v1"],
      ["H1", "readme-grounded", "qoder-minimal-v1"],
    ]);
    expect(experiment.tasks[0]?.promptFile).toBe(join(ws.dir, "minimal-profile-prompt.md"));
  });

  it("accepts the conformance compositions from a catalog of the real harness file", async () => {
    const ws = await withWorkspace();
    const path = join(ws.dir, "experiment.json");
    const experiment = await loadOk(path, {
      catalog: catalog({ "readme-baseline": "qoder", "readme-grounded": "qoder" }),
    });
    expect(experiment.variants).toHaveLength(2);
  });

  it("lowers the trial count with --trials and keeps the manifest's count", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(join(ws.dir, "experiment.json"), { trialsOverride: 2 });
    expect(experiment.trials).toMatchObject({ count: 2, manifestCount: 5 });
  });

  it("accepts --trials equal to the manifest's count", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(join(ws.dir, "experiment.json"), { trialsOverride: 5 });
    expect(experiment.trials.count).toBe(5);
  });

  it("accepts a manifest that starts with a byte-order mark", async () => {
    const ws = await withWorkspace();
    const text = await readFile(join(ws.dir, "experiment.json"), "utf8");
    const path = join(ws.dir, "bom.json");
    await writeFile(path, `\uFEFF${text}`);
    await loadOk(path);
  });

  it("accepts explicit runtime profiles for both variants", async () => {
    const ws = await withWorkspace();
    const manifest = JSON.parse(await readFile(join(ws.dir, "experiment.json"), "utf8"));
    manifest.runtimeProfiles = { baseline: "qoder-default-v1", candidate: "qoder-default-v1" };
    const path = await writeManifest(ws, manifest);
    const loaded = await loadManifest(path);
    expect(loaded.ok).toBe(true);
  });
});

describe("harness-compare.v2", () => {
  it("loads a scripted experiment and fills in every default", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(await writeManifest(ws, scriptedV2Manifest()));
    expect(experiment).toMatchObject({
      schemaVersion: "harness-compare.v2",
      layout: "v2",
      harnessFiles: [join(ws.dir, "compare.harness")],
      baseline: "baseline",
      runtime: {
        host: "scripted",
        timeoutMs: 60000,
        network: "deny",
        validationCommands: [["npm", "test"]],
      },
      trials: { count: 5, manifestCount: 5, seed: 42, order: "randomized" },
      verdict: { kind: "paired-v1", alpha: 0.05, minTrials: 5, maxCostRatio: 1.25 },
      concurrency: 1,
    });
    expect(experiment.tasks).toEqual([
      {
        id: "fix-bug",
        fixtureDir: join(ws.dir, "fixture"),
        promptFile: join(ws.dir, "fix-prompt.md"),
        prompt: "Fix the off-by-one in src/index.js.\n",
        expectedFiles: ["src/index.js"],
        graders: [
          { kind: "scope", id: "scope", mode: "subset" },
          {
            kind: "command",
            id: "npm-test",
            argv: ["npm", "test"],
            timeoutMs: 60000,
            expectedExitCode: 0,
          },
        ],
        manifestField: "tasks[0]",
      },
    ]);
    expect(experiment.variants).toEqual([
      {
        id: "baseline",
        label: "baseline",
        composition: "plain",
        agent: { kind: "nop" },
        isBaseline: true,
        compositionField: "variants[0].composition",
        manifestField: "variants[0]",
      },
      {
        id: "candidate",
        label: "candidate",
        composition: "careful",
        agent: { kind: "module", modulePath: join(ws.dir, "agents", "candidate.mjs") },
        isBaseline: false,
        compositionField: "variants[1].composition",
        manifestField: "variants[1]",
      },
    ]);
  });

  it("resolves an oracle agent's patch file", async () => {
    const ws = await withWorkspace();
    const manifest = scriptedV2Manifest() as { variants: Array<Record<string, unknown>> };
    manifest.variants[1]!.agent = "oracle:oracle.patch";
    const experiment = await loadOk(await writeManifest(ws, manifest));
    expect(experiment.variants[1]?.agent).toEqual({
      kind: "oracle",
      patchFile: join(ws.dir, "oracle.patch"),
    });
  });

  it("loads a real-host experiment with explicit settings", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(await writeManifest(ws, claudeV2Manifest()));
    expect(experiment.runtime).toEqual({
      host: "claude-code",
      model: "claude-sonnet-4-5",
      tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
      allowedTools: [],
      disallowedTools: ["WebFetch", "WebSearch"],
      permissionMode: "default",
      maxTurns: 20,
      timeoutMs: 600000,
      network: "deny",
      enableFileCheckpointing: false,
      validationCommands: [
        ["npm", "test"],
        ["git", "status", "--short"],
      ],
    });
    expect(experiment.trials.order).toBe("sequential");
    expect(experiment.verdict).toEqual({
      kind: "paired-v1",
      alpha: 0.1,
      minTrials: 5,
      maxCostRatio: 1.25,
    });
    expect(experiment.concurrency).toBe(2);
    expect(experiment.tasks[0]?.graders).toEqual([{ kind: "scope", id: "scope", mode: "exact" }]);
    expect(experiment.variants.every((v) => v.agent === undefined)).toBe(true);
  });

  it("normalizes expected files to the change list's form, sorted", async () => {
    const ws = await withWorkspace();
    const manifest = scriptedV2Manifest() as { tasks: Array<Record<string, unknown>> };
    manifest.tasks[0]!.expectedFiles = ["./src/index.js", "README.md", "src/./util.js"];
    const experiment = await loadOk(await writeManifest(ws, manifest));
    expect(experiment.tasks[0]?.expectedFiles).toEqual([
      "README.md",
      "src/index.js",
      "src/util.js",
    ]);
  });

  it("allows a task with no expected files (nothing may change)", async () => {
    const ws = await withWorkspace();
    const manifest = scriptedV2Manifest() as { tasks: Array<Record<string, unknown>> };
    manifest.tasks[0]!.expectedFiles = [];
    const experiment = await loadOk(await writeManifest(ws, manifest));
    expect(experiment.tasks[0]?.expectedFiles).toEqual([]);
  });

  it("selects the heuristic-v1 verdict policy", async () => {
    const ws = await withWorkspace();
    const manifest = { ...scriptedV2Manifest(), verdict: { policy: "heuristic-v1" } };
    const experiment = await loadOk(await writeManifest(ws, manifest));
    expect(experiment.verdict).toEqual({ kind: "heuristic-v1" });
  });

  it("warns when the trial count cannot reach the paired verdict's minimum", async () => {
    const ws = await withWorkspace();
    const path = await writeManifest(ws, scriptedV2Manifest());
    const loaded = await loadManifest(path, { trialsOverride: 3 });
    expect(loaded.ok).toBe(true);
    expect(loaded.warnings).toEqual([
      { path: "trials.count", message: expect.stringContaining("below verdict.minTrials (5)") },
    ]);
  });

  it("warns when no outcome of the planned trials could be accepted (one task, too few trials for the exact test)", async () => {
    const ws = await withWorkspace();
    const manifest = { ...scriptedV2Manifest(), verdict: { policy: "paired-v1", minTrials: 3 } };
    const loaded = await loadManifest(await writeManifest(ws, manifest), { trialsOverride: 3 });
    expect(loaded.warnings).toEqual([
      {
        path: "trials.count",
        message:
          '1 task × 3 trials per variant cannot reach "accept" for any effect: even a candidate that passes every trial against a baseline that fails every one gets p = 0.1 > 0.05; `harness compare plan` shows how many trials would',
      },
    ]);
  });

  it("does not warn about minTrials under the sequential design, whose boundaries replace it", async () => {
    const ws = await withWorkspace();
    const manifest = {
      ...scriptedV2Manifest(),
      trials: { count: 12, seed: 42 },
      verdict: { policy: "paired-v1", minTrials: 20, design: "sequential" },
    };
    const loaded = await loadManifest(await writeManifest(ws, manifest));
    expect(loaded.ok && loaded.experiment.verdict).toMatchObject({ design: "sequential" });
    expect(loaded.warnings).toEqual([]);
  });

  it("has no warnings when the trial count meets the verdict's minimum", async () => {
    const ws = await withWorkspace();
    const loaded = await loadManifest(await writeManifest(ws, scriptedV2Manifest()));
    expect(loaded.warnings).toEqual([]);
  });

  it("accepts paths inside the manifest's directory whose first name starts with two dots", async () => {
    const ws = await withWorkspace();
    await mkdir(join(ws.dir, "..data", "fixture", "src"), { recursive: true });
    await writeFile(join(ws.dir, "..data", "fixture", "src", "index.js"), "export {};\n");
    await writeFile(join(ws.dir, "..data", "prompt.md"), "Fix it.\n");
    const manifest = scriptedV2Manifest();
    const [task] = manifest.tasks as Array<Record<string, unknown>>;
    Object.assign(task!, { fixture: "./..data/fixture", prompt: "..data/prompt.md" });
    const experiment = await loadOk(await writeManifest(ws, manifest));
    expect(experiment.tasks[0]?.fixtureDir).toBe(join(ws.dir, "..data", "fixture"));
  });

  it("accepts variants that differ only in their scripted agent", async () => {
    const ws = await withWorkspace();
    const manifest = scriptedV2Manifest() as { variants: Array<Record<string, unknown>> };
    manifest.variants[1]!.composition = "plain";
    await loadOk(await writeManifest(ws, manifest));
  });
});

describe("loading never throws for bad input", () => {
  it("names a missing manifest file", async () => {
    const ws = await withWorkspace();
    const loaded = await loadManifest(join(ws.dir, "nope.json"));
    expect(loaded).toMatchObject({
      ok: false,
      manifestPath: join(ws.dir, "nope.json"),
      problems: [{ path: "(file)", message: "file not found" }],
    });
  });

  it("rejects a manifest path that is a directory", async () => {
    const ws = await withWorkspace();
    const loaded = await loadManifest(ws.dir);
    expect(loaded.problems).toEqual([
      { path: "(file)", message: expect.stringContaining("directory") },
    ]);
  });

  it("requires schemaVersion", async () => {
    const ws = await withWorkspace();
    const loaded = await loadManifest(await writeManifest(ws, { harness: "x.harness" }));
    expect(loaded.problems).toEqual([
      { path: "schemaVersion", message: expect.stringContaining("is required") },
    ]);
  });
});

describe("problem messages", () => {
  it("reports a bad item of a harness list at the item, not as a wrong type", async () => {
    const ws = await withWorkspace();
    const manifest = { ...scriptedV2Manifest(), harness: ["./compare.harness", "../x.harness", 3] };
    const loaded = await loadManifest(await writeManifest(ws, manifest));
    expect(loaded.problems).toEqual([
      { path: "harness[1]", message: expect.stringContaining('".." segment') },
      { path: "harness[2]", message: expect.stringContaining("expected a path") },
    ]);
  });

  it("names the type that was expected and the value that was found", async () => {
    const ws = await withWorkspace();
    const manifest = { ...scriptedV2Manifest(), tasks: [5] };
    const loaded = await loadManifest(await writeManifest(ws, manifest));
    expect(loaded.problems).toEqual([{ path: "tasks[0]", message: "5: expected an object" }]);
  });

  it("says a missing field is required and what it expects", async () => {
    const ws = await withWorkspace();
    const manifest = scriptedV2Manifest() as { runtime: Record<string, unknown> };
    delete manifest.runtime.timeoutMs;
    const loaded = await loadManifest(await writeManifest(ws, manifest));
    expect(loaded.problems).toEqual([
      {
        path: "runtime.timeoutMs",
        message: "is required (expected an integer from 1000 to 1800000)",
      },
    ]);
  });
});

describe("composition checks", () => {
  it("reports schema and composition problems together", async () => {
    const ws = await withWorkspace();
    const manifest = { ...scriptedV2Manifest(), concurrency: 99 };
    const loaded = await loadManifest(await writeManifest(ws, manifest), {
      catalog: catalog({ plain: "scripted" }),
    });
    expect(loaded.problems.map((p) => p.path)).toEqual(["concurrency", "variants[1].composition"]);
  });

  it("builds the catalog through loadCatalog from the absolute harness files", async () => {
    const ws = await withWorkspace();
    const seen: string[][] = [];
    const loaded = await loadManifest(await writeManifest(ws, scriptedV2Manifest()), {
      loadCatalog: (files) => {
        seen.push([...files]);
        return { ok: true, catalog: catalog({ plain: "scripted", careful: "scripted" }) };
      },
    });
    expect(loaded.ok).toBe(true);
    expect(seen).toEqual([[join(ws.dir, "compare.harness")]]);
  });

  it("includes the catalog loader's own problems (e.g. compile errors)", async () => {
    const ws = await withWorkspace();
    const loaded = await loadManifest(await writeManifest(ws, scriptedV2Manifest()), {
      loadCatalog: async () => ({
        ok: false,
        problems: [
          { path: "harness", message: "compare.harness:3:1: error E001 unexpected token" },
        ],
      }),
    });
    expect(loaded.problems).toEqual([
      { path: "harness", message: "compare.harness:3:1: error E001 unexpected token" },
    ]);
  });

  it("does not compile harness files whose path is already wrong", async () => {
    const ws = await withWorkspace();
    let called = false;
    const manifest = { ...scriptedV2Manifest(), harness: "./missing.harness" };
    const loaded = await loadManifest(await writeManifest(ws, manifest), {
      loadCatalog: () => {
        called = true;
        return { ok: true, catalog: catalog({}) };
      },
    });
    expect(called).toBe(false);
    expect(loaded.problems.map((p) => p.path)).toEqual(["harness"]);
  });

  it("compiles the real conformance harness file into a catalog the v1 manifests pass", async () => {
    const ws = await withWorkspace();
    for (const name of ["experiment.json", "minimal-profile-experiment.json"]) {
      const loaded = await loadManifest(join(ws.dir, name), { loadCatalog: loadHarnessCatalog });
      expect(loaded.problems).toEqual([]);
    }
  });

  it("reports a composition the compiled harness file does not define", async () => {
    const ws = await withWorkspace();
    const manifest = JSON.parse(await readFile(join(ws.dir, "experiment.json"), "utf8"));
    manifest.variants.candidate = "readme-graunded";
    const loaded = await loadManifest(await writeManifest(ws, manifest), {
      loadCatalog: loadHarnessCatalog,
    });
    expect(loaded.problems).toEqual([
      {
        path: "variants.candidate",
        message:
          'composition "readme-graunded" not found in readme-compare.harness; available: readme-baseline, readme-grounded',
      },
    ]);
  });

  it("reports compile errors of the harness file at harness", async () => {
    const ws = await withWorkspace();
    await writeFile(join(ws.dir, "readme-compare.harness"), "composition broken {\n  target\n");
    const loaded = await loadManifest(join(ws.dir, "experiment.json"), {
      loadCatalog: loadHarnessCatalog,
    });
    expect(loaded.ok).toBe(false);
    expect(loaded.problems.length).toBeGreaterThan(0);
    for (const problem of loaded.problems) {
      expect(problem.path).toBe("harness");
      expect(problem.message).toMatch(/readme-compare\.harness:\d+:\d+: error /);
    }
  });

  it("checkCompositions names the missing composition, its harness file and the available ones", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(join(ws.dir, "experiment.json"));
    expect(
      checkCompositions(experiment, catalog({ "readme-baseline": "qoder", other: "qoder" })),
    ).toEqual([
      {
        path: "variants.candidate",
        message:
          'composition "readme-grounded" not found in readme-compare.harness; available: other, readme-baseline',
      },
    ]);
  });

  it("checkCompositions names the composition's target and the runtime host", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(await writeManifest(ws, scriptedV2Manifest()));
    const found = checkCompositions(experiment, {
      compositions: new Map([
        ["plain", { targetHost: "scripted" }],
        ["careful", { targetHost: "codex", file: join(ws.dir, "compare.harness") }],
      ]),
    });
    expect(found).toEqual([
      {
        path: "variants[1].composition",
        message: expect.stringContaining(
          'composition "careful" in compare.harness targets "codex" but runtime.host is "scripted"',
        ),
      },
    ]);
  });

  it("checkCompositions is empty when every composition exists for the host", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(join(ws.dir, "minimal-profile-experiment.json"));
    expect(checkCompositions(experiment, catalog({ "readme-grounded": "qoder" }))).toEqual([]);
  });
});

describe("--out checks", () => {
  it("accepts an absent directory inside the manifest's directory", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(join(ws.dir, "experiment.json"));
    expect(await checkOutDir(join(ws.dir, "runs", "first"), experiment)).toEqual([]);
  });

  it("accepts an existing empty directory", async () => {
    const ws = await withWorkspace();
    await mkdir(join(ws.dir, "results"));
    const experiment = await loadOk(join(ws.dir, "experiment.json"));
    expect(await checkOutDir(join(ws.dir, "results"), experiment)).toEqual([]);
  });

  it("accepts a non-empty directory when resuming", async () => {
    const ws = await withWorkspace();
    await mkdir(join(ws.dir, "results"));
    await writeFile(join(ws.dir, "results", "manifest.json"), "{}");
    const experiment = await loadOk(join(ws.dir, "experiment.json"));
    expect(await checkOutDir(join(ws.dir, "results"), experiment, { allowNonEmpty: true })).toEqual(
      [],
    );
  });

  it("rejects the fixture directory itself", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(join(ws.dir, "experiment.json"));
    const problems = await checkOutDir(join(ws.dir, "fixture"), experiment, {
      allowNonEmpty: true,
    });
    expect(problems).toEqual([
      { path: "--out", message: expect.stringContaining("is inside the fixture of task") },
    ]);
  });

  it("rejects a directory inside the fixture whose name starts with two dots", async () => {
    const ws = await withWorkspace();
    const experiment = await loadOk(join(ws.dir, "experiment.json"));
    const problems = await checkOutDir(join(ws.dir, "fixture", "..out"), experiment);
    expect(problems).toEqual([
      { path: "--out", message: expect.stringContaining("is inside the fixture of task") },
    ]);
  });

  it("rejects a directory that links to the fixture", async () => {
    const ws = await withWorkspace();
    await symlink("fixture", join(ws.dir, "out-link"));
    const experiment = await loadOk(join(ws.dir, "experiment.json"));
    const problems = await checkOutDir(join(ws.dir, "out-link"), experiment, {
      allowNonEmpty: true,
    });
    expect(problems.map((p) => p.path)).toEqual(["--out"]);
  });
});

describe("validateManifestForCli", () => {
  it("summarizes a valid manifest", async () => {
    const ws = await withWorkspace();
    const path = join(ws.dir, "experiment.json");
    const report = await validateManifestForCli(path, { trialsOverride: 3 });
    expect(report.ok).toBe(true);
    expect(report.exitCode).toBe(0);
    expect(report.text).toContain(`${path}: valid harness-compare.v1 manifest`);
    expect(report.text).toContain("H0 (baseline): composition readme-baseline [baseline]");
    expect(report.text).toContain("3 per task × variant (lowered from 5 by --trials) = 6 runs");
    expect(report.json).toMatchObject({
      ok: true,
      schemaVersion: "harness-compare.v1",
      problems: [],
      summary: { host: "qoder", tasks: ["task"], totalTrials: 6, verdict: "heuristic-v1" },
    });
  });

  it("lists every problem with its field path", async () => {
    const ws = await withWorkspace();
    const manifest = { ...scriptedV2Manifest(), concurrency: 0, baseline: "nobody" };
    const path = await writeManifest(ws, manifest);
    const report = await validateManifestForCli(path);
    expect(report.exitCode).toBe(1);
    expect(report.text.split("\n")).toEqual([
      `${path}: 2 problems`,
      "  concurrency: 0: expected an integer from 1 to 16",
      '  baseline: "nobody" is not a variant id; expected one of "baseline", "candidate"',
      "",
    ]);
    expect(report.json.problems).toHaveLength(2);
    expect(report.json.summary).toBeUndefined();
  });

  it("checks --out when given", async () => {
    const ws = await withWorkspace();
    const report = await validateManifestForCli(join(ws.dir, "experiment.json"), {
      out: join(ws.dir, "fixture", "out"),
    });
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.path)).toEqual(["--out"]);
  });

  it("prints warnings under a valid summary", async () => {
    const ws = await withWorkspace();
    const report = await validateManifestForCli(await writeManifest(ws, scriptedV2Manifest()), {
      trialsOverride: 1,
    });
    expect(report.ok).toBe(true);
    expect(report.text).toContain("warning: trials.count: 1 trial(s)");
  });
});

describe("docs/manifest.md", () => {
  it("shows only manifests that load", async () => {
    const ws = await withWorkspace();
    for (const file of ["fix-the-bug.harness", "prompt.md", "readme-prompt.md", "contract.json"])
      await writeFile(join(ws.dir, file), "stub\n");
    for (const file of ["baseline.mjs", "verified.mjs"])
      await writeFile(join(ws.dir, "agents", file), "export default async () => '';\n");
    const doc = await readFile(new URL("../../docs/manifest.md", import.meta.url), "utf8");
    const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(examples.length).toBeGreaterThanOrEqual(3);
    for (const [index, example] of examples.entries()) {
      const path = join(ws.dir, `doc-example-${index}.json`);
      await writeFile(path, example);
      const loaded = await loadManifest(path);
      expect(loaded.problems, `example ${index + 1}`).toEqual([]);
    }
  });
});

describe("portable relative paths", () => {
  const pattern = new RegExp(PORTABLE_RELATIVE_PATH_PATTERN);
  const pathPiece = fc.constantFrom("a", "b.txt", ".", "..", "", "C:", "c:x", "\\", "/", "\n", "é");

  it("the published JSON Schema pattern agrees with the loader's rule", () => {
    fc.assert(
      fc.property(fc.array(pathPiece, { maxLength: 6 }), (pieces) => {
        const value = pieces.join("");
        expect(pattern.test(value)).toBe(portablePathProblem(value) === undefined);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    ["./fixture", true],
    ["fixture/src/index.js", true],
    ["..foo", true],
    ["/abs", false],
    ["C:/x", false],
    ["a\\b", false],
    ["a/../b", false],
    ["a//b", false],
    ["a/", false],
    ["", false],
  ])("%j is portable: %s", (value, portable) => {
    expect(portablePathProblem(value) === undefined).toBe(portable);
  });
});

describe("trialArtifactDir", () => {
  it("uses H0/trial-001 for a v1 experiment", () => {
    expect(trialArtifactDir({ layout: "v1" }, "H0", "task", 1)).toBe("H0/trial-001");
    expect(trialArtifactDir({ layout: "v1" }, "H1", "task", 20)).toBe("H1/trial-020");
  });

  it("uses <variant>/<task>/trial-NNN for v2", () => {
    expect(trialArtifactDir({ layout: "v2" }, "careful", "fix-bug", 7)).toBe(
      "careful/fix-bug/trial-007",
    );
    expect(trialArtifactDir({ layout: "v2" }, "careful", "fix-bug", 100)).toBe(
      "careful/fix-bug/trial-100",
    );
  });

  it("refuses a trial index that is not 1-based", () => {
    expect(() => trialArtifactDir({ layout: "v2" }, "a", "b", 0)).toThrow(/positive integer/);
  });
});
