// The composition catalog of real `.harness` files, built with the compiler: what
// `loadManifest` checks variants against when the caller passes `loadCatalog`.
import { readFile } from "node:fs/promises";
import { compileHarness, formatDiagnostic } from "../../language/index.js";
import type { CatalogLoadResult, CompositionCatalog } from "./compositions.js";

/**
 * Compiles the harness files together (they may refer to each other) and lists their
 * compositions with each one's target host. Compile errors come back as problems at
 * `harness`, formatted `file:line:col: error CODE message`.
 */
export async function loadHarnessCatalog(
  harnessFiles: readonly string[],
): Promise<CatalogLoadResult> {
  const sources: Array<{ uri: string; text: string }> = [];
  for (const file of harnessFiles) {
    try {
      sources.push({ uri: file, text: await readFile(file, "utf8") });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      return {
        ok: false,
        problems: [{ path: "harness", message: `${file} cannot be read (${code})` }],
      };
    }
  }
  const compiled = compileHarness(sources);
  if (compiled.bundle === undefined) {
    return {
      ok: false,
      problems: compiled.diagnostics
        .filter((diagnostic) => diagnostic.severity === "error")
        .map((diagnostic) => ({
          path: "harness",
          message: formatDiagnostic(diagnostic),
        })),
    };
  }
  const compositions: CompositionCatalog["compositions"] = new Map();
  for (const composition of compiled.bundle.compositions)
    compositions.set(composition.id, { targetHost: composition.target });
  return { ok: true, catalog: { compositions } };
}
