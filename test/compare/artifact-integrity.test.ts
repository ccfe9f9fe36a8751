// Artifacts stay valid, honest evidence whatever the agent's text contains, and --resume
// reuses trials only when everything they depended on is unchanged.
import { appendFile, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { regradeRun, trialMetricsSchema } from "../../src/compare/index.js";
import { type Executor, ScriptedExecutor } from "../../src/exec/index.js";
import {
  listFiles,
  makeExperiment,
  runManifest,
  syntheticManifest,
  type TempExperiment,
  TRIAL_FILES,
} from "../support/experiment.js";

const experiments: TempExperiment[] = [];
afterAll(async () => {
  await Promise.all(experiments.map((e) => e.cleanup()));
});

async function experiment(
  agents: Record<string, string> = {},
  manifest: unknown = syntheticManifest(),
) {
  const exp = await makeExperiment({ agents, manifest });
  experiments.push(exp);
  return exp;
}

const CHATTY_AGENT = `
export default async ({ tools }) => {
  await tools.write("src/value.txt", "42\\n");
  return 'done; config was password="hunter2" and token=abc "quoted" \\\\ backslash';
};
`;

describe("JSON artifacts", () => {
  it("stay valid JSON when the agent's text contains quotes, backslashes and credential-looking pairs, and the secret is masked", async () => {
    const exp = await experiment(
      { "chatty.mjs": CHATTY_AGENT },
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "fixer", composition: "careful", agent: "./agents/chatty.mjs" },
        ],
      }),
    );
    await runManifest(exp.manifestPath, { outDir: exp.outDir, tempParent: exp.trialsDir });
    const files = (await listFiles(exp.outDir)).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      const text = await readFile(join(exp.outDir, file), "utf8");
      expect(() => JSON.parse(text), file).not.toThrow();
      expect(text, file).not.toContain("hunter2");
    }
    const receipt = JSON.parse(
      await readFile(join(exp.outDir, "fixer/fix-value/trial-001/runtime-receipt.json"), "utf8"),
    );
    expect(receipt.finalText).toContain('"quoted" \\ backslash');
  });
});

describe("patch.diff", () => {
  it("masks only exact secret values, says so in metrics.json, and regrade keeps such a trial as recorded", async () => {
    const secret = "sk-test-0123456789abcdefSECRET";
    const leaky = `
export default async ({ tools }) => {
  await tools.write("src/value.txt", "42\\n// ${secret}\\n// ?api_key=demo\\n");
  return "done";
};
`;
    const exp = await experiment(
      { "leaky.mjs": leaky },
      syntheticManifest({
        tasks: [
          {
            id: "fix-value",
            fixture: "./fixture",
            prompt: "./prompt.md",
            expectedFiles: ["src/value.txt"],
            graders: [{ kind: "scope", mode: "subset" }],
          },
        ],
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "fixer", composition: "careful", agent: "./agents/leaky.mjs" },
        ],
      }),
    );
    process.env.FAKE_API_KEY = secret;
    try {
      await runManifest(exp.manifestPath, { outDir: exp.outDir, tempParent: exp.trialsDir });
    } finally {
      delete process.env.FAKE_API_KEY;
    }
    const dir = join(exp.outDir, "fixer/fix-value/trial-001");
    const patch = await readFile(join(dir, "patch.diff"), "utf8");
    expect(patch).not.toContain(secret);
    expect(patch).toContain("[REDACTED]");
    // Only exact secret values are masked in a patch: other text stays byte for byte.
    expect(patch).toContain("?api_key=demo");
    const metrics = trialMetricsSchema.parse(
      JSON.parse(await readFile(join(dir, "metrics.json"), "utf8")),
    );
    expect(metrics.patchRedacted).toBe(true);

    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(result.notes.join("\n")).toContain("fixer/fix-value/trial-001: kept as recorded");
    expect(result.changes).toEqual([]);
  });
});

describe("--resume", () => {
  it("refuses when the prompt changed since the earlier run", async () => {
    const exp = await experiment();
    await runManifest(exp.manifestPath, { outDir: exp.outDir, tempParent: exp.trialsDir });
    await writeFile(join(exp.dir, "prompt.md"), "A different task.\n");
    await expect(
      runManifest(exp.manifestPath, {
        outDir: exp.outDir,
        tempParent: exp.trialsDir,
        resume: true,
      }),
    ).rejects.toThrow(/different inputs/);
  });

  it("refuses when a scripted agent module changed since the earlier run", async () => {
    const exp = await experiment();
    await runManifest(exp.manifestPath, { outDir: exp.outDir, tempParent: exp.trialsDir });
    const agent = join(exp.dir, "agents", "fixer.mjs");
    await writeFile(agent, `${await readFile(agent, "utf8")}\n// changed\n`);
    await expect(
      runManifest(exp.manifestPath, {
        outDir: exp.outDir,
        tempParent: exp.trialsDir,
        resume: true,
      }),
    ).rejects.toThrow(/different inputs/);
  });
});

