// Which grader a `--grader-contract` value replaces the contract of, and every way a value
// can be wrong (each named with the value that caused it).
import { describe, expect, it } from "vitest";
import {
  applyContractOverrides,
  type GraderContractArg,
  type GraderSpec,
  parseGraderContractArg,
  resolveGraderContracts,
} from "../../src/compare/index.js";

const readme = (file: string): GraderSpec => ({
  kind: "readme-package-v1",
  id: "readme-package-v1",
  contractFile: file,
});
const scope: GraderSpec = { kind: "scope", id: "scope", mode: "subset" };
const command: GraderSpec = {
  kind: "command",
  id: "check",
  argv: ["node", "check.mjs"],
  timeoutMs: 1000,
  expectedExitCode: 0,
};

const oneReadme = [{ id: "write-readme", graders: [scope, readme("/m/contract.json")] }];
const twoReadmes = [
  { id: "write-readme", graders: [scope, readme("/m/a.json")] },
  { id: "fix-docs", graders: [command, readme("/m/b.json")] },
];
const noReadme = [{ id: "fix-value", graders: [scope, command] }];

function args(...values: string[]): GraderContractArg[] {
  return values.map((value) => {
    const parsed = parseGraderContractArg(value);
    if (!parsed.ok) throw new Error(`unexpected parse failure of ${value}`);
    return parsed.value;
  });
}

function problems(values: string[], tasks: Parameters<typeof resolveGraderContracts>[1]) {
  const result = resolveGraderContracts(args(...values), tasks);
  if (result.ok) throw new Error("expected problems");
  return result.problems;
}

describe("parseGraderContractArg", () => {
  it("reads a bare file, <grader-id>=<file> and <task>/<grader-id>=<file>", () => {
    expect(parseGraderContractArg("strict.json")).toEqual({
      ok: true,
      value: { given: "strict.json", task: null, grader: null, file: "strict.json" },
    });
    expect(parseGraderContractArg("readme-package-v1=strict.json")).toEqual({
      ok: true,
      value: {
        given: "readme-package-v1=strict.json",
        task: null,
        grader: "readme-package-v1",
        file: "strict.json",
      },
    });
    expect(parseGraderContractArg("write-readme/readme-package-v1=c/s=1.json")).toMatchObject({
      ok: true,
      value: { task: "write-readme", grader: "readme-package-v1", file: "c/s=1.json" },
    });
  });

  it("treats a value whose part before = is not an id as a file", () => {
    expect(parseGraderContractArg("./a=b.json")).toMatchObject({
      ok: true,
      value: { task: null, grader: null, file: "./a=b.json" },
    });
  });

  it("rejects an empty value and an id without a file", () => {
    const empty = parseGraderContractArg("");
    const noFile = parseGraderContractArg("readme-package-v1=");
    expect(empty.ok).toBe(false);
    expect(noFile).toEqual({
      ok: false,
      problems: [
        {
          path: "--grader-contract readme-package-v1=",
          message: "expected a contract file after `=`, e.g. readme-package-v1=strict.json",
        },
      ],
    });
  });
});

describe("resolveGraderContracts", () => {
  it("gives a bare file to the only grader that takes a contract", () => {
    expect(resolveGraderContracts(args("/s.json"), oneReadme)).toEqual({
      ok: true,
      value: [
        { task: "write-readme", grader: "readme-package-v1", file: "/s.json", given: "/s.json" },
      ],
    });
  });

  it("refuses a bare file when several graders take a contract, listing them", () => {
    expect(problems(["/s.json"], twoReadmes)).toEqual([
      {
        path: "--grader-contract /s.json",
        message:
          "a bare file is allowed only when exactly one grader takes a contract; these do: write-readme/readme-package-v1, fix-docs/readme-package-v1; name one as <grader-id>=<file> or <task>/<grader-id>=<file>",
      },
    ]);
  });

  it("applies <grader-id>=<file> in every task, and a task-qualified value wins for its task in either order", () => {
    for (const order of [
      ["readme-package-v1=/all.json", "fix-docs/readme-package-v1=/one.json"],
      ["fix-docs/readme-package-v1=/one.json", "readme-package-v1=/all.json"],
    ]) {
      const result = resolveGraderContracts(args(...order), twoReadmes);
      expect(result.ok && result.value.map((o) => [o.task, o.file])).toEqual([
        ["write-readme", "/all.json"],
        ["fix-docs", "/one.json"],
      ]);
    }
  });

  it("names an unknown grader id, an unknown task and a task without that grader", () => {
    expect(problems(["readme=/s.json"], oneReadme)).toEqual([
      {
        path: "--grader-contract readme=/s.json",
        message:
          'unknown grader id "readme"; graders that take a contract: write-readme/readme-package-v1',
      },
    ]);
    expect(problems(["nope/readme-package-v1=/s.json"], oneReadme)[0]?.message).toBe(
      'unknown task "nope"; the run\'s tasks: write-readme; graders that take a contract: write-readme/readme-package-v1',
    );
    expect(problems(["write-readme/check=/s.json"], twoReadmes)[0]?.message).toBe(
      'task write-readme has no grader "check" (its graders: scope, readme-package-v1); graders that take a contract: write-readme/readme-package-v1, fix-docs/readme-package-v1',
    );
  });

  it("refuses a grader that takes no contract, qualified or not", () => {
    expect(problems(["scope=/s.json"], oneReadme)[0]?.message).toBe(
      'grader "scope" is a scope grader and takes no contract; graders that take one: write-readme/readme-package-v1',
    );
    expect(problems(["fix-docs/check=/s.json"], twoReadmes)[0]?.message).toBe(
      "grader fix-docs/check is a command grader and takes no contract; graders that take one: write-readme/readme-package-v1, fix-docs/readme-package-v1",
    );
  });

  it("says when no grader of the run takes a contract", () => {
    expect(problems(["/s.json"], noReadme)[0]?.message).toBe(
      "no grader of this run takes a contract (only readme-package-v1 graders do)",
    );
    expect(problems(["check=/s.json"], noReadme)[0]?.message).toContain(
      "graders that take one: none in this run",
    );
  });

  it("refuses two values for the same grader and reports every problem at once", () => {
    const found = problems(["/a.json", "/b.json", "nope=/c.json"], oneReadme);
    expect(found.map((p) => p.path)).toEqual([
      "--grader-contract /b.json",
      "--grader-contract nope=/c.json",
    ]);
    expect(found[0]?.message).toBe(
      "write-readme/readme-package-v1 already gets its contract from --grader-contract /a.json",
    );
  });
});

describe("applyContractOverrides", () => {
  it("points only the chosen graders at the new files and leaves the input alone", () => {
    const tasks = twoReadmes.map((t) => ({ ...t, graders: [...t.graders] }));
    const changed = applyContractOverrides(tasks, [
      { task: "fix-docs", grader: "readme-package-v1", file: "/strict.json", given: "x" },
    ]);
    expect(changed[0]?.graders).toEqual(twoReadmes[0]?.graders);
    expect(changed[1]?.graders).toEqual([command, readme("/strict.json")]);
    expect(tasks[1]?.graders[1]).toEqual(readme("/m/b.json"));
  });
});
