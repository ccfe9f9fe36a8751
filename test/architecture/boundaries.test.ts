// The folder list is the architecture only while nothing imports against the flow: a stage
// reaches another only through its index.ts, and only the stages docs/ARCHITECTURE.md says it
// may. Imports are read with TypeScript's own pre-processor, so text that merely looks like an
// import (the templates `harness init` writes) is not one.
import { readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { glob } from "tinyglobby";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const src = join(root, "src");

/** Which stages each stage may import (docs/ARCHITECTURE.md, "Dependency direction"). */
const ALLOWED: Record<string, readonly string[]> = {
  // The package's public entry points: a curated selection from the stages' own surfaces.
  api: [
    "artifacts",
    "compare",
    "exec",
    "forge",
    "graders",
    "hosts",
    "ir",
    "language",
    "policy",
    "report",
    "resolver",
    "scoring",
    "shared",
    "stats",
  ],
  shared: [],
  ir: ["shared"],
  hosts: ["ir"],
  language: ["hosts", "ir"],
  resolver: ["hosts", "ir"],
  policy: ["shared"],
  sandbox: ["shared"],
  scoring: ["shared"],
  stats: [],
  workspace: ["shared"],
  forge: ["scoring", "shared"],
  graders: ["sandbox", "scoring", "shared"],
  exec: ["hosts", "ir", "policy", "sandbox", "shared", "workspace"],
  artifacts: ["exec", "graders", "policy", "stats"],
  report: ["artifacts", "stats"],
  compare: [
    "artifacts",
    "exec",
    "forge",
    "graders",
    "hosts",
    "ir",
    "language",
    "policy",
    "report",
    "resolver",
    "sandbox",
    "scoring",
    "shared",
    "stats",
    "workspace",
  ],
  cli: [
    "artifacts",
    "compare",
    "exec",
    "forge",
    "hosts",
    "ir",
    "language",
    "report",
    "resolver",
    "scoring",
    "shared",
  ],
};

/** Files at the top of src/ that gather every stage: the schema list. */
const GATHERERS: Record<string, RegExp> = {
  "schema-registry.ts": /^[a-z]+\/schemas\.js$/,
};

interface Edge {
  file: string;
  target: string;
}

async function crossStageImports(): Promise<Edge[]> {
  const edges: Edge[] = [];
  for (const file of await glob("**/*.ts", { cwd: src })) {
    const text = readFileSync(join(src, file), "utf8");
    for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
      if (!imported.fileName.startsWith(".")) continue;
      const target = relative(src, normalize(join(src, dirname(file), imported.fileName)));
      if (target.split("/")[0] === file.split("/")[0]) continue;
      edges.push({ file, target });
    }
  }
  return edges;
}

const stageOf = (path: string) => path.split("/")[0] as string;

describe("stage boundaries", () => {
  it("reaches another stage only through its index.ts", async () => {
    const offending = (await crossStageImports())
      .filter(({ file, target }) => {
        const gatherer = GATHERERS[file];
        if (gatherer !== undefined) return !gatherer.test(target);
        return !/^[a-z]+\/index\.js$/.test(target);
      })
      .map(({ file, target }) => `src/${file} imports src/${target}`);
    expect(offending).toEqual([]);
  });

  it("imports only the stages the dependency direction allows", async () => {
    const offending = (await crossStageImports())
      .filter(({ file }) => GATHERERS[file] === undefined)
      .filter(({ file, target }) => !(ALLOWED[stageOf(file)] ?? []).includes(stageOf(target)))
      .map(({ file, target }) => `src/${file} (${stageOf(file)}) imports ${stageOf(target)}`);
    expect(offending).toEqual([]);
  });

  it("names every stage folder in the dependency table, which has no cycle", async () => {
    const folders = new Set(
      (await glob("*/", { cwd: src, onlyDirectories: true })).map((d) => d.replace(/\/$/, "")),
    );
    expect([...folders].sort()).toEqual(Object.keys(ALLOWED).sort());
    const visiting = new Set<string>();
    const done = new Set<string>();
    const visit = (stage: string, path: string[]): void => {
      if (done.has(stage)) return;
      if (visiting.has(stage)) throw new Error(`cycle: ${[...path, stage].join(" → ")}`);
      visiting.add(stage);
      for (const next of ALLOWED[stage] ?? []) visit(next, [...path, stage]);
      visiting.delete(stage);
      done.add(stage);
    };
    for (const stage of Object.keys(ALLOWED)) visit(stage, []);
  });
});
