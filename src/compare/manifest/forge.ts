// Forge tasks in a manifest: the rules that span fields (forge graders belong to forge tasks, a
// forge-state grader says its end state one way), and the documents the task names: the seed
// must be a state a forge can hold, the expected state or intended changes must fit that seed,
// and the facts must be usable. "Valid" means the run will start. Reads only.
import { resolve } from "node:path";
import { seedLogins, seedProblems } from "../../forge/index.js";
import {
  applyIntendedChanges,
  checkMutation,
  type IntendedChange,
  type RepoState,
  validateRepoState,
  validateScoringSpec,
} from "../../scoring/index.js";
import {
  formatJsonPath,
  type InputProblem,
  InvalidInputError,
  readJsonFile,
} from "../../shared/index.js";
import { valueAt } from "./problems.js";
import type { HarnessCompareV2 } from "./schema-v2.js";
import { V2_DEFAULTS } from "./schema-v2.js";

const FORGE_GRADERS = ["forge-state", "read-facts"];

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Cross-field rules of forge tasks, read defensively from the raw document. */
export function forgePolicyProblems(root: unknown): InputProblem[] {
  const problems: InputProblem[] = [];
  const tasks = valueAt(root, ["tasks"]).value;
  let forgeTasks = 0;
  if (Array.isArray(tasks))
    tasks.forEach((task, index) => {
      if (!isRecord(task)) return;
      const forge = task.forge !== undefined;
      if (forge) forgeTasks += 1;
      const at = (...path: Array<string | number>) => formatJsonPath(["tasks", index, ...path]);
      if (!forge && task.expectedFiles === undefined)
        problems.push({
          path: at("expectedFiles"),
          message:
            "is required for a task on files (a task with a forge seed may leave it out: nothing may change)",
        });
      const graders = Array.isArray(task.graders) ? task.graders : [];
      let forgeGraders = 0;
      graders.forEach((grader, g) => {
        if (!isRecord(grader) || typeof grader.kind !== "string") return;
        if (!FORGE_GRADERS.includes(grader.kind)) return;
        forgeGraders += 1;
        if (!forge)
          problems.push({
            path: at("graders", g),
            message: `a ${grader.kind} grader grades a forge task; give the task a forge seed (tasks[${index}].forge.seed)`,
          });
        if (grader.kind === "forge-state") {
          const given = ["changes", "expected"].filter((key) => grader[key] !== undefined);
          if (given.length !== 1)
            problems.push({
              path: at("graders", g),
              message:
                given.length === 0
                  ? "give the expected end state: changes (the intended changes to the seed) or expected (a RepoState file)"
                  : "give changes or expected, not both",
            });
        }
      });
      if (forge && graders.length > 0 && forgeGraders === 0)
        problems.push({
          path: at("graders"),
          message:
            'a forge task needs a "forge-state" grader (mutation tasks) or a "read-facts" grader (read tasks)',
        });
    });
  if (valueAt(root, ["forge"]).value !== undefined && forgeTasks === 0)
    problems.push({
      path: "forge",
      message: "no task has a forge seed (tasks[i].forge), so there is nothing to run on a forge",
    });
  return problems;
}

export interface ForgeDocuments {
  /** Validated seeds and expected states by absolute path. */
  states: Map<string, RepoState>;
  /** Each forge-state grader's expected end state, by `tasks[i].graders[j]`. */
  expected: Map<string, RepoState>;
  problems: InputProblem[];
}

/** Reads a RepoState file; its problems are reported at `field`, naming the file's own path. */
async function readState(
  file: string,
  shown: string,
  field: string,
): Promise<{ state?: RepoState; problems: InputProblem[] }> {
  let value: unknown;
  try {
    value = await readJsonFile(file);
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error;
    return {
      problems: error.problems.map((p) => ({
        path: field,
        message: `${shown}: ${p.path === "(file)" ? "" : `${p.path}: `}${p.message}`,
      })),
    };
  }
  const validated = validateRepoState(value);
  const problems = validated.ok ? seedProblems(validated.value) : validated.problems;
  if (problems.length > 0)
    return {
      problems: problems.map((p) => ({
        path: field,
        message: `${shown}: ${p.path}: ${p.message}`,
      })),
    };
  return { state: validated.ok ? validated.value : {}, problems: [] };
}

