import { readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CompositionCatalog, checkOutDir, loadManifest } from "../../src/compare/index.js";
import {
  applySetup,
  BAD_CORPUS,
  listTree,
  makeWorkspace,
  type SetupStep,
  type Workspace,
} from "../fixtures/manifests/workspace.js";

interface CorpusCase {
  description: string;
  manifest?: unknown;
  manifestText?: string;
  setup?: SetupStep[];
  options?: { trialsOverride?: number };
  /** Composition id → target host. */
  catalog?: Record<string, string>;
  /** When set, the manifest is valid and this `--out` is what must be rejected. */
  out?: string;
  expect: Array<{ path: string; message: string }>;
  problemCount?: number;
}

const cases = readdirSync(BAD_CORPUS)
  .filter((file) => file.endsWith(".json"))
  .sort()
  .map((file) => ({
    name: file.replace(/\.json$/, ""),
    spec: JSON.parse(readFileSync(join(BAD_CORPUS, file), "utf8")) as CorpusCase,
  }));

function catalogFrom(spec: Record<string, string>): CompositionCatalog {
  return {
    compositions: new Map(Object.entries(spec).map(([id, targetHost]) => [id, { targetHost }])),
  };
}

let workspace: Workspace | undefined;
afterEach(async () => {
  await workspace?.cleanup();
  workspace = undefined;
});

describe("the bad-manifest corpus", () => {
  it("has cases", () => {
    expect(cases.length).toBeGreaterThan(50);
  });

  for (const { name, spec } of cases) {
    it(`${name}: ${spec.description}`, async () => {
      workspace = await makeWorkspace();
      await applySetup(workspace, spec.setup ?? []);
      const manifestPath = join(workspace.dir, "case.json");
      await writeFile(
        manifestPath,
        spec.manifestText ?? `${JSON.stringify(spec.manifest, null, 2)}\n`,
      );
      const before = await listTree(workspace.parent);
      const loaded = await loadManifest(manifestPath, {
        ...spec.options,
        ...(spec.catalog === undefined ? {} : { catalog: catalogFrom(spec.catalog) }),
      });

      let problems: Array<{ path: string; message: string }>;
      if (spec.out !== undefined) {
        expect(loaded.problems).toEqual([]);
        if (!loaded.ok) return;
        problems = await checkOutDir(join(workspace.dir, spec.out), loaded.experiment);
      } else {
        expect(loaded.ok).toBe(false);
        problems = loaded.problems;
      }
      for (const wanted of spec.expect) {
        expect(
          problems,
          `a problem at ${wanted.path} mentioning: ${wanted.message}`,
        ).toContainEqual(
          expect.objectContaining({
            path: wanted.path,
            message: expect.stringContaining(wanted.message),
          }),
        );
      }
      if (spec.problemCount !== undefined) expect(problems).toHaveLength(spec.problemCount);
      // Validation only reads: nothing was created, changed or removed.
      expect(await listTree(workspace.parent)).toEqual(before);
    });
  }
});
