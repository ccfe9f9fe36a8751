// `harness ci`'s experiment (pure): the manifest's setup under test twice, as the pull request's
// base has it and as the working tree has it. The base's files are the same paths under the
// folder the base was read into, so everything else of the manifest (tasks, graders, runtime,
// forge, budgets) is the one experiment both run in.

import { isRecord } from "../../shared/index.js";
import { parseAgentReference } from "../manifest/agents.js";

/** The two variants' ids in the derived experiment. */
export const CI_BASELINE = "base";
export const CI_CANDIDATE = "head";

export type DeriveResult =
  | {
      ok: true;
      document: Record<string, unknown>;
      /** The variant of the manifest under test. */
      variant: string;
      /** Manifest paths of the setup's files (harness files, a scripted agent's module). */
      setupPaths: string[];
    }
  | { ok: false; problem: { path: string; message: string } };

const plain = (path: string) => path.replace(/^(\.\/)+/, "");

/**
 * The derived manifest: the variant `variantId` (or the only one) as `base`, its paths under
 * `baseDir` (a folder inside the manifest's directory, named as the manifest names paths), and
 * as `head`, with `base` the baseline. The manifest's other variants and matrix go.
 */
export function deriveCiManifest(
  document: unknown,
  variantId: string | undefined,
  baseDir: string,
): DeriveResult {
  if (!isRecord(document) || !Array.isArray(document.variants))
    return {
      ok: false,
      problem: {
        path: "variants",
        message: `harness ci takes a harness-compare.v2 manifest with a variants list (the setup under test is one of them)`,
      },
    };
  if (Object.hasOwn(document, "matrix"))
    return {
      ok: false,
      problem: {
        path: "matrix",
        message:
          "harness ci compares one setup with itself at the base; write the variant under test in variants, not a matrix",
      },
    };
  const variants = document.variants.filter(isRecord);
  const ids = variants.map((v) => v.id).filter((id): id is string => typeof id === "string");
  const chosen =
    variantId === undefined
      ? variants.length === 1
        ? variants[0]
        : undefined
      : variants.find((v) => v.id === variantId);
  if (chosen === undefined)
    return {
      ok: false,
      problem: {
        path: "--variant",
        message:
          variantId === undefined
            ? `the manifest has ${variants.length} variants (${ids.join(", ")}); name the setup under test with --variant`
            : `no variant ${JSON.stringify(variantId)} in the manifest; it has ${ids.join(", ")}`,
      },
    };
  const harness = chosen.harness ?? document.harness;
  const harnessList = (
    typeof harness === "string" ? [harness] : Array.isArray(harness) ? harness : []
  ).filter((h): h is string => typeof h === "string");
  if (harnessList.length === 0)
    return {
      ok: false,
      problem: { path: "harness", message: "names no .harness file: there is no setup to compare" },
    };
  const under = (path: string) => `${baseDir}/${plain(path)}`;
  const setupPaths = [...harnessList];
  let baseAgent: unknown = chosen.agent;
  if (typeof chosen.agent === "string") {
    const parsed = parseAgentReference(chosen.agent);
    if (parsed.ok && parsed.agent.kind === "module") {
      setupPaths.push(parsed.agent.module);
      baseAgent = under(parsed.agent.module);
    } else if (parsed.ok && parsed.agent.kind === "oracle") {
      setupPaths.push(parsed.agent.patch);
      baseAgent = `oracle:${under(parsed.agent.patch)}`;
    }
  }
  const { id: _id, harness: _harness, ...rest } = chosen;
  const base: Record<string, unknown> = {
    ...rest,
    id: CI_BASELINE,
    harness: harnessList.map(under),
    ...(baseAgent === undefined ? {} : { agent: baseAgent }),
  };
  const head: Record<string, unknown> = {
    ...rest,
    id: CI_CANDIDATE,
    ...(chosen.harness === undefined ? {} : { harness: chosen.harness }),
  };
  return {
    ok: true,
    document: { ...document, variants: [base, head], baseline: CI_BASELINE },
    variant: typeof chosen.id === "string" ? chosen.id : CI_CANDIDATE,
    setupPaths,
  };
}
