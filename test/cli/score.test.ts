import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scoringResultSchema } from "../../src/scoring/index.js";
import { runHarness } from "../support/cli.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const example = (name: string) => `examples/forge-scoring/${name}`;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "harness-score-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return path;
}

const score = (...args: string[]) => runHarness(["score", ...args], root);

describe("harness score (mutation spec)", () => {
  it("exits 0 and prints PASS when the state matches", async () => {
    const run = await score("--spec", example("spec.json"), "--state", example("actual-pass.json"));
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(
      "PASS: examples/forge-scoring/actual-pass.json matches the expected state in examples/forge-scoring/spec.json (9 labels, 12 issues, 4 pull requests)\n",
    );
    expect(run.stderr).toBe("");
  });

  it("exits 1 and lists the missed change under its own heading", async () => {
    const run = await score(
      "--spec",
      example("spec.json"),
      "--state",
      example("actual-missed.json"),
    );
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain(
      "Not as expected: the actual state lacks or changes what the expected state asserts (5):",
    );
    expect(run.stdout).toContain(
      '  - issue #15: label "priority: high" missing\n      at issues[number=15].labels\n',
    );
    expect(run.stdout).not.toContain("Collateral:");
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe(
      "FAIL: 5 differences (5 not as expected, 0 collateral)",
    );
  });

  it("exits 1 and lists collateral changes under their own heading", async () => {
    const run = await score(
      "--spec",
      example("spec.json"),
      "--state",
      example("actual-collateral.json"),
    );
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain(
      "Collateral: the actual state has what the expected state does not (4):",
    );
    expect(run.stdout).toContain(
      '  - pull request #7: unexpected comment by triage-bot (collateral change): "Triaged: this PR looks related to #15."',
    );
    expect(run.stdout).not.toContain("Not as expected:");
    expect(run.stdout).toContain("FAIL: 4 differences (0 not as expected, 4 collateral)");
  });

  it("with --json prints only the result document on stdout and the summary on stderr", async () => {
    for (const [name, exitCode] of [
      ["actual-pass.json", 0],
      ["actual-missed.json", 1],
      ["actual-collateral.json", 1],
    ] as const) {
      const run = await score("--spec", example("spec.json"), "--state", example(name), "--json");
      expect(run.exitCode).toBe(exitCode);
      const document = JSON.parse(run.stdout);
      expect(scoringResultSchema.safeParse(document).success).toBe(true);
      expect(document.kind).toBe("mutation");
      expect(document.pass).toBe(exitCode === 0);
      expect(run.stderr).toMatch(exitCode === 0 ? /^PASS: / : /FAIL: /);
    }
  });

  it("accepts paths relative to the working directory", async () => {
    const run = await runHarness(
      ["score", "--spec", "spec.json", "--state", "actual-pass.json"],
      join(root, "examples/forge-scoring"),
    );
    expect(run.exitCode).toBe(0);
  });
});

