// Turns zod issues into problems a person can act on: the field's JSON path, what is
// wrong with the value that is there, and what is allowed (for unknown fields, the list
// of fields that are allowed at that place).
import type { z } from "zod";
import { formatJsonPath, type InputProblem } from "../../shared/index.js";

type Segment = PropertyKey;

/** The value at `path` inside `root`, and whether it exists at all. */
export function valueAt(
  root: unknown,
  path: readonly Segment[],
): { exists: boolean; value: unknown } {
  let current: unknown = root;
  for (const segment of path) {
    if (current === null || typeof current !== "object") return { exists: false, value: undefined };
    if (!Object.hasOwn(current, segment as string)) return { exists: false, value: undefined };
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return { exists: true, value: current };
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string")
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return String(value);
}

interface SchemaDef {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  in?: z.ZodType;
  values?: unknown[];
}

function defOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;
}

/** Object schemas a value at `path` can be checked against (several for a non-discriminated union). */
function schemasAt(schema: z.ZodType, root: unknown, path: readonly Segment[]): z.ZodType[] {
  const def = defOf(schema);
  switch (def.type) {
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
      return schemasAt(def.innerType!, root, path);
    case "pipe":
      return schemasAt(def.in!, root, path);
    case "union": {
      const options = def.options ?? [];
      if (def.discriminator !== undefined) {
        const own = valueAt(root, []).value;
        const tag =
          own !== null && typeof own === "object"
            ? (own as Record<string, unknown>)[def.discriminator]
            : undefined;
        const matching = options.filter((option) => {
          const field = defOf(option).shape?.[def.discriminator!];
          return field !== undefined && (defOf(field).values ?? []).includes(tag);
        });
        return matching.flatMap((option) => schemasAt(option, root, path));
      }
      return options.flatMap((option) => schemasAt(option, root, path));
    }
    default:
      break;
  }
  if (path.length === 0) return [schema];
  const [head, ...rest] = path;
  const child = valueAt(root, [head!]).value;
  if (def.type === "object" && typeof head === "string" && def.shape?.[head] !== undefined)
    return schemasAt(def.shape[head], child, rest);
  if (def.type === "array" && typeof head === "number" && def.element !== undefined)
    return schemasAt(def.element, child, rest);
  return [];
}

/** The field names a strict object at `path` accepts, sorted; empty when unknown. */
function allowedFieldsAt(schema: z.ZodType, root: unknown, path: readonly Segment[]): string[] {
  const names = new Set<string>();
  for (const candidate of schemasAt(schema, root, path)) {
    for (const key of Object.keys(defOf(candidate).shape ?? {})) names.add(key);
  }
  return [...names].sort();
}

const TYPE_NAMES: Record<string, string> = {
  object: "an object",
  array: "a list",
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
};

function typeName(expected: string): string {
  return TYPE_NAMES[expected] ?? expected;
}

function isDefaultMessage(message: string): boolean {
  return /^(Invalid input|Invalid option|Too (big|small)|Invalid (string|discriminator))/.test(
    message,
  );
}

function quoteAll(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

function convert(
  issue: z.core.$ZodIssue,
  schema: z.ZodType,
  root: unknown,
  out: InputProblem[],
): void {
  const path = issue.path;
  const here = valueAt(root, path);
  const missing = !here.exists;
  switch (issue.code) {
    case "unrecognized_keys": {
      const allowed = allowedFieldsAt(schema, root, path);
      const hint = allowed.length > 0 ? `; allowed here: ${allowed.join(", ")}` : "";
      for (const key of issue.keys) {
        out.push({ path: formatJsonPath([...path, key]), message: `unknown field${hint}` });
      }
      return;
    }
    case "invalid_union": {
      const withDiscriminator = issue as z.core.$ZodIssueInvalidUnion & {
        note?: string;
        discriminator?: string;
        options?: unknown[];
      };
      if (withDiscriminator.note === "No matching discriminator") {
        // zod points at the discriminator field itself (e.g. `runtime.host`).
        const allowed = quoteAll(withDiscriminator.options ?? []);
        out.push({
          path: formatJsonPath(path),
          message: missing
            ? `is required; expected one of ${allowed}`
            : `${describeValue(here.value)} is not allowed; expected one of ${allowed}`,
        });
        return;
      }
      if (issue.errors.length > 0) {
        // Report the branch that accepted the value's type and got furthest, instead of
        // a bare "invalid input" (a list of bad paths should not read "expected a path").
        const typeMatched = issue.errors.filter(
          (branch) => !branch.some((sub) => sub.path.length === 0 && sub.code === "invalid_type"),
        );
        const candidates = typeMatched.length > 0 ? typeMatched : issue.errors;
        const best = candidates.reduce((a, b) => (b.length < a.length ? b : a));
        for (const sub of best)
          convert({ ...sub, path: [...path, ...sub.path] }, schema, root, out);
        return;
      }
      break;
    }
    case "invalid_type": {
      if (missing) {
        const what = isDefaultMessage(issue.message)
          ? `expected ${typeName(issue.expected)}`
          : issue.message;
        out.push({ path: formatJsonPath(path), message: `is required (${what})` });
        return;
      }
      const what = isDefaultMessage(issue.message)
        ? `expected ${typeName(issue.expected)}`
        : issue.message;
      out.push({ path: formatJsonPath(path), message: `${describeValue(here.value)}: ${what}` });
      return;
    }
    case "invalid_value": {
      const allowed = `expected ${issue.values.length === 1 ? "" : "one of "}${quoteAll(issue.values)}`;
      out.push({
        path: formatJsonPath(path),
        message: missing
          ? `is required (${allowed})`
          : `${describeValue(here.value)} is not allowed; ${allowed}`,
      });
      return;
    }
    default:
      break;
  }
  const prefix =
    missing || here.value === null || typeof here.value === "object"
      ? ""
      : `${describeValue(here.value)}: `;
  const message = issue.message;
  out.push({
    path: formatJsonPath(path),
    message: message.startsWith('"') || message.startsWith("is ") ? message : `${prefix}${message}`,
  });
}

/** One problem per field (the first zod raised for it), in the order zod found them. */
export function problemsFromIssues(
  issues: readonly z.core.$ZodIssue[],
  schema: z.ZodType,
  root: unknown,
): InputProblem[] {
  const all: InputProblem[] = [];
  for (const issue of issues) convert(issue, schema, root, all);
  const seen = new Set<string>();
  return all.filter((problem) => {
    if (seen.has(problem.path)) return false;
    seen.add(problem.path);
    return true;
  });
}
