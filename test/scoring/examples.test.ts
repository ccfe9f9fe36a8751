import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  type RepoState,
  type ScoringSpec,
  score,
  validateRepoState,
  validateScoringSpec,
} from "../../src/scoring/index.js";

const dir = fileURLToPath(new URL("../../examples/forge-scoring/", import.meta.url));

async function spec(name: string): Promise<ScoringSpec> {
  const result = validateScoringSpec(JSON.parse(await readFile(`${dir}${name}`, "utf8")));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

async function state(name: string): Promise<RepoState> {
  const result = validateRepoState(JSON.parse(await readFile(`${dir}${name}`, "utf8")));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.value;
}

describe("examples/forge-scoring", () => {
  it("actual-pass.json passes although it differs in ids, order, colour case, CRLF and absent fields", async () => {
    const text = await readFile(`${dir}actual-pass.json`, "utf8");
    expect(text).toContain('"createdAt"');
    expect(text).toContain("\\r\\n");
    expect(text).toMatch(/"color": "[0-9A-F]{6}"/);
    expect(
      score(await spec("spec.json"), { kind: "mutation", state: await state("actual-pass.json") }),
    ).toEqual({
      kind: "mutation",
      pass: true,
    });
  });

  it("actual-missed.json fails only on the intended change, with nothing collateral", async () => {
    const result = score(await spec("spec.json"), {
      kind: "mutation",
      state: await state("actual-missed.json"),
    });
    expect(result.pass).toBe(false);
    if (result.kind !== "mutation" || result.pass) return;
    expect(result.differences.every((d) => !d.collateral)).toBe(true);
    expect(result.differences.map((d) => d.message)).toContain(
      'issue #15: label "priority: high" missing',
    );
  });

  it("actual-collateral.json does the change but fails on collateral damage only", async () => {
    const result = score(await spec("spec.json"), {
      kind: "mutation",
      state: await state("actual-collateral.json"),
    });
    expect(result.pass).toBe(false);
    if (result.kind !== "mutation" || result.pass) return;
    expect(result.differences.length).toBeGreaterThan(0);
    expect(result.differences.every((d) => d.collateral)).toBe(true);
  });

  it("report-pass.md states every fact of read-spec.json and report-missing.md misses some", async () => {
    const readSpec = await spec("read-spec.json");
    const pass = score(readSpec, {
      kind: "read",
      report: await readFile(`${dir}report-pass.md`, "utf8"),
    });
    expect(pass.pass).toBe(true);
    const missing = score(readSpec, {
      kind: "read",
      report: await readFile(`${dir}report-missing.md`, "utf8"),
    });
    expect(missing).toMatchObject({
      pass: false,
      missing: [
        { description: "how many open issues are labelled bug" },
        { description: "who requested the changes" },
      ],
    });
  });
});
