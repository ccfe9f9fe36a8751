// What a new user meets in the first ten minutes: a scaffold that runs at once, validation that
// means "will start", a real host without its SDK or credentials stopped before any trial with
// what to do, and hints where a first command goes wrong.

import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initFiles } from "../../src/cli/init-template.js";
import { compileHarness } from "../../src/language/index.js";
import { resolveComposition } from "../../src/resolver/index.js";
import { runCommand } from "../../src/shared/index.js";
import { runHarness, runHarnessProcess } from "../support/cli.js";
import {
  EXAMPLE_DIR,
  makeExperiment,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

const REPO = resolve(import.meta.dirname, "../..");

let exp: TempExperiment;
beforeAll(async () => {
  exp = await makeExperiment();
});
afterAll(() => exp.cleanup());

/** The environment of a CLI run without any credential of the developer's. */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of Object.keys(env))
    if (/^(ANTHROPIC|OPENAI|CODEX|QODER|CLAUDE_CODE)_/.test(name) && !(name in extra))
      delete env[name];
  return env;
}

describe("harness init", () => {
  it("writes an experiment that validates and runs offline to a verdict at once", async () => {
    const dir = join(exp.base, "scaffold");
    const init = await runHarness(["init", dir]);
    expect(init.exitCode, init.stderr).toBe(0);
    expect((await readdir(dir)).sort()).toEqual([
      "README.md",
      "agents",
      "experiment.json",
      "fixture",
      "prompt.md",
      "setup.harness",
    ]);
    // The commands it prints work as pasted, from anywhere: they name this harnesslab's program
    // (in a clone, `node …/dist/cli/bin.js`), never an `npx harness` that would fetch another.
    const next = init.stdout
      .split("next:\n")[1]!
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
    expect(next).toEqual([
      `cd ${dir}`,
      `node ${join(REPO, "dist", "cli", "bin.js")} compare validate experiment.json`,
      `node ${join(REPO, "dist", "cli", "bin.js")} compare run experiment.json --out runs/1`,
    ]);
    const pasted = await runCommand(["sh", "-c", next.join(" && ")], {
      cwd: exp.base,
      env: process.env,
      timeoutMs: 120_000,
    });
    expect(pasted.exitCode, pasted.stderr).toBe(0);
    expect(pasted.stdout).toMatch(/verdict: accept — careful is better than baseline/);
    // The README explains every file it wrote.
    const readme = await readFile(join(dir, "README.md"), "utf8");
    for (const file of ["experiment.json", "setup.harness", "prompt.md", "fixture/", "agents/"])
      expect(readme).toContain(`\`${file}\``);
  });

  it("writes the manifest for a real host, whose missing credential validate names", async () => {
    const dir = join(exp.base, "scaffold-claude");
    expect((await runHarness(["init", dir, "--host", "claude-code"])).exitCode).toBe(0);
    const manifest = JSON.parse(await readFile(join(dir, "experiment.json"), "utf8"));
    expect(manifest.runtime.host).toBe("claude-code");
    expect(await readdir(dir)).not.toContain("agents");
    const validate = await runHarness(
      ["compare", "validate", join(dir, "experiment.json")],
      process.cwd(),
      bareEnv(),
    );
    expect(validate.exitCode).toBe(1);
    expect(validate.stderr).toContain("1 problem");
    expect(validate.stderr).toContain("set ANTHROPIC_API_KEY");
  });

  it("writes two setups that really differ, for every host it offers: the careful one has components the baseline lacks", async () => {
    for (const host of ["scripted", "claude-code", "codex", "qoder"] as const) {
      const text = initFiles(host, "harness")["setup.harness"]!;
      const { bundle } = compileHarness([{ uri: "setup.harness", text }]);
      const realized = (composition: string) => {
        const { revision } = resolveComposition(bundle!, composition, { host });
        return revision!.realization
          .filter((r) => r.realized !== "unsupported")
          .map((r) => r.componentId)
          .sort();
      };
      expect(realized("baseline"), host).toEqual(["coding-loop"]);
      expect(realized("careful"), host).toEqual([
        "coding-loop",
        "fix-code-not-tests",
        "run-tests-first",
      ]);
    }
  });

  it("refuses a directory that is not empty, and an unknown host", async () => {
    const dir = join(exp.base, "occupied");
    await mkdir(dir);
    await writeFile(join(dir, "mine.txt"), "mine\n");
    const busy = await runHarness(["init", dir]);
    expect(busy.exitCode).toBe(2);
    expect(busy.stderr).toContain("is not empty");
    expect(await readdir(dir)).toEqual(["mine.txt"]);
    const bad = await runHarness(["init", join(exp.base, "x"), "--host", "gemini"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("--host must be one of scripted, claude-code, codex, qoder");
  });
});

describe("validate means will start", () => {
  it("reports a composition the host cannot realize, as run refuses it", async () => {
    const harness = (await readFile(join(exp.dir, "compare.harness"), "utf8")).replace(
      "require careful { minimum advisory }",
      "require careful { minimum enforced }",
    );
    await writeFile(join(exp.dir, "strict.harness"), harness);
    const manifest = await exp.writeManifest(
      syntheticManifest({ harness: "./strict.harness" }),
      "strict.json",
    );
    const validate = await runHarness(["compare", "validate", manifest]);
    expect(validate.exitCode).toBe(1);
    const run = await runHarness(["compare", "run", manifest, "--out", join(exp.base, "strict")]);
    expect(run.exitCode).toBe(2);
    const problem = /careful[^\n]*enforced[^\n]*/.exec(run.stderr)?.[0];
    expect(problem).toBeDefined();
    expect(validate.stderr).toContain("careful");
  });

  it("reports an agent module that does not load, at its file and line, and run stops before any trial", async () => {
    await exp.writeAgent(
      "unfinished.mjs",
      "export default async function agent({ tools }) {\n  return (\n",
    );
    const manifest = await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "broken", composition: "careful", agent: "./agents/unfinished.mjs" },
        ],
      }),
      "unfinished.json",
    );
    // A process of its own: the test runner loads modules its own way, without Node's errors.
    const validate = await runHarnessProcess(["compare", "validate", manifest]);
    expect(validate.exitCode).toBe(1);
    expect(validate.stderr).toMatch(
      /variants\[1\]\.agent: agent module unfinished\.mjs:3 failed to load: SyntaxError: /,
    );
    const out = join(exp.base, "unfinished");
    const run = await runHarness(["compare", "run", manifest, "--out", out]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("cannot load the agents");
    await expect(readdir(out)).rejects.toThrow();
  });

  it("stops a real host without credentials before any trial, naming the variable, and writes nothing", async () => {
    const manifest = join(EXAMPLE_DIR, "experiment.claude.json");
    const out = join(exp.base, "no-credentials");
    const run = await runHarness(
      ["compare", "run", manifest, "--out", out],
      process.cwd(),
      bareEnv(),
    );
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("the claude-code host cannot start here");
    expect(run.stderr).toContain("set ANTHROPIC_API_KEY");
    await expect(readdir(out)).rejects.toThrow();
  });

  it("says when a configured endpoint does not answer", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const validate = await runHarness(
      ["compare", "validate", join(EXAMPLE_DIR, "experiment.claude.json")],
      process.cwd(),
      bareEnv({ ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` }),
    );
    expect(validate.exitCode).toBe(1);
    expect(validate.stderr).toContain(
      `ANTHROPIC_BASE_URL=http://127.0.0.1:${port} cannot be reached`,
    );
  });
});