/** Numbers a live forge cannot reproduce: it numbers what it creates 1, 2, 3… */
function liveNumberProblems(seed: RepoState): string | null {
  const numbers = [...(seed.issues ?? []), ...(seed.pullRequests ?? [])]
    .map((entity) => entity.number)
    .sort((a, b) => a - b);
  const gap = numbers.findIndex((n, index) => n !== index + 1);
  if (gap < 0) return null;
  return `live mode creates issues and pull requests in number order, so a seed's numbers must run 1, 2, 3… without gaps (${numbers[gap]} is where ${gap + 1} should be)`;
}

/** Logins an intended change may assign: everyone the forge will know. */
function knownLogins(seed: RepoState, manifest: HarnessCompareV2): Set<string> {
  const forge = manifest.forge;
  const user = forge?.user ?? V2_DEFAULTS.forgeUser;
  const author = forge?.author ?? (forge?.kind === "gitea" ? user : V2_DEFAULTS.forgeAuthor);
  return new Set([...seedLogins(seed), user, author]);
}

function assigneeProblems(
  changes: readonly IntendedChange[],
  known: ReadonlySet<string>,
  field: string,
): InputProblem[] {
  const problems: InputProblem[] = [];
  const unknown = (login: string) =>
    `${login} is not a user of the forge (known: ${[...known].sort().join(", ")}); a forge can only assign existing users`;
  changes.forEach((change, index) => {
    if (change.op === "assign" && !known.has(change.user))
      problems.push({ path: `${field}[${index}].user`, message: unknown(change.user) });
    if (change.op === "create-issue")
      (change.assignees ?? []).forEach((login, a) => {
        if (!known.has(login))
          problems.push({ path: `${field}[${index}].assignees[${a}]`, message: unknown(login) });
      });
  });
  return problems;
}

/**
 * Reads and checks every forge document of a schema-valid manifest: seeds, expected states,
 * intended changes against their seed, facts. Problems name the manifest field and, inside a
 * file, the file's own JSON path.
 */
export async function forgeDocuments(
  manifest: HarnessCompareV2,
  manifestDir: string,
): Promise<ForgeDocuments> {
  const states = new Map<string, RepoState>();
  const expected = new Map<string, RepoState>();
  const problems: InputProblem[] = [];
  const read = async (path: string, field: string) => {
    const file = resolve(manifestDir, path);
    const known = states.get(file);
    if (known !== undefined) return known;
    const result = await readState(file, JSON.stringify(path), field);
    problems.push(...result.problems);
    if (result.state !== undefined) states.set(file, result.state);
    return result.state;
  };
  const live = manifest.forge?.kind === "gitea";
  for (const [index, task] of manifest.tasks.entries()) {
    if (task.forge === undefined) continue;
    const seedField = `tasks[${index}].forge.seed`;
    const seed = await read(task.forge.seed, seedField);
    if (seed === undefined) continue;
    const numbers = live ? liveNumberProblems(seed) : null;
    if (numbers !== null) problems.push({ path: seedField, message: numbers });
    for (const [g, grader] of task.graders.entries()) {
      const field = `tasks[${index}].graders[${g}]`;
      if (grader.kind === "read-facts") {
        const checked = validateScoringSpec({ kind: "read", facts: grader.facts });
        if (!checked.ok)
          problems.push(
            ...checked.problems.map((p) => ({
              path: `${field}.${p.path}`,
              message: p.message,
            })),
          );
      }
      if (grader.kind !== "forge-state") continue;
      if (grader.changes !== undefined) {
        const applied = applyIntendedChanges(seed, grader.changes, userOf(manifest), [
          "tasks",
          index,
          "graders",
          g,
          "changes",
        ]);
        const assignees = assigneeProblems(
          grader.changes,
          knownLogins(seed, manifest),
          `${field}.changes`,
        );
        problems.push(...assignees);
        if (!applied.ok) problems.push(...applied.problems);
        else if (assignees.length === 0) expected.set(field, applied.state);
      } else if (grader.expected !== undefined) {
        const state = await read(grader.expected, `${field}.expected`);
        if (state === undefined) continue;
        if (checkMutation(state, seed).pass)
          problems.push({
            path: `${field}.expected`,
            message: `${JSON.stringify(grader.expected)} equals the seed: the task would pass without an agent`,
          });
        else expected.set(field, state);
      }
    }
  }
  return { states, expected, problems };
}

/** Who the agent acts as on the forge (the author of the comments and reviews it makes). */
function userOf(manifest: HarnessCompareV2): string {
  return manifest.forge?.user ?? V2_DEFAULTS.forgeUser;
}
