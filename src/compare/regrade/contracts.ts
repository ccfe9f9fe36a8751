// `compare regrade --grader-contract …` (pure): which grader of which task is re-graded with
// which contract file. Each value is a bare file (only when exactly one grader of the run takes
// a contract), `<grader-id>=<file>` (that grader in every task that has it) or
// `<task>/<grader-id>=<file>` (one task's grader, which wins over an unqualified value).
import type { InputProblem, Validated } from "../../shared/index.js";
import type { GraderSpec, TaskSpec } from "../experiment.js";

/** One `--grader-contract` value, split; `file` is as given (the caller resolves it). */
export interface GraderContractArg {
  /** The value as given, for messages. */
  given: string;
  task: string | null;
  grader: string | null;
  file: string;
}

/** A grader whose contract is replaced, and the file to read instead. */
export interface ContractOverride {
  task: string;
  grader: string;
  file: string;
  /** The `--grader-contract` value that chose it. */
  given: string;
}

const ID = "[a-z0-9]+(?:-[a-z0-9]+)*";
const TARGET = new RegExp(`^(?:(${ID})/)?(${ID})$`);

/** Kinds of grader that read a contract file (the rest take none). */
const CONTRACT_KINDS: ReadonlySet<GraderSpec["kind"]> = new Set(["readme-package-v1"]);

/**
 * Splits one value. A value counts as `<target>=<file>` only when the part before the first `=`
 * looks like a grader id (kebab-case, optionally `task/` in front); anything else, such as
 * `./a=b.json`, is a bare file.
 */
export function parseGraderContractArg(given: string): Validated<GraderContractArg> {
  const eq = given.indexOf("=");
  const target = eq < 0 ? null : TARGET.exec(given.slice(0, eq));
  if (target) {
    const file = given.slice(eq + 1);
    if (file === "")
      return problem(
        given,
        "expected a contract file after `=`, e.g. readme-package-v1=strict.json",
      );
    return { ok: true, value: { given, task: target[1] ?? null, grader: target[2] ?? null, file } };
  }
  if (given.trim() === "")
    return problem(
      given,
      "expected a contract file, <grader-id>=<file> or <task>/<grader-id>=<file>",
    );
  return { ok: true, value: { given, task: null, grader: null, file: given } };
}

function problem(given: string, message: string): { ok: false; problems: InputProblem[] } {
  return { ok: false, problems: [{ path: `--grader-contract ${given}`, message }] };
}

const qualified = (task: string, grader: string) => `${task}/${grader}`;

/**
 * Matches the values against the experiment's graders. Every problem is reported at once, each
 * under the value that caused it; nothing is read here.
 */
export function resolveGraderContracts(
  args: readonly GraderContractArg[],
  tasks: readonly Pick<TaskSpec, "id" | "graders">[],
): Validated<ContractOverride[]> {
  const takers = tasks.flatMap((task) =>
    task.graders
      .filter((g) => CONTRACT_KINDS.has(g.kind))
      .map((g) => ({ task: task.id, grader: g.id })),
  );
  const takerList =
    takers.length === 0
      ? "none in this run (only readme-package-v1 graders take a contract)"
      : takers.map((t) => qualified(t.task, t.grader)).join(", ");
  const problems: InputProblem[] = [];
  // Key → the override and how specific the value that chose it was (2: task/grader, 1: grader, 0: bare).
  const chosen = new Map<string, { override: ContractOverride; level: number }>();

  for (const arg of args) {
    const path = `--grader-contract ${arg.given}`;
    let targets: { task: string; grader: string }[];
    let level: number;
    if (arg.grader === null) {
      level = 0;
      if (takers.length !== 1) {
        problems.push({
          path,
          message:
            takers.length === 0
              ? `no grader of this run takes a contract (only readme-package-v1 graders do)`
              : `a bare file is allowed only when exactly one grader takes a contract; these do: ${takerList}; name one as <grader-id>=<file> or <task>/<grader-id>=<file>`,
        });
        continue;
      }
      targets = takers;
    } else if (arg.task !== null) {
      level = 2;
      const task = tasks.find((t) => t.id === arg.task);
      const grader = task?.graders.find((g) => g.id === arg.grader);
      if (!task) {
        problems.push({
          path,
          message: `unknown task "${arg.task}"; the run's tasks: ${tasks.map((t) => t.id).join(", ")}; graders that take a contract: ${takerList}`,
        });
        continue;
      }
      if (!grader) {
        problems.push({
          path,
          message: `task ${task.id} has no grader "${arg.grader}" (its graders: ${task.graders.map((g) => g.id).join(", ") || "none"}); graders that take a contract: ${takerList}`,
        });
        continue;
      }
      if (!CONTRACT_KINDS.has(grader.kind)) {
        problems.push({
          path,
          message: `grader ${qualified(task.id, grader.id)} is a ${grader.kind} grader and takes no contract; graders that take one: ${takerList}`,
        });
        continue;
      }
      targets = [{ task: task.id, grader: grader.id }];
    } else {
      level = 1;
      const named = tasks.flatMap((task) =>
        task.graders.filter((g) => g.id === arg.grader).map((g) => ({ task: task.id, grader: g })),
      );
      if (named.length === 0) {
        problems.push({
          path,
          message: `unknown grader id "${arg.grader}"; graders that take a contract: ${takerList}`,
        });
        continue;
      }
      const withContract = named.filter((n) => CONTRACT_KINDS.has(n.grader.kind));
      if (withContract.length === 0) {
        const kinds = [...new Set(named.map((n) => n.grader.kind))].join("/");
        problems.push({
          path,
          message: `grader "${arg.grader}" is a ${kinds} grader and takes no contract; graders that take one: ${takerList}`,
        });
        continue;
      }
      targets = withContract.map((n) => ({ task: n.task, grader: n.grader.id }));
    }

    for (const target of targets) {
      const key = qualified(target.task, target.grader);
      const earlier = chosen.get(key);
      if (earlier && earlier.level === level) {
        problems.push({
          path,
          message: `${key} already gets its contract from --grader-contract ${earlier.override.given}`,
        });
        continue;
      }
      if (earlier && earlier.level > level) continue;
      chosen.set(key, { override: { ...target, file: arg.file, given: arg.given }, level });
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  const overrides = [...chosen.values()].map((c) => c.override);
  overrides.sort((a, b) => taskOrder(tasks, a.task) - taskOrder(tasks, b.task));
  return { ok: true, value: overrides };
}

function taskOrder(tasks: readonly Pick<TaskSpec, "id">[], id: string): number {
  return tasks.findIndex((t) => t.id === id);
}

/** The tasks with the overridden graders reading their contract from the given files. */
export function applyContractOverrides<T extends Pick<TaskSpec, "id" | "graders">>(
  tasks: readonly T[],
  overrides: readonly ContractOverride[],
): T[] {
  return tasks.map((task) => ({
    ...task,
    graders: task.graders.map((grader): GraderSpec => {
      const override = overrides.find((o) => o.task === task.id && o.grader === grader.id);
      return override && grader.kind === "readme-package-v1"
        ? { ...grader, contractFile: override.file }
        : grader;
    }),
  }));
}