describe("code outside the sandbox that writes the run's shared packs", () => {
  it("is the run's fixture changed (fixture_changed, no verdict), not the trial's failure", async () => {
    const exp = await experiment();
    const inner = new ScriptedExecutor();
    let calls = 0;
    // In-process, as the experimenter's scripted agent modules run: no sandbox keeps it from the
    // packs its trial's repository links to.
    const damaging: Executor = {
      host: "scripted",
      async run(input) {
        calls += 1;
        const receipt = await inner.run(input);
        if (calls === 1) {
          const packDir = join(input.cwd, ".git", "objects", "pack");
          const pack = (await readdir(packDir)).find((name) => name.endsWith(".pack"))!;
          await appendFile(join(packDir, pack), "x");
        }
        return receipt;
      },
    };
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => damaging,
      concurrency: 1,
    });
    const first = verdict.trials.find((t) => t.seq === 1)!;
    expect(first).toMatchObject({
      outcome: "infrastructure_error",
      infraReason: "fixture_changed",
    });
    expect(first.explanation).toMatch(/shared baseline of the fixture changed/);
    expect(verdict.fixturesUnchanged).toBe(false);
    expect(verdict.status).toBe("infrastructure_error");
  });
});

describe("a trial that breaks the harness in an unexpected way", () => {
  it("is recorded as that trial's infrastructure error (harness_error) and the run goes on", async () => {
    const exp = await experiment();
    const inner = new ScriptedExecutor();
    let calls = 0;
    const sabotaging: Executor = {
      host: "scripted",
      async run(input) {
        calls += 1;
        if (calls === 1) {
          // A receipt that is not one: classification cannot work with it.
          return null as unknown as Awaited<ReturnType<Executor["run"]>>;
        }
        return inner.run(input);
      },
    };
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      executorFor: () => sabotaging,
      concurrency: 1,
    });
    expect(verdict.trials).toHaveLength(4);
    const broken = verdict.trials.filter((t) => t.infraReason === "harness_error");
    expect(broken).toHaveLength(1);
    expect(broken[0]!.explanation).toMatch(/^harness error: /);
    // Its folder still has every file a trial folder has, and records it as finished.
    const dir = join(exp.outDir, broken[0]!.artifactDir);
    expect((await readdir(dir)).sort()).toEqual([...TRIAL_FILES].sort());
    expect(await readFile(join(dir, "stderr.txt"), "utf8")).toMatch(/^harness error: /);
    expect(JSON.parse(await readFile(join(dir, "runtime-receipt.json"), "utf8"))).toBeNull();
  });
});

describe("changed files", () => {
  it("count a fixture file whose change git was made not to see (a forged object store), and the scope grader fails", async () => {
    // Agent code (as a validation command would run it without the sandbox) rewrites README.md
    // and overwrites the baseline's blob for it with the new content, so `git diff` against the
    // baseline sees nothing. A baseline shared by the run is packed, its packs linked into every
    // trial: the forger moves its own links aside and unpacks them into loose objects of its own
    // first, never writing the packs.
    const forger = `
import { execFileSync } from "node:child_process";
import { copyFileSync, chmodSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
export default async ({ cwd, tools }) => {
  await tools.write("src/value.txt", "fixed\\n");
  const git = (...args) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
  const oldBlob = git("rev-parse", "HEAD:README.md");
  const objects = join(cwd, ".git", "objects");
  const target = join(objects, oldBlob.slice(0, 2), oldBlob.slice(2));
  if (!existsSync(target)) {
    const packDir = join(objects, "pack");
    const aside = readdirSync(packDir).map((name) => {
      renameSync(join(packDir, name), join(cwd, ".git", name));
      return join(cwd, ".git", name);
    });
    for (const pack of aside.filter((path) => path.endsWith(".pack")))
      execFileSync("git", ["unpack-objects", "-q"], { cwd, input: readFileSync(pack) });
    for (const path of aside) rmSync(path, { force: true });
  }
  writeFileSync(join(cwd, "README.md"), "# rewritten behind the harness's back\\n");
  const newBlob = git("hash-object", "-w", "README.md");
  chmodSync(target, 0o644);
  copyFileSync(join(objects, newBlob.slice(0, 2), newBlob.slice(2)), target);
  return "done";
};
`;
    const exp = await experiment(
      { "forger.mjs": forger },
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "fixer", composition: "careful", agent: "./agents/forger.mjs" },
        ],
      }),
    );
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
    });
    const forged = verdict.trials.find((t) => t.variant === "fixer" && t.trial === 1)!;
    expect(forged.changedFiles).toEqual(["README.md", "src/value.txt"]);
    expect(forged.outcome).toBe("failed");
    const stderr = await readFile(join(exp.outDir, forged.artifactDir, "stderr.txt"), "utf8");
    expect(stderr).toContain(
      "files changed that git did not report (counted as changed): README.md",
    );
  });
});

describe("--stop-early", () => {
  it("stops starting trials once the status is settled, and says so; without it every trial runs", async () => {
    const manifest = syntheticManifest({
      trials: { count: 12, seed: 1, order: "sequential" },
      concurrency: 1,
      verdict: { policy: "paired-v1", alpha: 0.05, minTrials: 2, maxCostRatio: 1.25 },
    });
    const early = await experiment({}, manifest);
    const { verdict } = await runManifest(early.manifestPath, {
      outDir: early.outDir,
      tempParent: early.trialsDir,
      stopEarly: true,
    });
    expect(verdict.status).toBe("accept");
    expect(verdict.trials.length).toBeLessThan(24);
    expect(verdict.reason).toMatch(
      /^stopped early after \d+ of 24 trials, the status being settled: /,
    );

    const full = await experiment({}, manifest);
    const complete = await runManifest(full.manifestPath, {
      outDir: full.outDir,
      tempParent: full.trialsDir,
    });
    expect(complete.verdict.trials).toHaveLength(24);
    expect(complete.verdict.status).toBe("accept");
  });
});
