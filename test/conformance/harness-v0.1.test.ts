// Runs the whole `.harness` v0.1 conformance folder (a vendored copy of
// ../shared/conformance/harness-v0.1 under fixture/, so a clean clone can run it): every program
// compiles to the reference bundle and every composition resolves to the reference revision and
// report, byte for byte as `JSON.stringify(value, null, 2)`, revision ids and content hashes
// included. Where we deliberately differ (diagnostics; docs/language.md lists why), the
// difference is spelled out below and asserted, so it cannot grow silently.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { HarnessIrBundle } from "../../src/ir/index.js";
import { compileHarness, type Diagnostic } from "../../src/language/index.js";
import { resolveComposition } from "../../src/resolver/index.js";

const root = fileURLToPath(new URL("./fixture/harness-v0.1/", import.meta.url));
const expectedDir = join(root, "expected");
const sharedRoot = fileURLToPath(
  new URL("../../../shared/conformance/harness-v0.1/", import.meta.url),
);

const read = (path: string) => readFileSync(path, "utf8");
const asReferenceFile = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

interface ProgramCase {
  name: string;
  /** Where the bundle and resolution files live, and their name prefix. */
  outputPrefix: string;
  compile: () => ReturnType<typeof compileHarness>;
}

const topLevel: ProgramCase[] = readdirSync(root)
  .filter((file) => file.endsWith(".harness"))
  .sort()
  .map((file) => {
    const name = file.replace(/\.harness$/, "");
    return {
      name,
      outputPrefix: join(expectedDir, name),
      compile: () => compileHarness(read(join(root, file))),
    };
  });

const validDir = join(expectedDir, "valid");
const valid: ProgramCase[] = readdirSync(validDir)
  .filter((file) => file.endsWith(".harness"))
  .sort()
  .map((file) => {
    const name = file.replace(/\.harness$/, "");
    return {
      name: `valid/${name}`,
      outputPrefix: join(validDir, name),
      compile: () => compileHarness(read(join(validDir, file))),
    };
  });

const multiFileSources = JSON.parse(read(join(validDir, "multi-file.sources.json"))) as Array<{
  uri: string;
  file: string;
}>;
const multiFile: ProgramCase = {
  name: "valid/multi-file",
  outputPrefix: join(validDir, "multi-file"),
  compile: () =>
    compileHarness(
      multiFileSources.map(({ uri, file }) => ({ uri, text: read(join(validDir, file)) })),
    ),
};

const registryDir = join(expectedDir, "invalid", "resolver-only");
const registry: ProgramCase = {
  name: "invalid/resolver-only/registry",
  outputPrefix: join(registryDir, "registry"),
  compile: () => compileHarness(read(join(registryDir, "registry.harness"))),
};

const programs = [...topLevel, ...valid, multiFile, registry];

/**
 * Deliberate difference: we warn when a host is not one harnesslab knows (the reference
 * returns no diagnostic). The bundle is unaffected.
 */
const EXTRA_WARNINGS: Record<string, Array<Pick<Diagnostic, "code" | "line" | "column">>> = {
  "valid/kebab-ids": [{ code: "HL3001", line: 22, column: 25 }],
};

describe("conformance: every program compiles to the reference bundle", () => {
  it("finds the conformance programs", () => {
    expect(topLevel.map((p) => p.name)).toEqual([
      "full-surface",
      "readme-compare",
      "standard-coding",
    ]);
    expect(valid.length).toBeGreaterThanOrEqual(5);
  });

  for (const program of programs) {
    it(`compiles ${program.name} byte for byte like the reference`, () => {
      const { bundle, diagnostics } = program.compile();
      expect(
        diagnostics.map(({ code, line, column }) => ({ code, line, column })),
        "only the documented extra warnings",
      ).toEqual(EXTRA_WARNINGS[program.name] ?? []);
      expect(diagnostics.every((d) => d.severity === "warning")).toBe(true);
      expect(bundle).toBeDefined();
      expect(asReferenceFile(bundle)).toBe(read(`${program.outputPrefix}.bundle.json`));
    });
  }
});

describe("conformance: every composition resolves like the reference", () => {
  for (const program of programs) {
    const reference = JSON.parse(read(`${program.outputPrefix}.bundle.json`)) as HarnessIrBundle;
    for (const { id } of reference.compositions) {
      const resolutionFile = `${program.outputPrefix}.${id}.resolution.json`;
      if (!existsSync(resolutionFile)) continue;
      it(`resolves ${program.name} › ${id} to the reference revision and report`, () => {
        const bundle = program.compile().bundle;
        expect(bundle).toBeDefined();
        const result = resolveComposition(bundle!, id);
        expect(asReferenceFile(result)).toBe(read(resolutionFile));
      });
    }
  }

  it("has a resolution file for every composition of every top-level and valid program", () => {
    for (const program of [...topLevel, ...valid, multiFile]) {
      const reference = JSON.parse(read(`${program.outputPrefix}.bundle.json`)) as HarnessIrBundle;
      for (const { id } of reference.compositions) {
        expect(
          existsSync(`${program.outputPrefix}.${id}.resolution.json`),
          `${program.name} ${id}`,
        ).toBe(true);
      }
    }
  });
});

