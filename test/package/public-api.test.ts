// The package's public surface is what src/api exports (package.json "exports" points there),
// and docs/library.md is its reference: the two must name the same things, so a new export is
// a decision someone documented, and a documented name cannot silently disappear.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ENTRY_FILES: Record<string, string> = {
  harnesslab: "index.ts",
  "harnesslab/ir": "ir.ts",
  "harnesslab/exec": "exec.ts",
  "harnesslab/compare": "compare.ts",
  "harnesslab/scoring": "scoring.ts",
  "harnesslab/stats": "stats.ts",
  "harnesslab/graders": "graders.ts",
  "harnesslab/forge": "forge.ts",
};

let exported: Map<string, string[]> | undefined;

/** Every name each entry file exports, values and types, `export *` followed (read once). */
function exportedNames(): Map<string, string[]> {
  exported ??= readExportedNames();
  return exported;
}

function readExportedNames(): Map<string, string[]> {
  const files = Object.values(ENTRY_FILES).map((file) => join(root, "src", "api", file));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const names = new Map<string, string[]>();
  for (const [entry, file] of Object.entries(ENTRY_FILES)) {
    const source = program.getSourceFile(join(root, "src", "api", file));
    const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
    if (symbol === undefined) throw new Error(`src/api/${file} is not a module`);
    names.set(
      entry,
      checker.getExportsOfModule(symbol).map((s) => s.name),
    );
  }
  return names;
}

/** The names docs/library.md lists under each entry's heading (bullet lines only). */
function documentedNames(): Map<string, string[]> {
  const names = new Map<string, string[]>();
  let entry: string | undefined;
  for (const line of readFileSync(join(root, "docs", "library.md"), "utf8").split("\n")) {
    const heading = /^## `([^`]+)`$/.exec(line);
    if (heading !== null) {
      entry = heading[1] as string;
      names.set(entry, []);
      continue;
    }
    if (entry === undefined || !line.startsWith("- ")) continue;
    const list = line.slice(line.indexOf(":") + 1);
    for (const match of list.matchAll(/`([A-Za-z_$][\w$]*)`/g))
      names.get(entry)?.push(match[1] as string);
  }
  return names;
}

describe("the public API", () => {
  it("is the package's export map: one src/api file per entry point", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
    };
    const mapped = Object.entries(pkg.exports)
      .filter(([path]) => path !== "./package.json")
      .map(([path, target]) => [
        path === "." ? "harnesslab" : `harnesslab/${path.slice(2)}`,
        (target as { import: string }).import,
      ]);
    expect(Object.fromEntries(mapped)).toEqual(
      Object.fromEntries(
        Object.entries(ENTRY_FILES).map(([entry, file]) => [
          entry,
          `./dist/api/${file.replace(/\.ts$/, ".js")}`,
        ]),
      ),
    );
  });

  it("is what docs/library.md lists, entry by entry, each name once", () => {
    const documented = documentedNames();
    expect([...documented.keys()].sort()).toEqual(Object.keys(ENTRY_FILES).sort());
    for (const entry of Object.keys(ENTRY_FILES)) {
      const listed = documented.get(entry) ?? [];
      expect({ entry, repeated: listed.filter((n, i) => listed.indexOf(n) !== i) }).toEqual({
        entry,
        repeated: [],
      });
      const actual = new Set(exportedNames().get(entry));
      expect({
        entry,
        undocumented: [...actual].filter((n) => !listed.includes(n)).sort(),
        notExported: listed.filter((n) => !actual.has(n)).sort(),
      }).toEqual({ entry, undocumented: [], notExported: [] });
    }
  });

  it("keeps internals internal: no helper the review named is reachable from the package", () => {
    const everything = new Set([...exportedNames().values()].flat());
    for (const internal of ["mulberry32", "shuffleInPlace", "createRunLock", "sealRecord"])
      expect(everything.has(internal), internal).toBe(false);
  });
});
