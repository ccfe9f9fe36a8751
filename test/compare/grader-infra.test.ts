// Which grader failures are the environment's (an infrastructure error) and which the agent's.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadHarnessCatalog, loadManifest } from "../../src/compare/index.js";
import { missingGraderPrograms } from "../../src/compare/manifest/index.js";
import {
  gradeInfrastructureProblem,
  type PreparedGrader,
} from "../../src/compare/trial/graders.js";
import type { Grade } from "../../src/graders/index.js";
import { runHarness } from "../support/cli.js";
import { makeExperiment, syntheticManifest } from "../support/experiment.js";

const command: PreparedGrader = {
  id: "check",
  kind: "command",
  grader: { id: "check", grade: async () => ({}) as Grade } as unknown as PreparedGrader["grader"],
  contractHash: null,
  usesCopy: true,
};

function spawnFailure(program: string): Grade {
  return {
    grader: "check",
    score: 0,
    passed: false,
    checks: [
      {
        id: "check",
        passed: false,
        detail: `could not start ${program}`,
        evidence: { argv: [program, "--test"], spawnError: "spawn ENOENT" },
      },
    ],
  } as unknown as Grade;
}

describe("gradeInfrastructureProblem", () => {
  it("blames the environment for a program missing from PATH or at an absolute path", () => {
    for (const program of ["no-such-program", "/opt/ci/bin/run-tests", "C:\\ci\\run.exe"])
      expect(gradeInfrastructureProblem(command, spawnFailure(program)), program).toBe(
        `could not start ${program}: spawn ENOENT`,
      );
  });

  it("blames the agent for a program at a path inside the trial, which it may have removed", () => {
    for (const program of ["./run-tests.sh", "scripts/check", "bin\\check.cmd"])
      expect(gradeInfrastructureProblem(command, spawnFailure(program)), program).toBeNull();
  });

  it("says nothing about graders other than command graders, or checks that ran", () => {
    expect(gradeInfrastructureProblem({ ...command, kind: "scope" }, spawnFailure("x"))).toBeNull();
    const ran = spawnFailure("npm");
    (ran.checks[0]!.evidence as Record<string, unknown>).spawnError = undefined;
    expect(gradeInfrastructureProblem(command, ran)).toBeNull();
  });
});

describe("grader programs that will not start", () => {
  it("are errors of validate naming the program and the grader (a bare name missing from PATH, an absolute path that is not executable, nothing else), and run stops before any trial", async () => {
    const exp = await makeExperiment();
    try {
      await exp.writeManifest(
        syntheticManifest({
          tasks: [
            {
              id: "fix-value",
              fixture: "./fixture",
              prompt: "./prompt.md",
              expectedFiles: ["src/value.txt"],
              graders: [
                { kind: "command", id: "missing", argv: ["no-such-grader-program"] },
                { kind: "command", id: "absolute", argv: [join(exp.base, "nowhere", "run")] },
                { kind: "command", id: "in-trial", argv: ["./scripts/check.sh"] },
                { kind: "command", id: "node", argv: ["node", "check.mjs"] },
              ],
            },
          ],
        }),
      );
      const loaded = await loadManifest(exp.manifestPath, { loadCatalog: loadHarnessCatalog });
      expect(loaded.ok).toBe(true);
      if (!loaded.ok) return;
      const problems = await missingGraderPrograms(loaded.experiment, process.env);
      expect(problems.map((p) => p.path)).toEqual([
        "tasks[0].graders (missing).argv[0]",
        "tasks[0].graders (absolute).argv[0]",
      ]);
      expect(problems[0]?.message).toBe(
        'no-such-grader-program is not on PATH: grader "missing" of task fix-value cannot start, and every trial would end in an infrastructure error (grader_failed) after its agent ran; install no-such-grader-program or change the grader\'s argv',
      );
      const validate = await runHarness(["compare", "validate", exp.manifestPath]);
      expect(validate.exitCode).toBe(1);
      expect(validate.stderr).toContain(
        'tasks[0].graders (missing).argv[0]: no-such-grader-program is not on PATH: grader "missing"',
      );
      const out = join(exp.base, "never");
      const run = await runHarness(["compare", "run", exp.manifestPath, "--out", out]);
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toContain("no-such-grader-program is not on PATH");
      expect(existsSync(out)).toBe(false);
    } finally {
      await exp.cleanup();
    }
  });
});
