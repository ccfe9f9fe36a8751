// Re-grading recorded trials: the graders run again on each recorded patch applied to a fresh
// copy of the fixture, no agent runs, and the new verdict is written beside the old one.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  regradeRun,
  type VerdictDocument,
  validationDocumentSchema,
  verdictDocumentSchema,
} from "../../src/compare/index.js";
import { InvalidInputError } from "../../src/shared/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import {
  filesContaining,
  listFiles,
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

/** The synthetic manifest with its command grader running `argv` instead of `node check.mjs`. */
function withCheck(argv: string[]) {
  return syntheticManifest({
    tasks: [
      {
        id: "fix-value",
        fixture: "./fixture",
        prompt: "./prompt.md",
        expectedFiles: ["src/value.txt"],
        graders: [
          { kind: "scope", mode: "subset" },
          { kind: "command", id: "check", argv, timeoutMs: 30000 },
        ],
      },
    ],
  });
}

let exp: TempExperiment;
let original: VerdictDocument;
let originalFiles: string[];

beforeAll(async () => {
  exp = await makeExperiment();
  ({ verdict: original } = await runManifest(exp.manifestPath, {
    outDir: exp.outDir,
    tempParent: exp.trialsDir,
  }));
  expect(original.status).toBe("accept");
  originalFiles = await listTree(exp.outDir);
});

afterAll(() => exp.cleanup());

describe("regrade", () => {
  it("with unchanged graders reproduces every outcome and says nothing changed", async () => {
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(result.stem).toBe("verdict.regrade-001");
    expect(result.changes).toEqual([]);
    expect(result.notes).toEqual([]);
    expect(result.verdict.status).toBe("accept");
    expect(result.verdict.regradeOf).toBe("verdict.json");
    expect(result.verdict.trials.map((t) => [t.artifactDir, t.outcome, t.score])).toEqual(
      original.trials.map((t) => [t.artifactDir, t.outcome, t.score]),
    );
  });

  it("after the grader changes, flips the outcomes, writes verdict.regrade-002.* beside the old and leaves the old untouched", async () => {
    // The check now passes only while the value is still "old": the fixer's trials fail.
    await exp.writeManifest(withCheck(["node", "check-old.mjs"]));
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(result.stem).toBe("verdict.regrade-002");
    expect(result.notes.join(" ")).toContain("manifest changed");
    expect(result.verdict.status).toBe("reject");
    expect(result.changes).toHaveLength(4);
    for (const change of result.changes) {
      const flipped = change.artifactDir.startsWith("fixer/")
        ? { before: "passed", after: "failed" }
        : { before: "failed", after: "passed" };
      expect({ before: change.before.outcome, after: change.after.outcome }).toEqual(flipped);
    }
    const written = await listFiles(exp.outDir);
    for (const name of ["json", "md", "html"])
      expect(written).toContain(`verdict.regrade-002.${name}`);
    const stored = verdictDocumentSchema.parse(
      await readJson(exp.outDir, "verdict.regrade-002.json"),
    );
    expect(stored.status).toBe("reject");
    for (const trial of original.trials) {
      const validation = validationDocumentSchema.parse(
        await readJson(exp.outDir, `${trial.artifactDir}/validation.regrade-002.json`),
      );
      expect(validation.grades.find((g) => g.grader === "check")?.checks[0]?.detail).toContain(
        "node check-old.mjs",
      );
    }
    // Everything the run wrote is byte-identical; regrade only added files.
    const now = await listTree(exp.outDir);
    for (const line of originalFiles) expect(now).toContain(line);
    expect(await readFile(join(exp.outDir, "verdict.md"), "utf8")).toMatch(/^# Verdict: ACCEPT/);
    expect(await readFile(join(exp.outDir, "verdict.regrade-002.md"), "utf8")).toMatch(
      /^# Verdict: REJECT/,
    );
    expect(await filesContaining(exp.outDir, exp.trialsDir)).toEqual([]);
  });

  it("records a grader that cannot start as an infrastructure error, not a failure", async () => {
    await exp.writeManifest(withCheck(["harnesslab-no-such-program"]));
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(result.verdict.trials.every((t) => t.infraReason === "grader_failed")).toBe(true);
    expect(result.verdict.status).toBe("infrastructure_error");
    await exp.writeManifest(syntheticManifest());
  });

  it("re-grades from another manifest file when asked", async () => {
    const other = await exp.writeManifest(withCheck(["node", "check-old.mjs"]), "other.json");
    await exp.writeManifest(syntheticManifest());
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir, manifestPath: other });
    expect(result.verdict.status).toBe("reject");
  });

  it("refuses when the fixture is no longer the one the run used", async () => {
    const readme = join(exp.fixtureDir, "README.md");
    const text = await readFile(readme, "utf8");
    await writeFile(readme, `${text}changed\n`);
    try {
      const before = await listFiles(exp.outDir);
      await expect(regradeRun(exp.outDir, { tempParent: exp.trialsDir })).rejects.toThrow(
        InvalidInputError,
      );
      await expect(regradeRun(exp.outDir, { tempParent: exp.trialsDir })).rejects.toThrow(
        /not the one the run used/,
      );
      expect(await listFiles(exp.outDir)).toEqual(before);
    } finally {
      await writeFile(readme, text);
    }
  });

  it("refuses a directory that holds no finished run", async () => {
    await expect(regradeRun(exp.fixtureDir)).rejects.toThrow(InvalidInputError);
  });
});
