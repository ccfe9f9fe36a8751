// What a refused --resume says about settings (their values, not hashes), and that an
// experiment moved to another directory with the same contents still resumes.
import { cp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExperimentInputError } from "../../src/compare/index.js";
import {
  makeExperiment,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

let exp: TempExperiment;
let outDir: string;

beforeAll(async () => {
  exp = await makeExperiment();
  await cp(
    new URL("../../examples/readme-compare/contract.json", import.meta.url),
    join(exp.dir, "contract.json"),
  );
  const manifest = syntheticManifest();
  const [task] = manifest.tasks as Array<Record<string, unknown>>;
  task!.graders = [
    { kind: "scope", mode: "subset" },
    { kind: "readme-package-v1", contract: "./contract.json" },
  ];
  await exp.writeManifest(manifest);
  outDir = exp.freshOut("out");
  // Stopped at once: nothing runs, the inputs are recorded.
  await runManifest(exp.manifestPath, {
    outDir,
    tempParent: exp.trialsDir,
    signal: AbortSignal.abort(),
  });
});
afterAll(() => exp.cleanup());

describe("a refused --resume", () => {
  it("names a changed runtime setting with its value then and now", async () => {
    const original = await readFile(exp.manifestPath, "utf8");
    const manifest = JSON.parse(original) as { runtime: Record<string, unknown> };
    manifest.runtime.timeoutMs = 12_345;
    await writeFile(exp.manifestPath, JSON.stringify(manifest));
    try {
      const error = await runManifest(exp.manifestPath, {
        outDir,
        tempParent: exp.trialsDir,
        resume: true,
        signal: AbortSignal.abort(),
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ExperimentInputError);
      const lines = (error as ExperimentInputError).problems.map((p) => `${p.path}: ${p.message}`);
      expect(lines).toContain(
        "changed input: the runtime setting timeoutMs differs: 30000 then, 12345 now",
      );
    } finally {
      await writeFile(exp.manifestPath, original);
    }
  });
});

describe("an experiment moved with its contract", () => {
  it("still resumes: file locations are not inputs, contents are", async () => {
    const moved = join(exp.base, "moved");
    await cp(exp.dir, moved, { recursive: true });
    const { verdict } = await runManifest(join(moved, "experiment.json"), {
      outDir,
      tempParent: exp.trialsDir,
      resume: true,
      signal: AbortSignal.abort(),
    });
    expect(verdict.interrupted).toBe(true);
  });
});
