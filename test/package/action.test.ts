// The repository's action.yml: a composite action that builds harnesslab and runs `harness ci`.
// Its inputs are documented, reach the command as variables (never as script text a pull
// request could inject into), and every flag it passes is one `harness ci` takes.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runHarness } from "../support/cli.js";

const ROOT = join(import.meta.dirname, "..", "..");

interface Action {
  name: string;
  inputs: Record<string, { description: string; required: boolean; default?: string }>;
  runs: {
    using: string;
    steps: { name: string; shell: string; run: string; env?: Record<string, string> }[];
  };
}

describe("action.yml", async () => {
  const action = parse(await readFile(join(ROOT, "action.yml"), "utf8")) as Action;
  const docs = await readFile(join(ROOT, "docs", "ci.md"), "utf8");

  it("is a composite action whose every input is described here and in docs/ci.md", () => {
    expect(action.runs.using).toBe("composite");
    expect(Object.keys(action.inputs)).toContain("manifest");
    expect(action.inputs.manifest?.required).toBe(true);
    for (const [name, input] of Object.entries(action.inputs)) {
      expect(input.description, name).not.toBe("");
      expect(docs, name).toContain(`| \`${name}\` |`);
    }
  });

  it("passes inputs to its scripts as variables only", () => {
    for (const step of action.runs.steps) {
      expect(step.run, step.name).not.toMatch(/\$\{\{\s*(inputs|github\.event)\./);
      expect(step.shell).toBe("bash");
    }
    const ci = action.runs.steps.find((s) => s.run.includes("dist/cli/bin.js"));
    for (const name of Object.keys(action.inputs))
      expect(Object.values(ci?.env ?? {}), name).toContain(`\${{ inputs.${name} }}`);
  });

  it("uses only flags `harness ci` takes", async () => {
    const help = (await runHarness(["ci", "--help"])).stdout;
    const ci = action.runs.steps.find((s) => s.run.includes("dist/cli/bin.js"));
    const flags = [...new Set(ci?.run.match(/--[a-z][a-z-]+/g) ?? [])];
    expect(flags.length).toBeGreaterThan(5);
    for (const flag of flags) expect(help, flag).toContain(flag);
  });
});
