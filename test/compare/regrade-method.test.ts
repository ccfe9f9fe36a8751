// Regrade re-decides a verdict written by an older statistical method with the current one, and
// says when the status changed because of the method rather than because of the new grades.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { regradeRun, verdictDocumentSchema } from "../../src/compare/index.js";
import { makeExperiment, runManifest, type TempExperiment } from "../support/experiment.js";

let exp: TempExperiment;

beforeAll(async () => {
  exp = await makeExperiment();
  await runManifest(exp.manifestPath, { outDir: exp.outDir, tempParent: exp.trialsDir });
  // Make the run's verdict look like one written before harnesslab 0.2: its comparisons carry
  // no deciding test, their interval is Newcombe's, and that method said need_more_work.
  const path = join(exp.outDir, "verdict.json");
  const verdict = verdictDocumentSchema.parse(JSON.parse(await readFile(path, "utf8")));
  const stats = verdict.statistics!;
  const old = {
    ...verdict,
    status: "need_more_work",
    flips: undefined,
    statistics: {
      ...stats,
      status: "need_more_work",
      comparisons: stats.comparisons.map(({ test: _t, toSettle: _s, ...c }) => ({
        ...c,
        status: "need_more_work",
        interval: c.interval && { ...c.interval, method: "newcombe-hybrid-score" },
      })),
    },
  };
  await writeFile(path, `${JSON.stringify(old, null, 2)}\n`);
});

afterAll(() => exp.cleanup());

describe("regrade of a verdict decided by an older method", () => {
  it("re-decides with the current method and says the status changed because of it", async () => {
    const result = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(result.summary.changes).toEqual([]);
    expect(result.verdict.status).toBe("accept");
    expect(result.verdict.regradeSummary?.methodChange).toEqual({
      previousMethod: "newcombe-hybrid-score",
      previousStatus: "need_more_work",
      statusWithPreviousGrades: "accept",
    });
    expect(result.notes).toContain(
      "the run's verdict was decided by a method harnesslab no longer uses (newcombe-hybrid-score, an interval alone): on the run's own grades the current method decides accept, where the run said need_more_work; so the new verdict differs partly because of the method, not only because of the new grades",
    );
    const md = await readFile(join(exp.outDir, `${result.stem}.md`), "utf8");
    expect(md).toContain(
      "> The statistical method changed since the run: it was decided by newcombe-hybrid-score (an interval alone) as need\\_more\\_work; on the run's own grades the current method decides accept.",
    );
  });
});
