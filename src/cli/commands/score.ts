import { resolve } from "node:path";
import type { Command } from "commander";
import type {
  Difference,
  ReadCheck,
  RepoState,
  ScoringResult,
  ScoringSpec,
} from "../../scoring/index.js";
import {
  type InputProblem,
  InvalidInputError,
  readJsonFile,
  readTextFile,
  type Validated,
} from "../../shared/index.js";
import { type CliIO, EXIT, jsonErrorDocument, type SetExitCode } from "../io.js";

interface ScoreOptions {
  spec: string;
  state?: string;
  report?: string;
  json?: boolean;
}

export function registerScoreCommand(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("score")
    .description(
      "score one forge submission against its scoring spec (exit 0 pass, 1 fail, 2 usage or invalid input)",
    )
    .requiredOption("--spec <file>", "the task's scoring spec (JSON): a mutation or a read spec")
    .option("--state <file>", "repository state after the run (JSON), for a mutation spec")
    .option("--report <file>", "the agent's final report (text), for a read spec")
    .option("--json", "print only the result document on stdout (the summary goes to stderr)")
    .action(async (options: ScoreOptions) => {
      setExit(await runScore(options, io));
    });
}

/** A problem that ends the command with exit 2; `lines` are printed as they are. */
class ScoreInputError extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join("\n"));
  }
}

const PROBLEMS_SHOWN = 20;
const DIFFERENCES_SHOWN = 100;

async function runScore(options: ScoreOptions, io: CliIO): Promise<number> {
  try {
    const result = await scoreFromFiles(options, io.cwd);
    const summary = renderHuman(result.outcome, result.spec, options);
    if (options.json) {
      io.stdout(`${JSON.stringify(result.outcome, null, 2)}\n`);
      io.stderr(summary);
    } else io.stdout(summary);
    return result.outcome.pass ? EXIT.ok : EXIT.fail;
  } catch (error) {
    if (!(error instanceof ScoreInputError)) throw error;
    for (const line of error.lines) io.stderr(`harness score: ${line}\n`);
    if (options.json) io.stdout(jsonErrorDocument(EXIT.usage, error.lines.join("\n")));
    return EXIT.usage;
  }
}

async function scoreFromFiles(
  options: ScoreOptions,
  cwd: string,
): Promise<{ spec: ScoringSpec; outcome: ScoringResult }> {
  // Loaded when a score runs, not for `harness --help` or `--version`.
  const { score, validateRepoState, validateScoringSpec } = await import("../../scoring/index.js");
  if (options.state !== undefined && options.report !== undefined)
    throw new ScoreInputError([
      "give either --state <file> (for a mutation spec) or --report <file> (for a read spec), not both",
    ]);
  if (options.state === undefined && options.report === undefined)
    throw new ScoreInputError([
      "give --state <file> (the repository state, for a mutation spec) or --report <file> (the agent's report, for a read spec)",
    ]);
  const spec = validated(
    options.spec,
    validateScoringSpec(await readJson(options.spec, cwd)),
    "scoring-spec",
  );
  if (spec.kind === "mutation") {
    if (options.state === undefined)
      throw new ScoreInputError([
        `${options.spec} is a mutation spec: give the repository state after the run with --state <file> (not --report)`,
      ]);
    const state: RepoState = validated(
      options.state,
      validateRepoState(await readJson(options.state, cwd)),
      "repo-state",
    );
    return { spec, outcome: score(spec, { kind: "mutation", state }) };
  }
  if (options.report === undefined)
    throw new ScoreInputError([
      `${options.spec} is a read spec: give the agent's final report with --report <file> (not --state)`,
    ]);
  const report = await inputFile(options.report, () => readTextFile(resolve(cwd, options.report!)));
  return { spec, outcome: score(spec, { kind: "read", report }) };
}

function readJson(file: string, cwd: string): Promise<unknown> {
  return inputFile(file, () => readJsonFile(resolve(cwd, file)));
}

