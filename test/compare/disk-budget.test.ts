// A trial's disk use is bounded, and a full disk is never blamed on an honest trial. Real files,
// real commands in the real sandbox; the full disk is a real, small tmpfs the harness runs on.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrialMetrics, VerdictDocument } from "../../src/artifacts/index.js";
import { diskUsage, isDiskFull, WorkspaceError } from "../../src/workspace/index.js";
import {
  makeExperiment,
  readJson,
  runManifest,
  SYNTHETIC_FIXTURE,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

const REPO = resolve(import.meta.dirname, "../..");
const CLI = join(REPO, "src", "cli", "bin.ts");

// Writes 1 MiB files into the trial until it is stopped (or the disk is full), never deleting.
const FILL = `import { mkdirSync, writeFileSync } from "node:fs";
mkdirSync("fill", { recursive: true });
const chunk = Buffer.alloc(1024 * 1024, 7);
for (let i = 0; ; i += 1) {
  try { writeFileSync(\`fill/\${i}.bin\`, chunk); } catch (error) { console.log("stopped writing: " + error.code); break; }
  if (i % 16 === 15) await new Promise((resolve) => setTimeout(resolve, 5));
}
`;

const FILLER_AGENT = `export default async function filler({ tools }) {
  await tools.write("src/value.txt", "fixed\\n");
  await tools.bash("node fill.mjs");
  return "filled the disk";
}
`;

const FIXTURE = { ...SYNTHETIC_FIXTURE, "fill.mjs": FILL };

describe("the disk budget", () => {
  let exp: TempExperiment;
  let verdict: VerdictDocument;
  beforeAll(async () => {
    exp = await makeExperiment({ fixture: FIXTURE, agents: { "filler.mjs": FILLER_AGENT } });
    await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "baseline", composition: "plain", agent: "./agents/fixer.mjs" },
          { id: "filler", composition: "careful", agent: "./agents/filler.mjs" },
        ],
        runtime: {
          host: "scripted",
          timeoutMs: 60000,
          validationCommands: [
            ["node", "check.mjs"],
            ["node", "fill.mjs"],
          ],
        },
        diskBudgetMB: 24,
      }),
    );
    ({ verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
    }));
  }, 120_000);
  afterAll(() => exp.cleanup());

  it("stops a trial that writes past it, and fails it saying so", () => {
    const filled = verdict.trials.filter((t) => t.variant === "filler");
    expect(filled).toHaveLength(2);
    for (const trial of filled) {
      expect(trial.outcome).toBe("failed");
      expect(trial.explanation).toMatch(
        /^disk budget exceeded: the trial took \d+ MiB on disk while its agent ran, over its budget of 24 MiB \(diskBudgetMB\); it was stopped$/,
      );
      expect(trial.infraReason).toBeNull();
    }
  });

  it("grades the honest trials beside it as they would be alone", () => {
    for (const trial of verdict.trials.filter((t) => t.variant === "baseline"))
      expect(trial).toMatchObject({ outcome: "passed", changedFiles: ["src/value.txt"] });
  });

  it("leaves none of the written files behind", async () => {
    expect(await diskUsage(exp.trialsDir)).toBeLessThan(1024 * 1024);
  });

  it("holds the grading copies to it too: a grader running the trial's code that fills the disk fails the trial", async () => {
    const task = (syntheticManifest().tasks as Array<Record<string, unknown>>)[0]!;
    const manifest = await exp.writeManifest(
      syntheticManifest({
        tasks: [
          {
            ...task,
            graders: [
              { kind: "command", id: "fill", argv: ["node", "fill.mjs"], timeoutMs: 60000 },
            ],
          },
        ],
        diskBudgetMB: 24,
        trials: { count: 1, seed: 1 },
      }),
      "grader-fills.json",
    );
    const { verdict: graded } = await runManifest(manifest, {
      outDir: exp.freshOut("grader-fills"),
      tempParent: exp.trialsDir,
    });
    for (const trial of graded.trials) {
      expect(trial.outcome).toBe("failed");
      expect(trial.explanation).toBe("failed checks: fill/disk-budget");
    }
  }, 120_000);
});

describe("a full disk", () => {
  it("is the harness's infrastructure error (disk_full), whatever step meets it", () => {
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
    });
    expect(isDiskFull(enospc)).toBe(true);
    expect(
      isDiskFull(
        new WorkspaceError("git-failed", "git update-index exited with 128", {
          stderrTail: "fatal: unable to write new index file: No space left on device",
        }),
      ),
    ).toBe(true);
    expect(isDiskFull(new Error("EACCES: permission denied"))).toBe(false);
  });
});

/**
 * The scenario of issue 21: one trial fills the disk while an honest trial beside it finishes,
 * then deletes its files. The harness runs on a 600 MiB tmpfs (its trials' temporary
 * directory), without the sandbox (a sandbox does not start inside this one); gates order the
 * steps, so nothing depends on timing.
 */
