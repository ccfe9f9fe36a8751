// Property tests: the compiler never throws, always terminates, and every diagnostic it returns
// is well-formed and points inside the text it was given.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/ir/index.js";
import { compileHarness, DIAGNOSTIC_CODES } from "../../src/language/index.js";
import { readExample } from "./support.js";

const fullSurface = readExample("full-surface.harness");
const KNOWN_CODES = new Set(Object.keys(DIAGNOSTIC_CODES));

function assertWellFormed(text: string): void {
  const result = compileHarness(text);
  const lines = text.split("\n");
  for (const d of result.diagnostics) {
    expect(KNOWN_CODES.has(d.code), d.code).toBe(true);
    expect(d.message.length).toBeGreaterThan(0);
    expect(d.line).toBeGreaterThanOrEqual(1);
    expect(d.line).toBeLessThanOrEqual(lines.length);
    expect(d.column).toBeGreaterThanOrEqual(1);
    // A column may point one past the end of its line (end of file, missing token).
    expect(d.column).toBeLessThanOrEqual((lines[d.line - 1]?.length ?? 0) + 2);
  }
  const hasError = result.diagnostics.some((d) => d.severity === "error");
  expect(result.bundle === undefined).toBe(hasError);
}

const TOKENS = [
  "component",
  "binding",
  "plugin",
  "composition",
  "kind",
  "skill",
  "policy",
  "description",
  "input",
  "output",
  "permissions",
  "workspace",
  "read",
  "deny",
  "for",
  "mechanism",
  "strength",
  "advisory",
  "enforced",
  "notes",
  "version",
  "provides",
  "target",
  "include",
  "require",
  "preferred",
  "minimum",
  "on-degrade",
  "fail",
  "configure",
  "extends",
  "true",
  "gate",
  "pi",
  "a.b",
  "component.gate",
  "plugin.gates",
  "@1",
  "@^1.2",
  "@",
  "{",
  "}",
  "[",
  "]",
  ",",
  ".",
  "=",
  '"text"',
  '"1.0.0"',
  '"unterminated',
  "42",
  "10m",
  "5min",
  "1.5",
  "// comment",
  "/* c */",
  "/*",
  "\n",
  ";",
  "é",
];

describe("compiler robustness", () => {
  it("never throws on arbitrary text and returns well-formed diagnostics", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        assertWellFormed(text);
      }),
      { numRuns: 300, seed: 20_260_101 },
    );
  });

  it("never throws on token soup built from the language's own vocabulary", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TOKENS), { maxLength: 80 }), (tokens) => {
        assertWellFormed(tokens.join(" "));
      }),
      { numRuns: 500, seed: 7 },
    );
  });

  it("never throws when a valid program is damaged by deleting or inserting text", () => {
    fc.assert(
      fc.property(
        fc.nat({ max: fullSurface.length }),
        fc.nat({ max: 40 }),
        fc.constantFrom(...TOKENS, ""),
        (at, length, insert) => {
          const damaged = fullSurface.slice(0, at) + insert + fullSurface.slice(at + length);
          assertWellFormed(damaged);
        },
      ),
      { numRuns: 200, seed: 42 },
    );
  });

  it("gives the same result for the same input, every time", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }), (tokens) => {
        const text = tokens.join(" ");
        expect(canonicalJson(compileHarness(text))).toBe(canonicalJson(compileHarness(text)));
      }),
      { numRuns: 100, seed: 3 },
    );
  });
});
