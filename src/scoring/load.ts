// Validation of scoring documents read from files: structure by the zod schemas in
// contract.ts, then the rules a JSON Schema cannot say (unique keys, usable facts).
// Pure: callers read the file and name it in their messages.
import {
  formatJsonPath,
  type InputProblem,
  type Validated,
  validateWith,
} from "../shared/index.js";
import { compileFactPattern, normalizeForMatching } from "./check-read-answer.js";
import {
  type RepoState,
  type RequiredFact,
  repoStateSchema,
  type ScoringSpec,
  type Submission,
  scoringSpecSchema,
  submissionSchema,
} from "./contract.js";

type JsonPath = ReadonlyArray<string | number>;

/** Validates a repository state document (e.g. a captured `actual.json`). */
export function validateRepoState(input: unknown): Validated<RepoState> {
  const parsed = validateWith(repoStateSchema, input);
  if (!parsed.ok) return parsed;
  return withProblems(parsed.value, repoStateProblems(parsed.value, []));
}

/** Validates a scoring spec; an invalid `pattern` is reported here, not when scoring. */
export function validateScoringSpec(input: unknown): Validated<ScoringSpec> {
  const parsed = validateWith(scoringSpecSchema, input);
  if (!parsed.ok) return parsed;
  const spec = parsed.value;
  const problems =
    spec.kind === "mutation"
      ? repoStateProblems(spec.expected, ["expected"])
      : spec.facts.flatMap((fact, index) => factProblems(fact, ["facts", index]));
  return withProblems(spec, problems);
}

/** Validates a submission document (`{kind:"mutation", state}` or `{kind:"read", report}`). */
export function validateSubmission(input: unknown): Validated<Submission> {
  const parsed = validateWith(submissionSchema, input);
  if (!parsed.ok) return parsed;
  const submission = parsed.value;
  const problems =
    submission.kind === "mutation" ? repoStateProblems(submission.state, ["state"]) : [];
  return withProblems(submission, problems);
}

function withProblems<T>(value: T, problems: InputProblem[]): Validated<T> {
  return problems.length === 0 ? { ok: true, value } : { ok: false, problems };
}

function repoStateProblems(state: RepoState, at: JsonPath): InputProblem[] {
  const problems: InputProblem[] = [];
  const labelNames = new Map<string, string>();
  (state.labels ?? []).forEach((label, index) => {
    const path = formatJsonPath([...at, "labels", index, "name"]);
    const first = labelNames.get(label.name);
    if (first === undefined) labelNames.set(label.name, formatJsonPath([...at, "labels", index]));
    else
      problems.push({
        path,
        message: `label ${JSON.stringify(label.name)} is defined twice (first at ${first})`,
      });
  });
  // Issues and pull requests share one number space on every forge, so a number may
  // appear once across both lists.
  const numbers = new Map<number, string>();
  const claim = (list: "issues" | "pullRequests", entities: ReadonlyArray<{ number: number }>) => {
    entities.forEach((entity, index) => {
      const first = numbers.get(entity.number);
      if (first === undefined) numbers.set(entity.number, formatJsonPath([...at, list, index]));
      else
        problems.push({
          path: formatJsonPath([...at, list, index, "number"]),
          message: `number ${entity.number} is already used by ${first} (issues and pull requests share one number space)`,
        });
    });
  };
  claim("issues", state.issues ?? []);
  claim("pullRequests", state.pullRequests ?? []);
  return problems;
}

function factProblems(fact: RequiredFact, at: JsonPath): InputProblem[] {
  const problems: InputProblem[] = [];
  fact.anyOf.forEach((rendering, index) => {
    if (normalizeForMatching(rendering) === "")
      problems.push({
        path: formatJsonPath([...at, "anyOf", index]),
        message:
          "a rendering must contain text (it is empty once case, whitespace, quotes and Markdown markers are normalized)",
      });
  });
  if (fact.pattern === undefined) {
    if (fact.anyOf.length === 0)
      problems.push({
        path: formatJsonPath([...at, "anyOf"]),
        message: "give at least one rendering, or a pattern",
      });
    return problems;
  }
  const compiled = compileFactPattern(fact.pattern);
  const patternPath = formatJsonPath([...at, "pattern"]);
  if (!compiled.ok)
    problems.push({
      path: patternPath,
      message: `not a valid regular expression (JavaScript, Unicode mode): ${compiled.message}`,
    });
  else if (compiled.regex.test(""))
    problems.push({
      path: patternPath,
      message: "the pattern matches an empty report, so this fact could never be missing",
    });
  return problems;
}
