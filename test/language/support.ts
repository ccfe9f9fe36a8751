import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { HarnessIrBundle } from "../../src/ir/index.js";
import { compileHarness, type Diagnostic } from "../../src/language/index.js";

const examplesDir = fileURLToPath(new URL("../../examples/", import.meta.url));

export function readExample(relative: string): string {
  return readFileSync(`${examplesDir}${relative}`, "utf8");
}

/** Compiles and fails the test, showing the diagnostics, if there is any error. */
export function compileOk(source: string | Array<{ uri: string; text: string }>): HarnessIrBundle {
  const { bundle, diagnostics } = compileHarness(source);
  expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  expect(bundle).toBeDefined();
  return bundle!;
}

export type Located = Pick<Diagnostic, "code" | "line" | "column">;

export function located(diagnostics: readonly Diagnostic[]): Located[] {
  return diagnostics.map(({ code, line, column }) => ({ code, line, column }));
}

/** The smallest valid program around a composition body, for tests of composition syntax. */
export function withComposition(body: string, extra = ""): string {
  return `component gate { kind policy }
binding gate for pi { mechanism extension-event strength enforced }
plugin gates { version "1.0.0" provides [ component.gate ] }
${extra}
composition run {
  target pi
  include [ plugin.gates@1 ]
${body}
}
`;
}