interface ReferenceInvalidCase {
  case: string;
  stage: "compile" | "resolve";
  input: { form: "string" | "bundle"; file: string };
  compile?: {
    bundleReturned: boolean;
    diagnostics: Array<{ severity: string; message: string; source: string; line: number }>;
  };
  resolve?: Array<{ compositionId: string; result: unknown }>;
}

type OurDiagnostic = Pick<Diagnostic, "code" | "line" | "column" | "message">;

interface InvalidExpectation {
  diagnostics: OurDiagnostic[];
  /**
   * Set when our diagnostic sits on a different line than the reference's: the reason.
   * Unset means the lines must agree.
   */
  lineDifference?: string;
}

const AT_THE_OFFENDING_TOKEN =
  "we point at the offending token; the reference points at the enclosing declaration";

/**
 * Our diagnostics for the reference's invalid programs. Codes are our own (HL####), messages
 * are our own wording (each says what was expected), every diagnostic has a column, and one
 * problem gives one diagnostic.
 */
const INVALID: Record<string, InvalidExpectation> = {
  "below-minimum": { diagnostics: [] },
  "range-unsatisfied": { diagnostics: [] },
  "requirement-not-provided": { diagnostics: [] },
  "duplicate-binding-same-host": {
    // The reference reports this twice (validator and index); we report it once.
    diagnostics: [
      {
        code: "HL2003",
        line: 5,
        column: 18,
        message:
          'duplicate binding for component "gate" on host "pi": first declared at memory://harness/0.harness:3:18; a component has one binding per host',
      },
    ],
  },
  "duplicate-component": {
    diagnostics: [
      {
        code: "HL2001",
        line: 5,
        column: 11,
        message: 'duplicate component "gate": first declared at memory://harness/0.harness:2:11',
      },
    ],
  },
  "duplicate-composition": {
    diagnostics: [
      {
        code: "HL2002",
        line: 6,
        column: 13,
        message: 'duplicate composition "run": first declared at memory://harness/0.harness:4:13',
      },
    ],
  },
  "duplicate-config-key": {
    diagnostics: [
      {
        code: "HL2006",
        line: 10,
        column: 5,
        message:
          'configuration key "shell.timeout" is already set at 8:5 in composition "run"; set each key once',
      },
    ],
    lineDifference: AT_THE_OFFENDING_TOKEN,
  },
  "duplicate-include": {
    diagnostics: [
      {
        code: "HL2010",
        line: 6,
        column: 36,
        message:
          'plugin "gates" is already included at 6:20 in composition "run"; include each plugin once',
      },
    ],
    lineDifference: AT_THE_OFFENDING_TOKEN,
  },
  "duplicate-plugin-version": {
    diagnostics: [
      {
        code: "HL2004",
        line: 7,
        column: 11,
        message:
          'duplicate plugin version "gates@1.0.0": first declared at memory://harness/0.harness:4:24; declare each version of a plugin once',
      },
    ],
    lineDifference: AT_THE_OFFENDING_TOKEN,
  },
  "duplicate-requirement": {
    diagnostics: [
      {
        code: "HL2005",
        line: 9,
        column: 11,
        message:
          'component "gate" is already required at 8:11 in composition "run"; state each requirement once',
      },
    ],
    lineDifference: AT_THE_OFFENDING_TOKEN,
  },
  "include-missing-plugin": {
    diagnostics: [
      {
        code: "HL2015",
        line: 7,
        column: 36,
        message:
          'unknown plugin "missing" in the include list of composition "run"; declare it with "plugin missing { version "1.0.0" provides [ … ] }"',
      },
    ],
  },
  "invalid-include-range": {
    diagnostics: [
      {
        code: "HL2012",
        line: 6,
        column: 25,
        message:
          'include range "@1.2.3.4" of plugin "gates" is not a valid semver range: write @ then an optional ~ or ^ and a version, e.g. @1, @^1.2, @~1.2.3 or @1.2.0',
      },
    ],
    lineDifference: AT_THE_OFFENDING_TOKEN,
  },
  "invalid-semver": {
    diagnostics: [
      {
        code: "HL2011",
        line: 4,
        column: 11,
        message:
          'plugin "gates" declares version "1.0", which is not a valid semantic version: write MAJOR.MINOR.PATCH, e.g. "1.0.0" or "1.2.0-rc.1"',
      },
    ],
    lineDifference: AT_THE_OFFENDING_TOKEN,
  },
  "missing-minimum": {
    diagnostics: [
      {
        code: "HL1009",
        line: 8,
        column: 11,
        message:
          'requirement "gate" has no "minimum": add "minimum <strength>" with strength one of "unsupported", "advisory", "wired" or "enforced" (or write a bare "require gate" for minimum advisory)',
      },
    ],
    lineDifference:
      "clauses of a requirement may come in any order, so the missing minimum is reported at the requirement (the reference's parser fails at the next token, then reports a cascade error at the closing brace)",
  },
  "preferred-below-minimum": {
    diagnostics: [
      {
        code: "HL2013",
        line: 9,
        column: 15,
        message:
          'preferred strength "advisory" is below the minimum "wired" for component "gate"; preferred must be at least the minimum',
      },
    ],
  },
  "repeated-input": {
    diagnostics: [
      {
        code: "HL2007",
        line: 4,
        column: 23,
        message: 'duplicate input "source" in component "analyzer": already listed at 4:11',
      },
    ],
    lineDifference: AT_THE_OFFENDING_TOKEN,
  },
  "repeated-provided-component": {
    diagnostics: [
      {
        code: "HL2009",
        line: 6,
        column: 57,
        message: 'plugin "gates" provides component "gate" twice (first at 6:24)',
      },
    ],
    lineDifference: AT_THE_OFFENDING_TOKEN,
  },
  "syntax-error": {
    diagnostics: [
      {
        code: "HL1005",
        line: 3,
        column: 14,
        message: 'expected "for" after "binding gate", found "pi"',
      },
    ],
  },
  "unknown-component-kind": {
    diagnostics: [
      {
        code: "HL1006",
        line: 3,
        column: 8,
        message:
          'expected one of "skill", "tool", "program", "workflow", "hook", "policy", "observer", "ui", "instructions" or "subagent" after "kind", found "gadget"',
      },
    ],
  },
  "unresolved-component-reference": {
    diagnostics: [
      {
        code: "HL2014",
        line: 3,
        column: 9,
        message:
          'unknown component "gaet" in a binding (did you mean "gate"?); declare it with "component gaet { kind … }"',
      },
    ],
  },
};

