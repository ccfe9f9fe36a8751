// The grading path's copies: the graders that read no file (scope, forge state, read facts) are
// graded on the first copy without a copy of their own; every grader that reads or runs the copy
// gets a fresh one, where what an earlier grader wrote is not. Grades keep the task's order.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskSpec } from "../../src/compare/index.js";
import { gradePatch } from "../../src/compare/trial/grade-patch.js";
import type { PreparedGrader } from "../../src/compare/trial/graders.js";
import type { Grade, GradeContext } from "../../src/graders/index.js";
import { snapshotTree } from "../../src/workspace/index.js";
import { testSandbox } from "../support/sandbox.js";

let dir: string;
let fixture: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-grade-patch-"));
  fixture = join(dir, "fixture");
  await mkdir(fixture);
  await writeFile(join(fixture, "a.txt"), "one\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** A grader that notes the copy it was given and what it found there, and then writes into it. */
function noting(
  id: string,
  usesCopy: boolean,
  seen: Array<{ id: string; root: string; found: string }>,
): PreparedGrader {
  return {
    id,
    kind: usesCopy ? "command" : "scope",
    usesCopy,
    contractHash: null,
    grader: {
      id,
      grade: async (context: GradeContext): Promise<Grade> => {
        const found = await readFile(join(context.trialRoot, "a.txt"), "utf8");
        seen.push({ id, root: context.trialRoot, found });
        // What the trial's code could do when a grader runs it.
        if (usesCopy) await writeFile(join(context.trialRoot, "a.txt"), `written by ${id}\n`);
        return { grader: id, checks: [], score: 100, passed: true };
      },
    },
  };
}

describe("gradePatch", () => {
  it("grades the file-less graders on the first copy and gives every other grader a fresh one, in the task's order", async () => {
    const seen: Array<{ id: string; root: string; found: string }> = [];
    const created: string[] = [];
    const graders = [
      noting("tests-1", true, seen),
      noting("scope", false, seen),
      noting("tests-2", true, seen),
    ];
    const task = { id: "t", fixtureDir: fixture, expectedFiles: [] } as unknown as TaskSpec;
    const graded = await gradePatch({
      task,
      graders,
      fixtureSnapshot: await snapshotTree(fixture),
      patch: new Uint8Array(),
      changedFiles: [],
      finalText: "",
      sandbox: await testSandbox(),
      tempParent: dir,
      beforeCreate: async (tempDir) => {
        created.push(tempDir);
      },
    });
    expect(graded.harnessFailure).toBeUndefined();
    expect(graded.grades.map((g) => g.grader)).toEqual(["tests-1", "scope", "tests-2"]);
    // The scope grader first, on the copy tests-1 then gets as it was; tests-2 on a fresh copy.
    expect(seen.map((s) => s.id)).toEqual(["scope", "tests-1", "tests-2"]);
    expect(seen[0]!.root).toBe(seen[1]!.root);
    expect(seen[2]!.root).not.toBe(seen[1]!.root);
    expect(seen.map((s) => s.found)).toEqual(["one\n", "one\n", "one\n"]);
    expect(created).toHaveLength(2);
  });
});
