// The one-line forgery issue 21 found, end to end on examples/fix-the-bug: an agent that puts
// `process.exit(0);` at the top of the only file it may edit made `npm test` exit 0 before any
// test ran, and the command grader gave `accept`. The example's tests grader must grade every
// such trial failed, saying the failing test was never reported.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VerdictDocument } from "../../src/artifacts/index.js";
import { EXAMPLE_DIR, runManifest } from "../support/experiment.js";

const EXIT_ZERO = `export default async function exitZero({ tools }) {
  const read = await tools.read("src/index.js");
  if (!read.ok) throw new Error("cannot read src/index.js");
  const written = await tools.write("src/index.js", "process.exit(0);\\n" + read.content);
  if (!written.ok) throw new Error("write refused");
  const run = await tools.bash("npm test");
  return run.ok && run.exitCode === 0 ? "npm test passes" : "npm test fails";
}
`;

let base: string;
let verdict: VerdictDocument;
let out: string;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-exit-zero-"));
  const dir = join(base, "fix-the-bug");
  await cp(EXAMPLE_DIR, dir, { recursive: true });
  await writeFile(join(dir, "agents", "exit-zero.mjs"), EXIT_ZERO);
  const manifest = JSON.parse(await readFile(join(dir, "experiment.json"), "utf8"));
  manifest.variants[1].agent = "./agents/exit-zero.mjs";
  await writeFile(join(dir, "experiment.json"), JSON.stringify(manifest));
  out = join(base, "out");
  ({ verdict } = await runManifest(join(dir, "experiment.json"), {
    outDir: out,
    tempParent: base,
  }));
}, 120_000);
afterAll(() => rm(base, { recursive: true, force: true }));

describe("process.exit(0) prepended to the file under test (examples/fix-the-bug)", () => {
  it("makes npm test exit 0 for the agent, and is graded failed on every trial: no accept", async () => {
    const forged = verdict.trials.filter((t) => t.variant === "verified");
    expect(forged).toHaveLength(5);
    for (const trial of forged) {
      expect(trial.outcome).toBe("failed");
      expect(trial.explanation).toContain("unit-tests/fail-to-pass");
      const response = await readFile(join(out, trial.artifactDir, "response.txt"), "utf8");
      expect(response).toBe("npm test passes");
      const validation = JSON.parse(
        await readFile(join(out, trial.artifactDir, "validation.json"), "utf8"),
      ) as { grades: { grader: string; checks: { id: string; detail: string }[] }[] };
      const tests = validation.grades.find((g) => g.grader === "unit-tests");
      expect(tests?.checks.find((c) => c.id === "fail-to-pass")?.detail).toBe(
        '1 of 1 did not pass: "allows whitespace between parts" was not reported',
      );
    }
    expect(verdict.status).not.toBe("accept");
  });
});