const invalidDir = join(expectedDir, "invalid");
const invalidCases = readdirSync(invalidDir)
  .filter((file) => file.endsWith(".expected.json"))
  .sort()
  .map((file) => JSON.parse(read(join(invalidDir, file))) as ReferenceInvalidCase);

describe("conformance: invalid programs", () => {
  it("has an expectation for every invalid program of the folder", () => {
    expect(invalidCases.map((c) => c.case).sort()).toEqual(Object.keys(INVALID).sort());
  });

  for (const reference of invalidCases) {
    const expectation = INVALID[reference.case];
    it(`${reference.case}: ${reference.stage === "compile" ? "rejects it with structured diagnostics" : "compiles it and fails resolution like the reference"}`, () => {
      expect(expectation).toBeDefined();
      const text = read(join(invalidDir, reference.input.file));
      const { bundle, diagnostics } = compileHarness(text);
      expect(bundle !== undefined).toBe(reference.compile?.bundleReturned);
      expect(
        diagnostics.map(({ code, line, column, message }) => ({ code, line, column, message })),
      ).toEqual(expectation!.diagnostics);
      for (const diagnostic of diagnostics) {
        expect(diagnostic.uri).toBe("memory://harness/0.harness");
        expect(diagnostic.severity).toBe("error");
      }
      const referenceLines = [...new Set(reference.compile?.diagnostics.map((d) => d.line))];
      const ourLines = [...new Set(diagnostics.map((d) => d.line))];
      if (expectation!.lineDifference === undefined) expect(ourLines).toEqual(referenceLines);
      else expect(ourLines).not.toEqual(referenceLines);
      for (const { compositionId, result } of reference.resolve ?? []) {
        expect(bundle).toBeDefined();
        expect(asReferenceFile(resolveComposition(bundle!, compositionId))).toBe(
          asReferenceFile(result),
        );
      }
    });
  }
});

describe("conformance: resolver-only cases (hand-edited bundles)", () => {
  for (const name of ["plugin-not-in-registry", "unknown-composition"]) {
    it(`${name}: fails with the reference's report`, () => {
      const reference = JSON.parse(
        read(join(registryDir, `${name}.expected.json`)),
      ) as ReferenceInvalidCase;
      const bundle = JSON.parse(read(join(registryDir, reference.input.file))) as HarnessIrBundle;
      for (const { compositionId, result } of reference.resolve ?? []) {
        expect(asReferenceFile(resolveComposition(bundle, compositionId))).toBe(
          asReferenceFile(result),
        );
      }
    });
  }
});

describe("conformance: the vendored copy", () => {
  const sharedPresent = existsSync(sharedRoot);
  it.skipIf(!sharedPresent)(
    `equals ../shared/conformance/harness-v0.1 file by file${sharedPresent ? "" : " (skipped: that folder is not present in this checkout)"}`,
    () => {
      const listHarnessData = (dir: string, prefix = ""): string[] =>
        readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
          const relative = join(prefix, entry.name);
          if (entry.isDirectory()) return listHarnessData(dir, relative);
          const isData = relative.startsWith("expected") || relative.endsWith(".harness");
          return isData ? [relative] : [];
        });
      const shared = listHarnessData(sharedRoot).sort();
      expect(listHarnessData(root).sort()).toEqual(shared);
      for (const file of shared) {
        expect(read(join(root, file)), file).toBe(read(join(sharedRoot, file)));
      }
    },
  );
});