describe("harness score (read spec)", () => {
  it("exits 0 when every fact is present", async () => {
    const run = await score(
      "--spec",
      example("read-spec.json"),
      "--report",
      example("report-pass.md"),
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain(
      '[present] the open pull request with changes requested: found "#7"',
    );
    expect(run.stdout).toContain("PASS: all 4 required facts present");
  });

  it("exits 1 and names each missing fact", async () => {
    const run = await score(
      "--spec",
      example("read-spec.json"),
      "--report",
      example("report-missing.md"),
    );
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('[MISSING] facts[2] missing: "who requested the changes"');
    expect(run.stdout).toContain("FAIL: 2 of 4 required facts missing");
  });

  it("with --json keeps the scored report in the result", async () => {
    const run = await score(
      "--spec",
      example("read-spec.json"),
      "--report",
      example("report-missing.md"),
      "--json",
    );
    expect(run.exitCode).toBe(1);
    const document = JSON.parse(run.stdout);
    expect(scoringResultSchema.safeParse(document).success).toBe(true);
    expect(document.report).toContain("14 open bugs");
    expect(document.missing.map((m: { index: number }) => m.index)).toEqual([0, 2]);
  });
});

describe("harness score usage and input errors (exit 2)", () => {
  it("rejects giving both --state and --report", async () => {
    const run = await score(
      "--spec",
      example("spec.json"),
      "--state",
      example("actual-pass.json"),
      "--report",
      example("report-pass.md"),
    );
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(
      "give either --state <file> (for a mutation spec) or --report <file>",
    );
    expect(run.stdout).toBe("");
  });

  it("rejects giving neither --state nor --report", async () => {
    const run = await score("--spec", example("spec.json"));
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("give --state <file>");
  });

  it("rejects a missing --spec", async () => {
    const run = await score("--state", example("actual-pass.json"));
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("--spec <file>");
  });

  it("rejects --state for a read spec and --report for a mutation spec", async () => {
    const read = await score(
      "--spec",
      example("read-spec.json"),
      "--state",
      example("actual-pass.json"),
    );
    expect(read.exitCode).toBe(2);
    expect(read.stderr).toBe(
      "harness score: examples/forge-scoring/read-spec.json is a read spec: give the agent's final report with --report <file> (not --state)\n",
    );
    const mutation = await score(
      "--spec",
      example("spec.json"),
      "--report",
      example("report-pass.md"),
    );
    expect(mutation.exitCode).toBe(2);
    expect(mutation.stderr).toContain(
      "is a mutation spec: give the repository state after the run with --state",
    );
  });

  it("names the file and JSON path of an invalid state: actual.json: issues[3].labels[1]: expected string", async () => {
    const issue = (number: number, labels: unknown[] = []) => ({
      number,
      title: "t",
      state: "open",
      labels,
    });
    await file("actual.json", { issues: [issue(1), issue(2), issue(3), issue(4, ["bug", 7])] });
    const run = await runHarness(
      ["score", "--spec", join(root, example("spec.json")), "--state", "actual.json", "--json"],
      dir,
    );
    expect(run.exitCode).toBe(2);
    // With --json, stdout is still exactly one JSON document: the error.
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: false,
      error: {
        exitCode: 2,
        message: expect.stringContaining("actual.json: issues[3].labels[1]: expected string"),
      },
    });
    expect(run.stderr).toContain(
      "harness score: actual.json: issues[3].labels[1]: expected string\n",
    );
    expect(run.stderr).toContain(
      "actual.json: the format is described by schemas/repo-state.schema.json",
    );
  });

  it("names facts[2].pattern when a read spec has an invalid regular expression", async () => {
    const spec = await file("bad-pattern.json", {
      kind: "read",
      facts: [
        { description: "a", anyOf: ["a"] },
        { description: "b", anyOf: ["b"] },
        { description: "c", anyOf: [], pattern: "([unclosed" },
      ],
    });
    const report = await file("report.md", "a b c");
    const run = await score("--spec", spec, "--report", report);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(
      /bad-pattern\.json: facts\[2\]\.pattern: not a valid regular expression/,
    );
  });

  it("names the line and column of a JSON syntax error", async () => {
    const state = await file("broken.json", '{\n  "issues": [\n    { "number": 1, }\n  ]\n}');
    const run = await score("--spec", example("spec.json"), "--state", state);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/broken\.json: line 3, column \d+: not valid JSON/);
  });

  it("names a file that does not exist", async () => {
    const run = await score("--spec", example("nope.json"), "--state", example("actual-pass.json"));
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe("harness score: examples/forge-scoring/nope.json: file not found\n");
  });

  it("names a report that does not exist", async () => {
    const run = await score("--spec", example("read-spec.json"), "--report", example("nope.md"));
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe("harness score: examples/forge-scoring/nope.md: file not found\n");
  });

  it("rejects an unknown spec kind with the JSON path", async () => {
    const spec = await file("kind.json", { kind: "diff", expected: {} });
    const run = await score("--spec", spec, "--state", example("actual-pass.json"));
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('kind.json: kind: expected one of "mutation", "read"');
  });
});
