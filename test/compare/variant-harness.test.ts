// A variant whose composition comes from other .harness files than the experiment's: two versions
// of one setup file compared side by side (what `harness ci` does with a base and a head). Each
// variant is compiled from its own files; the manifest names each problem at the variant's field.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHarnessCatalog, loadManifest } from "../../src/compare/index.js";
import {
  makeExperiment,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

/** One setup, `team`, in two versions: the new one adds the habit of running the check. */
const setup = (careful: boolean) => `component loop {
  kind workflow
  description "Make the change the task asks for and report it."
}
${careful ? 'component careful {\n  kind workflow\n  description "Run the check before finishing."\n}\nbinding careful for scripted { }\n' : ""}binding loop for scripted { }
plugin team-kit {
  version "1.0.0"
  provides [ component.loop${careful ? ", component.careful" : ""} ]
}
composition team {
  target scripted
  include [ plugin.team-kit@^1 ]
}
`;

let exp: TempExperiment;
beforeAll(async () => {
  exp = await makeExperiment({
    harness: setup(true),
    manifest: syntheticManifest({
      variants: [
        {
          id: "before",
          composition: "team",
          harness: "./old/team.harness",
          agent: "./agents/fixer.mjs",
        },
        { id: "after", composition: "team", agent: "./agents/fixer.mjs" },
      ],
      baseline: "before",
    }),
  });
  await import("node:fs/promises").then((fs) => fs.mkdir(join(exp.dir, "old")));
  await writeFile(join(exp.dir, "old", "team.harness"), setup(false));
});
afterAll(() => exp.cleanup());

describe("a variant with harness files of its own", () => {
  it("compiles each variant from its own files: one composition name, two setups, one verdict", async () => {
    const { verdict, experiment } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
    });
    expect(experiment.variants.map((v) => v.harnessFiles ?? null)).toEqual([
      [join(exp.dir, "old", "team.harness")],
      null,
    ]);
    const [before, after] = verdict.variants;
    expect(before?.composition).toBe("team");
    expect(after?.composition).toBe("team");
    expect(before?.revisionId).not.toBe(after?.revisionId);
    expect(verdict.trials.every((t) => t.outcome === "passed")).toBe(true);
    // Each variant's prompt has its own setup's guidance.
    const prompt = async (variant: string) =>
      (await import("node:fs/promises")).readFile(
        join(exp.outDir, variant, "fix-value", "trial-001", "prompt.txt"),
        "utf8",
      );
    expect(await prompt("before")).not.toContain("Run the check before finishing.");
    expect(await prompt("after")).toContain("Run the check before finishing.");
  });

  it("refuses two versions that give the agent the same setup", async () => {
    await writeFile(join(exp.dir, "old", "same.harness"), setup(true));
    await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "before", composition: "team", harness: "./old/same.harness", agent: "nop" },
          { id: "after", composition: "team", agent: "nop" },
        ],
        baseline: "before",
      }),
      "same.json",
    );
    await expect(
      runManifest(join(exp.dir, "same.json"), {
        outDir: exp.freshOut("same"),
        tempParent: exp.trialsDir,
      }),
    ).rejects.toThrow(/are the same setup/);
  });

  it("names a missing file, and a composition its files do not have, at the variant's fields", async () => {
    await exp.writeManifest(
      syntheticManifest({
        variants: [
          { id: "gone", composition: "team", harness: "./old/missing.harness", agent: "nop" },
          { id: "other", composition: "careful", harness: ["./old/team.harness"], agent: "nop" },
          { id: "after", composition: "team", agent: "nop" },
        ],
        baseline: "after",
      }),
      "bad.json",
    );
    const loaded = await loadManifest(join(exp.dir, "bad.json"), {
      loadCatalog: loadHarnessCatalog,
    });
    expect(loaded.ok).toBe(false);
    expect(loaded.ok ? [] : loaded.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'variants[0].harness: "./old/missing.harness" does not exist (the harness file was looked for at ' +
        join(exp.dir, "old", "missing.harness") +
        ")",
      'variants[1].composition: composition "careful" not found in old/team.harness; available: team',
    ]);
  });
});
