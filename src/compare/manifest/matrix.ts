// A manifest's `matrix`: variants as the cross product of a few axes (models × compositions,
// hosts × models), expanded into ordinary variants before anything else checks them, so every
// rule that holds for a written variant holds for an expanded one. Problems found later on an
// expanded variant name it by its matrix id, not by an index the author never wrote.
import { type InputProblem, isRecord } from "../../shared/index.js";
import { valueAt } from "./problems.js";
import { MATRIX_VALUE_FIELDS, matrixSchema } from "./schema-v2.js";

/** The most variants an experiment may compare. */
const MAX_VARIANTS = 16;

/** Joins the id parts of one expanded variant. */
const MATRIX_ID_SEPARATOR = "_";

export interface MatrixExpansion {
  /** The document with the matrix's variants appended to `variants` (the input when none). */
  root: unknown;
  problems: InputProblem[];
  /** Index in the expanded `variants` → the variant's matrix id. */
  expanded: Map<number, string>;
  /** False when the matrix is malformed (its schema problems are reported on their own). */
  expandedAll: boolean;
}

interface AxisEntry {
  idPart: string;
  fields: Record<string, unknown>;
  /** JSON path of the entry, for problems. */
  path: string;
}

/** A plain value's id part: characters outside [A-Za-z0-9-] become "-"; numbers name their field. */
function idPartOf(field: string, value: string | number): string {
  if (typeof value === "number") return `${field}-${value}`;
  return value.replace(/[^A-Za-z0-9-]+/g, "-").replace(/^-+|-+$/g, "") || field;
}

/**
 * Expands `matrix` into variants appended after the written ones, axis by axis in the order the
 * manifest writes them (the first axis varies slowest). A malformed matrix expands to nothing.
 */
export function expandMatrix(root: unknown): MatrixExpansion {
  const none = { root, problems: [], expanded: new Map<number, string>() };
  if (!isRecord(root) || !Object.hasOwn(root, "matrix")) return { ...none, expandedAll: true };
  const parsed = matrixSchema.safeParse(root.matrix);
  if (!parsed.success) return { ...none, expandedAll: false };
  const problems: InputProblem[] = [];
  const axes: AxisEntry[][] = [];
  for (const [axis, values] of Object.entries(parsed.data)) {
    const entries: AxisEntry[] = [];
    values.forEach((value, index) => {
      const path = `matrix.${axis}[${index}]`;
      if (isRecord(value)) {
        const { id, ...fields } = value;
        entries.push({ idPart: id, fields, path });
        return;
      }
      if (!(MATRIX_VALUE_FIELDS as readonly string[]).includes(axis)) {
        problems.push({
          path,
          message: `a plain value sets the variant field its axis is named after, and "${axis}" is not one (${MATRIX_VALUE_FIELDS.join(", ")}); rename the axis or write {"id": "...", <fields>}`,
        });
        return;
      }
      entries.push({ idPart: idPartOf(axis, value), fields: { [axis]: value }, path });
    });
    const firstWithPart = new Map<string, AxisEntry>();
    for (const entry of entries) {
      const earlier = firstWithPart.get(entry.idPart.toLowerCase());
      if (earlier === undefined) firstWithPart.set(entry.idPart.toLowerCase(), entry);
      else
        problems.push({
          path: entry.path,
          message: `gives the id part ${JSON.stringify(entry.idPart)} as ${earlier.path} does; each entry of an axis needs its own (list a value once, or write {"id": "...", ...})`,
        });
    }
    axes.push(entries);
  }
  if (problems.length > 0) return { ...none, problems, expandedAll: false };
  // A malformed `variants` is reported by the schema; nothing is added to it.
  if (Object.hasOwn(root, "variants") && !Array.isArray(root.variants))
    return { ...none, expandedAll: false };
  const written = (root.variants as unknown[] | undefined) ?? [];
  // Counted before anything is built: a few wide axes multiply into millions of variants.
  const size = axes.reduce((product, entries) => product * entries.length, 1);
  if (written.length + size > MAX_VARIANTS)
    return {
      ...none,
      problems: [
        {
          path: "matrix",
          message: `expands to ${size} variants (${axes.map((a) => a.length).join(" × ")})${written.length > 0 ? ` besides the ${written.length} under variants` : ""}; expected 2 to ${MAX_VARIANTS} in all`,
        },
      ],
      expandedAll: false,
    };

  let combinations: AxisEntry[][] = [[]];
  for (const entries of axes)
    combinations = combinations.flatMap((chosen) => entries.map((entry) => [...chosen, entry]));
  const expanded = new Map<number, string>();
  const variants: unknown[] = [...written];
  const clashes = new Set<string>();
  for (const chosen of combinations) {
    const variant: Record<string, unknown> = {};
    const setBy = new Map<string, AxisEntry>();
    for (const entry of chosen)
      for (const [field, value] of Object.entries(entry.fields)) {
        const earlier = setBy.get(field);
        if (earlier !== undefined) {
          const key = `${entry.path}.${field}`;
          if (!clashes.has(key))
            problems.push({
              path: key,
              message: `is also set by ${earlier.path}; each variant field comes from one axis`,
            });
          clashes.add(key);
          continue;
        }
        setBy.set(field, entry);
        variant[field] = value;
      }
    const id = chosen.map((entry) => entry.idPart).join(MATRIX_ID_SEPARATOR);
    expanded.set(variants.length, id);
    variants.push({ id, ...variant });
  }
  if (problems.length > 0) return { ...none, problems, expandedAll: false };
  return { root: { ...root, variants }, problems, expanded, expandedAll: true };
}

/**
 * Problems on an expanded variant, renamed to where the author can find it: `variants[3].model`
 * becomes `matrix[opus_verified].model`.
 */
export function namedForMatrix(
  problems: readonly InputProblem[],
  expanded: ReadonlyMap<number, string>,
): InputProblem[] {
  if (expanded.size === 0) return [...problems];
  const rename = (text: string) =>
    text.replace(/variants\[(\d+)\]/g, (whole, index: string) => {
      const id = expanded.get(Number(index));
      return id === undefined ? whole : `matrix[${id}]`;
    });
  return problems.map((problem) => ({
    path: rename(problem.path),
    message: rename(problem.message),
  }));
}

/** The number of variants the document lists once expanded, when it can be told. */
export function variantCount(root: unknown): number | undefined {
  const variants = valueAt(root, ["variants"]).value;
  return Array.isArray(variants) ? variants.length : undefined;
}
