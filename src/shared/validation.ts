import type { z } from "zod";

/** One problem found in an input document, located by a JSON path such as `issues[3].labels[1]`. */
export interface InputProblem {
  path: string;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; problems: InputProblem[] };

/** Renders a zod issue path the way a person reads JSON: `issues[3].labels[1]`, `(root)` for the document. */
export function formatJsonPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][\w$]*$/.test(segment))
      out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(String(segment))}]`;
  }
  return out === "" ? "(root)" : out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}${"input" in issue && issue.input === undefined ? " (missing)" : ""}`;
    case "unrecognized_keys":
      return `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => JSON.stringify(k)).join(", ")} (not allowed here)`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return issue.message;
  }
}

/** Flattens zod issues into path-named problems, keeping zod's (document) order. */
function problemsFromZod(error: z.ZodError): InputProblem[] {
  const problems: InputProblem[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        problems.push({
          path: formatJsonPath([...issue.path, key]),
          message: "unknown field (not allowed here)",
        });
      }
      continue;
    }
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      // Report the branch that got furthest instead of a bare "invalid input".
      const best = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
      for (const sub of best) {
        problems.push({
          path: formatJsonPath([...issue.path, ...sub.path]),
          message: describeIssue(sub),
        });
      }
      continue;
    }
    problems.push({ path: formatJsonPath(issue.path), message: describeIssue(issue) });
  }
  return problems;
}

export function validateWith<S extends z.ZodType>(
  schema: S,
  input: unknown,
): Validated<z.output<S>> {
  // reportInput lets messages tell a missing field from a wrong one.
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, problems: problemsFromZod(result.error) };
}

/** Where a problem concerns a file as a whole (missing, unreadable) rather than a place in it. */
const WHOLE_FILE = "(file)";

function formatProblems(problems: readonly InputProblem[], limit = 20): string {
  const shown = problems
    .slice(0, limit)
    .map((p) => (p.path === WHOLE_FILE ? `  ${p.message}` : `  ${p.path}: ${p.message}`));
  if (problems.length > limit) shown.push(`  … and ${problems.length - limit} more`);
  return shown.join("\n");
}

/** Thrown at a stage boundary when a document (file) is invalid; carries every problem found. */
/** "1 problem", "3 problems": the one way every command counts what it found. */
export function problemCount(count: number): string {
  return `${count} problem${count === 1 ? "" : "s"}`;
}

export class InvalidInputError extends Error {
  readonly source: string;
  readonly problems: InputProblem[];
  /** What the problems add up to (`cannot assemble the variants`). */
  readonly headline: string;
  constructor(source: string, problems: InputProblem[], what = "invalid input") {
    // A whole-file problem that only repeats the headline (`x.json: file not found`) is not listed again.
    const listed = problems.filter((p) => !(p.path === WHOLE_FILE && p.message === what));
    super(
      listed.length > 0 ? `${source}: ${what}\n${formatProblems(listed)}` : `${source}: ${what}`,
    );
    this.name = "InvalidInputError";
    this.source = source;
    this.problems = problems;
    this.headline = what;
  }
}