describe("another trial's disk fill", () => {
  const gates = (dir: string) => ({
    ready: join(dir, "honest-ready"),
    full: join(dir, "disk-full"),
  });
  const AGENT = (
    gate: string,
    out: string,
  ) => `import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
const gate = ${JSON.stringify(gate)};
const until = async (path) => { while (!existsSync(path)) await sleep(20); };
export default async function gated({ tools, trial, cwd }) {
  const write = await tools.write("src/value.txt", "fixed\\n");
  if (!write.ok) return "refused";
  if (trial.index !== 1) return "fixed";
  if (trial.variant === "honest") {
    writeFileSync(join(gate, "honest-ready"), "");
    await until(join(gate, "disk-full"));
    return "fixed";
  }
  await until(join(gate, "honest-ready"));
  await tools.bash("node fill.mjs");
  writeFileSync(join(gate, "disk-full"), "");
  // Holds the disk until the honest trial's record is written, then frees it.
  await until(${JSON.stringify(join(out, "honest", "fix-value", "trial-001", "metrics.json"))});
  rmSync(join(cwd, "fill"), { recursive: true, force: true });
  return "fixed";
}
`;

  let exp: TempExperiment;
  let out: string;
  let stderr: string;
  let code: number | null;
  beforeAll(async () => {
    exp = await makeExperiment({ fixture: FIXTURE });
    const gate = join(exp.base, "gates");
    await mkdir(gate);
    out = exp.freshOut("full-disk");
    await exp.writeAgent("gated.mjs", AGENT(gate, out));
    await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "honest", composition: "plain", agent: "./agents/gated.mjs" },
          { id: "filler", composition: "careful", agent: "./agents/gated.mjs" },
        ],
        baseline: "honest",
        runtime: {
          host: "scripted",
          timeoutMs: 120000,
          validationCommands: [
            ["node", "check.mjs"],
            ["node", "fill.mjs"],
          ],
        },
        trials: { count: 2, seed: 1, order: "sequential" },
        concurrency: 2,
      }),
    );
    const small = join(exp.base, "small-tmp");
    await mkdir(small);
    ({ code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = spawn(
        "bwrap",
        [
          ...["--bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc"],
          ...["--size", String(600 * 1024 * 1024), "--tmpfs", small],
          "--",
          process.execPath,
          "--import",
          "tsx",
          CLI,
          ...["compare", "run", exp.manifestPath, "--out", out, "--unsafe-no-sandbox"],
        ],
        { cwd: REPO, env: { ...process.env, TMPDIR: small }, stdio: ["ignore", "ignore", "pipe"] },
      );
      let text = "";
      child.stderr?.on("data", (chunk) => {
        text += chunk;
      });
      child.on("close", (exit) => done({ code: exit, stderr: text }));
    }));
    expect(existsSync(gates(gate).full), stderr).toBe(true);
  }, 240_000);
  afterAll(() => exp.cleanup());

  it("makes the honest trial's capture an infrastructure error (disk_full), never its own failure", async () => {
    const honest = (await readJson(
      out,
      join("honest", "fix-value", "trial-001", "metrics.json"),
    )) as TrialMetrics;
    expect(honest.outcome, stderr).toBe("infrastructure_error");
    expect(honest.infraReason).toBe("disk_full");
    expect(honest.explanation).toMatch(
      /^disk_full: cannot capture the trial's change: .*(No space left on device|ENOSPC)/,
    );
  });

  it("starts no trial while the disk is full: the next one waits, saying why, and then runs", async () => {
    expect(stderr).toMatch(
      /disk: only \d+ MiB free in .*small-tmp, below the 256 MiB a trial starts with: trial \d+ waits for space/,
    );
    const verdict = (await readJson(out, "verdict.json")) as VerdictDocument;
    const others = verdict.trials.filter((t) => !(t.variant === "honest" && t.trial === 1));
    expect(others.map((t) => t.outcome)).toEqual(["passed", "passed", "passed"]);
    expect(code).toBe(0);
  });

  it("runs the honest trial again on --resume --retry-infra, and it passes", async () => {
    const resumed = await new Promise<number | null>((done) => {
      const child = spawn(
        process.execPath,
        [
          ...["--import", "tsx", CLI],
          ...["compare", "run", exp.manifestPath, "--out", out, "--unsafe-no-sandbox"],
          ...["--resume", "--retry-infra", "1"],
        ],
        { cwd: REPO, env: { ...process.env, TMPDIR: exp.trialsDir }, stdio: "ignore" },
      );
      child.on("close", done);
    });
    expect(resumed).toBe(0);
    const honest = JSON.parse(
      await readFile(join(out, "honest", "fix-value", "trial-001", "metrics.json"), "utf8"),
    ) as TrialMetrics;
    expect(honest.outcome).toBe("passed");
    expect(honest.retriedAttempts.map((a) => a.infraReason)).toEqual(["disk_full"]);
  }, 120_000);
});
