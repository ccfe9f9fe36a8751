// The setup-compare example end to end: setups that differ in a skill folder and a stdio MCP
// server, materialized per trial by the scripted host, with setup.json as the evidence of what
// the host loaded and used; a setup that fails to load, an agent that goes for the materialized
// files, and a regrade that never materializes anything.
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  setupDocumentSchema,
  type TrialMetrics,
  trialMetricsSchema,
  type VerdictDocument,
  verdictDocumentSchema,
} from "../../src/api/compare.js";
import { runHarness } from "../support/cli.js";
import { runManifest } from "../support/experiment.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/setup-compare/", import.meta.url));

let base: string;
let out: string;
let verdict: VerdictDocument;
let metrics: TrialMetrics[];
let runStderr: string;

async function trialDirs(root: string): Promise<string[]> {
  const dirs: string[] = [];
  for (const variant of ["bare", "with-skill", "with-rates", "with-both"])
    for (const task of ["format-price", "convert-price"]) {
      const taskDir = join(root, variant, task);
      for (const trial of await readdir(taskDir).catch(() => [] as string[]))
        if (trial.startsWith("trial-")) dirs.push(join(taskDir, trial));
    }
  return dirs;
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-setup-compare-"));
  out = join(base, "out");
  const run = await runHarness([
    "compare",
    "run",
    join(EXAMPLE, "experiment.json"),
    "--trials",
    "1",
    "--out",
    out,
  ]);
  runStderr = run.stderr;
  expect(run.stdout).toContain("verdict:");
  verdict = verdictDocumentSchema.parse(
    JSON.parse(await readFile(join(out, "verdict.json"), "utf8")),
  );
  metrics = [];
  for (const dir of await trialDirs(out))
    metrics.push(
      trialMetricsSchema.parse(JSON.parse(await readFile(join(dir, "metrics.json"), "utf8"))),
    );
}, 240_000);

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe("examples/setup-compare: what each setup hands the agent decides its outcome", () => {
  it("each variant passes exactly the task its setup carries what it needs for", () => {
    const outcome = (variant: string, task: string) =>
      metrics.find((m) => m.variant === variant && m.task === task)?.outcome;
    expect(metrics).toHaveLength(8);
    expect([outcome("bare", "format-price"), outcome("bare", "convert-price")]).toEqual([
      "failed",
      "failed",
    ]);
    expect([outcome("with-skill", "format-price"), outcome("with-skill", "convert-price")]).toEqual(
      ["passed", "failed"],
    );
    expect([outcome("with-rates", "format-price"), outcome("with-rates", "convert-price")]).toEqual(
      ["failed", "passed"],
    );
    expect([outcome("with-both", "format-price"), outcome("with-both", "convert-price")]).toEqual([
      "passed",
      "passed",
    ]);
    expect(runStderr).not.toMatch(/infra errors [1-9]/);
  });

  it("the verdict says per variant what the host loaded, and how often the MCP tools were called", async () => {
    const setupOf = (id: string) => verdict.variants.find((v) => v.id === id)?.setup;
    expect(setupOf("bare")).toBeUndefined();
    expect(setupOf("with-skill")).toEqual([
      {
        component: "house-style",
        mechanism: "native-skill",
        loaded: 2,
        failed: 0,
        unconfirmed: 0,
        notRun: 0,
        toolCalls: 0,
      },
    ]);
    expect(setupOf("with-both")).toEqual([
      {
        component: "house-style",
        mechanism: "native-skill",
        loaded: 2,
        failed: 0,
        unconfirmed: 0,
        notRun: 0,
        toolCalls: 0,
      },
      {
        component: "rates",
        mechanism: "mcp-server",
        loaded: 2,
        failed: 0,
        unconfirmed: 0,
        notRun: 0,
        toolCalls: 1,
      },
    ]);
    const markdown = await readFile(join(out, "verdict.md"), "utf8");
    expect(markdown).toContain("## Setup as materialized");
    expect(markdown).toContain("| with-rates | `rates` | mcp-server | 2 of 2 trials |  | 1 |");
    const html = await readFile(join(out, "verdict.html"), "utf8");
    expect(html).toContain('id="setup-table"');
  });

  it("each trial of a setup keeps setup.json: files with hashes, the host's report, the tools it called", async () => {
    const convert = join(out, "with-rates", "convert-price", "trial-001");
    const document = setupDocumentSchema.parse(
      JSON.parse(await readFile(join(convert, "setup.json"), "utf8")),
    );
    expect(document).toMatchObject({
      host: "scripted",
      components: [
        {
          id: "rates",
          kind: "tool",
          mechanism: "mcp-server",
          planned: "wired",
          onDegrade: "fail",
          status: "loaded",
          files: [{ path: "server.mjs", sha256: expect.stringMatching(/^sha256:/) }],
          intactAfterRun: true,
          host: { status: "loaded", tools: ["mcp__rates__exchange_rate"] },
          toolCalls: { mcp__rates__exchange_rate: 1 },
        },
      ],
    });
    const bare = join(out, "bare", "convert-price", "trial-001");
    await expect(readFile(join(bare, "setup.json"))).rejects.toMatchObject({ code: "ENOENT" });
    // Without the server, the same call is an unknown tool, denied.
    const toolUse = JSON.parse(await readFile(join(bare, "tool-use.json"), "utf8"));
    expect(toolUse.calls[0]).toMatchObject({ tool: "mcp__rates__exchange_rate", decision: "deny" });
  });

  it("nothing of the setup reaches a patch", async () => {
    for (const dir of await trialDirs(out)) {
      const patch = await readFile(join(dir, "patch.diff"), "utf8");
      const files = [...patch.matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1]);
      expect(files.every((f) => f === "src/money.js")).toBe(true);
      expect(patch).not.toContain("SKILL.md");
    }
  });

  it("a regrade re-grades the patches and keeps the setup evidence as the trials recorded it", async () => {
    const before = await readFile(
      join(out, "with-both", "convert-price", "trial-001", "setup.json"),
      "utf8",
    );
    const regrade = await runHarness(["compare", "regrade", out]);
    expect(regrade.exitCode).toBeLessThan(2);
    const after = await readFile(
      join(out, "with-both", "convert-price", "trial-001", "setup.json"),
      "utf8",
    );
    expect(after).toBe(before);
    const document = verdictDocumentSchema.parse(
      JSON.parse(await readFile(join(out, "verdict.regrade-001.json"), "utf8")),
    );
    expect(document.variants.find((v) => v.id === "with-both")?.setup).toEqual(
      verdict.variants.find((v) => v.id === "with-both")?.setup,
    );
  });
});