/** Runs a file read, re-labelling its problems with the path as the user typed it. */
async function inputFile<T>(file: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof InvalidInputError)
      throw new ScoreInputError(problemLines(file, error.problems));
    throw error;
  }
}

function validated<T>(file: string, result: Validated<T>, schemaName: string): T {
  if (result.ok) return result.value;
  throw new ScoreInputError([
    ...problemLines(file, result.problems),
    `${file}: the format is described by schemas/${schemaName}.schema.json (in the harnesslab package)`,
  ]);
}

function problemLines(file: string, problems: readonly InputProblem[]): string[] {
  const lines = problems
    .slice(0, PROBLEMS_SHOWN)
    .map((p) =>
      p.path === "(file)" ? `${file}: ${p.message}` : `${file}: ${p.path}: ${p.message}`,
    );
  if (problems.length > PROBLEMS_SHOWN)
    lines.push(`${file}: … and ${problems.length - PROBLEMS_SHOWN} more problems`);
  return lines;
}

function renderHuman(outcome: ScoringResult, spec: ScoringSpec, options: ScoreOptions): string {
  if (outcome.kind === "read") return renderRead(outcome, options);
  const submitted = options.state ?? "";
  if (outcome.pass) {
    const expected = spec.kind === "mutation" ? spec.expected : {};
    return `PASS: ${submitted} matches the expected state in ${options.spec} (${count(
      expected.labels?.length ?? 0,
      "label",
    )}, ${count(expected.issues?.length ?? 0, "issue")}, ${count(
      expected.pullRequests?.length ?? 0,
      "pull request",
    )})\n`;
  }
  const notAsExpected = outcome.differences.filter((d) => !d.collateral);
  const collateral = outcome.differences.filter((d) => d.collateral);
  const lines = [
    `${submitted} does not match the expected state in ${options.spec}.`,
    ...renderGroup(
      "Not as expected: the actual state lacks or changes what the expected state asserts",
      notAsExpected,
    ),
    ...renderGroup("Collateral: the actual state has what the expected state does not", collateral),
    "",
    `FAIL: ${count(outcome.differences.length, "difference")} (${notAsExpected.length} not as expected, ${collateral.length} collateral)`,
  ];
  return `${lines.join("\n")}\n`;
}

function renderGroup(title: string, differences: readonly Difference[]): string[] {
  if (differences.length === 0) return [];
  const lines = ["", `${title} (${differences.length}):`];
  for (const difference of differences.slice(0, DIFFERENCES_SHOWN))
    lines.push(`  - ${difference.message}`, `      at ${difference.path}`);
  if (differences.length > DIFFERENCES_SHOWN)
    lines.push(`  … and ${differences.length - DIFFERENCES_SHOWN} more (--json lists them all)`);
  return lines;
}

function renderRead(outcome: ReadCheck, options: ScoreOptions): string {
  const lines = [`Facts required by ${options.spec} in ${options.report ?? ""}:`];
  outcome.facts.forEach((fact, index) => {
    if (!fact.present) {
      const missing = outcome.pass ? undefined : outcome.missing.find((m) => m.index === index);
      lines.push(`  [MISSING] ${missing?.message ?? fact.description}`);
    } else if (fact.match?.kind === "pattern")
      lines.push(
        `  [present] ${fact.description}: pattern matched ${JSON.stringify(fact.match.text)}`,
      );
    else
      lines.push(
        `  [present] ${fact.description}: found ${JSON.stringify(fact.match?.rendering ?? "")}`,
      );
  });
  lines.push("");
  lines.push(
    outcome.pass
      ? `PASS: all ${count(outcome.facts.length, "required fact")} present`
      : `FAIL: ${outcome.missing.length} of ${count(outcome.facts.length, "required fact")} missing`,
  );
  return `${lines.join("\n")}\n`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
