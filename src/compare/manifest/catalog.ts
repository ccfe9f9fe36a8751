// The composition catalog of real `.harness` files, built with the compiler: what
// `loadManifest` checks variants against when the caller passes `loadCatalog`.
import { dirname } from "node:path";
import { FORGE_ACCESS_SETTING } from "../experiment.js";
import { compileHarnessFiles } from "../run/assemble.js";
import type { CatalogLoadResult, CompositionCatalog } from "./compositions.js";

/**
 * Compiles the harness files together (they may refer to each other) and lists their
 * compositions with each one's target host. Compile errors come back as problems at
 * `harness`, formatted `file:line:col: error CODE message` with the file relative to the
 * first harness file's directory.
 */
export async function loadHarnessCatalog(
  harnessFiles: readonly string[],
): Promise<CatalogLoadResult> {
  const baseDir = harnessFiles[0] === undefined ? "." : dirname(harnessFiles[0]);
  const compiled = await compileHarnessFiles(harnessFiles, baseDir);
  if (!compiled.ok) return { ok: false, problems: compiled.problems };
  const compositions: CompositionCatalog["compositions"] = new Map();
  for (const composition of compiled.bundle.compositions) {
    const access = composition.settings.find((s) => s.key === FORGE_ACCESS_SETTING)?.value;
    compositions.set(composition.id, {
      targetHost: composition.target,
      ...(access === undefined ? {} : { forgeAccess: access.value }),
    });
  }
  return { ok: true, catalog: { compositions } };
}