describe("a setup the host cannot load", () => {
  it("is each trial's infrastructure error setup_failed (on-degrade fail), with the server's own words", async () => {
    const dir = join(base, "broken");
    await cp(EXAMPLE, dir, { recursive: true });
    await writeFile(
      join(dir, "mcp", "rates", "server.mjs"),
      'console.error("rates database unreachable"); process.exit(4);\n',
    );
    const manifest = JSON.parse(await readFile(join(dir, "experiment.json"), "utf8"));
    manifest.variants = manifest.variants.filter((v: { id: string }) =>
      ["bare", "with-rates"].includes(v.id),
    );
    manifest.tasks = manifest.tasks.filter((t: { id: string }) => t.id === "convert-price");
    await writeFile(join(dir, "experiment.json"), JSON.stringify(manifest));
    const cli = await runHarness([
      "compare",
      "run",
      join(dir, "experiment.json"),
      "--trials",
      "1",
      "--out",
      join(base, "broken-out"),
    ]);
    expect(cli.stderr).toMatch(
      /with-rates\/convert-price #1: the variant's setup did not load \(the trial does not count\): .*rates database unreachable/,
    );
    const broken = verdictDocumentSchema.parse(
      JSON.parse(await readFile(join(base, "broken-out", "verdict.json"), "utf8")),
    );
    const trial = broken.trials.find((t) => t.variant === "with-rates");
    expect(trial).toMatchObject({ outcome: "infrastructure_error", infraReason: "setup_failed" });
    expect(trial?.explanation).toMatch(
      /rates \(mcp-server\): the MCP server did not start.*exited with 4.*rates database unreachable/s,
    );
    expect(broken.variants.find((v) => v.id === "with-rates")?.setup).toEqual([
      {
        component: "rates",
        mechanism: "mcp-server",
        loaded: 0,
        failed: 1,
        unconfirmed: 0,
        notRun: 0,
        toolCalls: 0,
      },
    ]);
  }, 120_000);
});

describe("an agent that goes for the materialized setup", () => {
  it("cannot change it: its tools are denied, and its code under npm test does not see it", async () => {
    const dir = join(base, "attack");
    await cp(EXAMPLE, dir, { recursive: true });
    await writeFile(
      join(dir, "agents", "shop-agent.mjs"),
      `export default async ({ setup, tools }) => {
  const skill = setup.components.find((c) => c.skill);
  const target = skill.path + "/SKILL.md";
  const denied = await tools.write(target, "pwned");
  // Its code, run by npm test in the sandbox, tries too.
  await tools.write("src/money.js", \`import { writeFileSync } from "node:fs";
try { writeFileSync(\${JSON.stringify(target)}, "pwned"); } catch {}
export const total = (a) => a.reduce((s, c) => s + c, 0);
export const formatPrice = () => "";
export const usdToEur = () => 0;
\`);
  await tools.bash("npm test");
  return JSON.stringify({ denied: denied.denied });
};
`,
    );
    const manifest = JSON.parse(await readFile(join(dir, "experiment.json"), "utf8"));
    manifest.variants = manifest.variants.filter((v: { id: string }) =>
      ["bare", "with-skill"].includes(v.id),
    );
    manifest.variants[0].agent = "nop";
    manifest.tasks = manifest.tasks.filter((t: { id: string }) => t.id === "format-price");
    await writeFile(join(dir, "experiment.json"), JSON.stringify(manifest));
    const attackOut = join(base, "attack-out");
    await runManifest(join(dir, "experiment.json"), { outDir: attackOut, trials: 1 });
    const trialDir = join(attackOut, "with-skill", "format-price", "trial-001");
    expect(JSON.parse(await readFile(join(trialDir, "response.txt"), "utf8"))).toEqual({
      denied: true,
    });
    const document = setupDocumentSchema.parse(
      JSON.parse(await readFile(join(trialDir, "setup.json"), "utf8")),
    );
    expect(document.components[0]).toMatchObject({ id: "house-style", intactAfterRun: true });
    const trialMetrics = trialMetricsSchema.parse(
      JSON.parse(await readFile(join(trialDir, "metrics.json"), "utf8")),
    );
    expect(trialMetrics.outcome).toBe("failed");
    expect(trialMetrics.graders.map((g) => g.grader)).not.toContain("setup-intact");
    expect(await readFile(join(dir, "skills", "house-style", "SKILL.md"), "utf8")).toContain(
      "House style",
    );
  }, 120_000);
});