describe("hints for a first command that goes wrong", () => {
  it("a .harness file given to compare run: pass an experiment manifest", async () => {
    const run = await runHarness([
      "compare",
      "run",
      join(EXAMPLE_DIR, "fix-the-bug.harness"),
      "--out",
      join(exp.base, "h"),
    ]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("this is a .harness source (an agent setup), not an experiment");
  });

  it("harness run: did you mean harness compare run", async () => {
    const run = await runHarness(["run", "experiment.json"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("did you mean `harness compare run`?");
  });

  it("an --out that holds a run: add --resume", async () => {
    const out = join(exp.base, "earlier");
    expect((await runHarness(["compare", "run", exp.manifestPath, "--out", out])).exitCode).toBe(0);
    const again = await runHarness(["compare", "run", exp.manifestPath, "--out", out]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain("holds a run already (manifest.json); add --resume");
  });
});

describe("the console says what went wrong", () => {
  it("shows a scripted agent that threw as the experiment's error, with the first line of its error; a variant that only crashed never gives accept", async () => {
    await exp.writeAgent(
      "throws.mjs",
      'export default async () => { throw new TypeError("tools.reed is not a function\\n    at agent"); };\n',
    );
    const manifest = await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "nop" },
          { id: "broken", composition: "careful", agent: "./agents/throws.mjs" },
        ],
      }),
      "throws.json",
    );
    const run = await runHarness(["compare", "run", manifest, "--out", join(exp.base, "throws")]);
    expect(run.stderr).toMatch(
      /broken\/fix-value #\d: the experiment's scripted agent failed \(fix it; the trial does not count\): the scripted agent threw: tools\.reed is not a function\n/,
    );
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/^verdict: infrastructure_error/m);
    // Where in the agent's own files: its stack's frame in the module.
    await exp.writeAgent(
      "throws-deep.mjs",
      'function step() {\n  throw new Error("lost the plot");\n}\nexport default async () => step();\n',
    );
    const deep = join(exp.dir, "throws-deep.json");
    await writeFile(
      deep,
      JSON.stringify(
        syntheticManifest({
          variants: [
            { id: "baseline", composition: "plain", agent: "nop" },
            { id: "broken", composition: "careful", agent: "./agents/throws-deep.mjs" },
          ],
        }),
      ),
    );
    const deepRun = await runHarnessProcess([
      "compare",
      "run",
      deep,
      "--out",
      join(exp.base, "throws-deep"),
    ]);
    expect(deepRun.stderr).toMatch(
      /the scripted agent threw: lost the plot \(at throws-deep\.mjs:2:9\)/,
    );
  });

  it("prints the top causes of infrastructure errors under the verdict", async () => {
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
      "crashing-agents.json",
    );
    const run = await runHarness(["compare", "run", manifest, "--out", join(exp.base, "infra")]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(
      /infrastructure errors: 4 × scripted_agent_failed \(the scripted agent threw: boom \(at crashes\.mjs:1:36\)\)/,
    );
  });
});
