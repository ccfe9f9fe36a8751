// Checks that every variant's composition exists in the experiment's harness files and
// targets the runtime's host. The catalog comes from the compiler; this module only
// compares names, so it stays independent of how `.harness` files are compiled.
import { relative } from "node:path";
import type { InputProblem } from "../../shared/index.js";
import {
  type Experiment,
  FORGE_ACCESS_SETTING,
  FORGE_ACCESS_VALUES,
  runtimeOf,
} from "../experiment.js";

/** What the compiled harness files define: composition id → its target host. */
export interface CompositionCatalog {
  compositions: Map<
    string,
    {
      targetHost: string;
      /** Absolute path of the defining file. */
      file?: string;
      /** The composition's `forge.access` setting as written, when it sets one. */
      forgeAccess?: unknown;
    }
  >;
}

/** Builds the catalog from the harness files (compile them); compile errors are problems. */
export type CatalogLoader = (
  harnessFiles: readonly string[],
) => CatalogLoadResult | Promise<CatalogLoadResult>;

export type CatalogLoadResult =
  | { ok: true; catalog: CompositionCatalog }
  | { ok: false; problems: InputProblem[] };

export interface CompositionReference {
  /** JSON path of the field naming the composition. */
  field: string;
  composition: string;
  /** The host the composition must target, when known, and the field that chose it. */
  host?: { id: string; field: string };
}

function portableRelative(from: string, to: string): string {
  return relative(from, to).split("\\").join("/");
}

/** Problems for composition references against a catalog. */
export function compositionReferenceProblems(
  references: readonly CompositionReference[],
  harnessFiles: readonly string[],
  manifestDir: string,
  catalog: CompositionCatalog,
): InputProblem[] {
  const problems: InputProblem[] = [];
  const where = harnessFiles.map((file) => portableRelative(manifestDir, file)).join(", ");
  const available = [...catalog.compositions.keys()].sort();
  for (const reference of references) {
    const found = catalog.compositions.get(reference.composition);
    if (found === undefined) {
      problems.push({
        path: reference.field,
        message: `composition ${JSON.stringify(reference.composition)} not found in ${where}; available: ${available.length > 0 ? available.join(", ") : "(none)"}`,
      });
      continue;
    }
    if (
      found.forgeAccess !== undefined &&
      !(FORGE_ACCESS_VALUES as readonly unknown[]).includes(found.forgeAccess)
    )
      problems.push({
        path: reference.field,
        message: `composition ${JSON.stringify(reference.composition)} sets ${FORGE_ACCESS_SETTING} = ${JSON.stringify(found.forgeAccess)}; allowed: ${FORGE_ACCESS_VALUES.map((v) => JSON.stringify(v)).join(", ")} (how the agent reaches a forge task's repository)`,
      });
    const host = reference.host;
    if (host !== undefined && found.targetHost !== host.id) {
      const file =
        found.file === undefined ? "" : ` in ${portableRelative(manifestDir, found.file)}`;
      problems.push({
        path: reference.field,
        message: `composition ${JSON.stringify(reference.composition)}${file} targets ${JSON.stringify(found.targetHost)} but ${host.field} is ${JSON.stringify(host.id)}; use a composition for ${JSON.stringify(host.id)} or change ${host.field}`,
      });
    }
  }
  return problems;
}

/** Every variant's composition must exist in the catalog and target the variant's host. */
export function checkCompositions(
  experiment: Experiment,
  catalog: CompositionCatalog,
): InputProblem[] {
  return compositionReferenceProblems(
    experiment.variants.map((variant) => ({
      field: variant.compositionField,
      composition: variant.composition,
      host: {
        id: runtimeOf(experiment, variant).host,
        field: variant.runtime === undefined ? "runtime.host" : `the variant's host`,
      },
    })),
    experiment.harnessFiles,
    experiment.manifestDir,
    catalog,
  );
}
