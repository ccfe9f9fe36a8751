// The forge graders: `forge-state` compares the repository's issue/PR state captured after the
// agent stopped with the task's whole expected end state (checkMutation); `read-facts` looks for
// the task's required facts in the agent's final report (checkReadAnswer). Each difference or
// missing fact is one failed check, so a trial's failed checks say what went wrong.
import {
  checkMutation,
  checkReadAnswer,
  type Difference,
  type RepoState,
  type RequiredFact,
} from "../scoring/index.js";
import type { Grade, GradeCheck, GradeContext, Grader } from "./types.js";
import { weightedScore } from "./types.js";

export const FORGE_STATE_GRADER_ID = "forge-state";
export const READ_FACTS_GRADER_ID = "read-facts";

/** How many differences a summary names before "and N more". */
const SUMMARY_ITEMS = 3;

function differenceCheckId(difference: Difference): string {
  const kind = difference.collateral ? "collateral" : difference.kind;
  return `${kind}:${difference.path}`;
}

/** Check ids must be unique within a grade: a second difference at one path gets `#2`. */
function uniqueIds(ids: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return ids.map((id) => {
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    return n === 1 ? id : `${id}#${n}`;
  });
}

function listed(items: readonly string[]): string {
  const shown = items.slice(0, SUMMARY_ITEMS).join("; ");
  return items.length > SUMMARY_ITEMS
    ? `${shown}; and ${items.length - SUMMARY_ITEMS} more`
    : shown;
}

/**
 * The differences in the order a reader needs them: what the task asked for and is not there
 * (missing or changed), then the collateral changes the agent made beyond it.
 */
function orderDifferences(differences: readonly Difference[]): Difference[] {
  return [...differences.filter((d) => !d.collateral), ...differences.filter((d) => d.collateral)];
}

/** One line for a failed forge-state grade: the intended changes missing first, then collateral. */
function summarizeDifferences(differences: readonly Difference[]): string {
  const missing = differences.filter((d) => !d.collateral).map((d) => d.message);
  const collateral = differences.filter((d) => d.collateral).map((d) => d.message);
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`not done: ${listed(missing)}`);
  if (collateral.length > 0) parts.push(`collateral: ${listed(collateral)}`);
  return parts.join(" | ");
}

export interface ForgeStateGraderOptions {
  /** The whole state the repository should end in (seed + intended changes, or given in full). */
  expected: RepoState;
}

/** Grades the captured repository state against the expected end state. */
export function createForgeStateGrader(options: ForgeStateGraderOptions): Grader {
  return {
    id: FORGE_STATE_GRADER_ID,
    async grade(context: GradeContext): Promise<Grade> {
      if (context.forgeState === undefined)
        // The harness captures the state of every forge trial; its absence is the harness's fault.
        throw new Error("no forge state was captured for this trial");
      const check = checkMutation(options.expected, context.forgeState);
      if (check.pass) {
        const checks: GradeCheck[] = [
          {
            id: "state-matches",
            weight: 1,
            passed: true,
            detail: "the repository ended in the expected state, with no collateral change",
          },
        ];
        return { grader: FORGE_STATE_GRADER_ID, checks, score: 100, passed: true };
      }
      const differences = orderDifferences(check.differences);
      const ids = uniqueIds(differences.map(differenceCheckId));
      const checks = differences.map(
        (difference, index): GradeCheck => ({
          id: ids[index] as string,
          weight: 1,
          passed: false,
          detail: difference.message,
          evidence: difference,
        }),
      );
      return {
        grader: FORGE_STATE_GRADER_ID,
        checks,
        score: 0,
        passed: false,
        summary: summarizeDifferences(differences),
      };
    },
  };
}

export interface ReadFactsGraderOptions {
  facts: readonly RequiredFact[];
}

/** Grades the agent's final report: every required fact must be stated. */
export function createReadFactsGrader(options: ReadFactsGraderOptions): Grader {
  return {
    id: READ_FACTS_GRADER_ID,
    async grade(context: GradeContext): Promise<Grade> {
      const result = checkReadAnswer(options.facts, context.finalText);
      const checks = result.facts.map(
        (fact, index): GradeCheck => ({
          id: `fact-${index + 1}`,
          weight: 1,
          passed: fact.present,
          detail: fact.present
            ? `${fact.description}: stated`
            : `${fact.description}: not found in the report`,
          ...(fact.match === undefined ? {} : { evidence: { match: fact.match } }),
        }),
      );
      const passed = result.pass;
      return {
        grader: READ_FACTS_GRADER_ID,
        checks,
        score: weightedScore(checks),
        passed,
        ...(result.pass
          ? {}
          : {
              summary: `missing from the report: ${listed(result.missing.map((m) => m.description))}`,
            }),
      };
    },
  };
}
