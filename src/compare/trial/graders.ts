// Builds the graders a task names. Contracts are loaded once, before any trial runs, so a
// bad contract is an input error rather than an infrastructure error in every trial.

import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { isAbsolute, win32 } from "node:path";
import {
  createCommandGrader,
  createForgeStateGrader,
  createReadFactsGrader,
  createReadmePackageGrader,
  createScopeGrader,
  createTestsGrader,
  type Grade,
  type Grader,
  loadReadmeContract,
} from "../../graders/index.js";
import { canonicalJson, sha256Hex } from "../../ir/index.js";
import type { TaskSpec } from "../experiment.js";

export interface PreparedGrader {
  id: string;
  kind: string;
  grader: Grader;
  /** `sha256:` of the canonical contract, for graders that have one. */
  contractHash: string | null;
  /**
   * Whether it reads the patched copy or runs code in it (tests, commands, a README's
   * examples). One that does not (scope, forge state, read facts) grades the change list, the
   * answer or the forge's state, and needs no copy of its own.
   */
  usesCopy: boolean;
}

/** The kinds that grade without reading the trial's files. */
const COPYLESS_KINDS = new Set(["scope", "forge-state", "read-facts"]);

/** A grader of `spec`, with the hash of its contract (the value it grades against) when it has one. */
function preparedGrader(
  spec: { id: string; kind: string },
  grader: Grader,
  contract: unknown = null,
): PreparedGrader {
  return {
    id: spec.id,
    kind: spec.kind,
    grader,
    usesCopy: !COPYLESS_KINDS.has(spec.kind),
    contractHash: contract === null ? null : `sha256:${sha256Hex(canonicalJson(contract))}`,
  };
}

/** Hidden test files by their content (where they lie is not an input: a moved copy is the same). */
async function hiddenHashes(files: readonly string[]): Promise<string[]> {
  const hashes: string[] = [];
  for (const file of files)
    hashes.push(
      `sha256:${createHash("sha256")
        .update(await readFile(file))
        .digest("hex")}`,
    );
  return hashes;
}

export async function prepareGraders(task: TaskSpec): Promise<PreparedGrader[]> {
  const prepared: PreparedGrader[] = [];
  for (const spec of task.graders) {
    switch (spec.kind) {
      case "scope":
        prepared.push(preparedGrader(spec, createScopeGrader({ mode: spec.mode })));
        break;
      case "command":
        prepared.push(
          preparedGrader(
            spec,
            createCommandGrader({
              id: spec.id,
              argv: spec.argv,
              timeoutMs: spec.timeoutMs,
              expectedExitCode: spec.expectedExitCode,
            }),
          ),
        );
        break;
      // The tests it must see pass are this grader's contract: their hash pins them.
      case "tests": {
        const { hidden, ...contract } = spec;
        prepared.push(
          preparedGrader(
            spec,
            createTestsGrader({
              id: spec.id,
              runner: spec.runner,
              files: [...spec.files, ...hidden],
              ...(spec.argv === undefined ? {} : { argv: spec.argv }),
              failToPass: spec.failToPass,
              passToPass: spec.passToPass,
              ...(spec.minTests === undefined ? {} : { minTests: spec.minTests }),
              timeoutMs: spec.timeoutMs,
            }),
            { ...contract, hidden: await hiddenHashes(hidden) },
          ),
        );
        break;
      }
      case "readme-package-v1": {
        const contract = await loadReadmeContract(spec.contractFile);
        prepared.push(preparedGrader(spec, createReadmePackageGrader(contract), contract));
        break;
      }
      // The expected state and the facts are these graders' contracts: their hashes pin them.
      case "forge-state":
        prepared.push(
          preparedGrader(spec, createForgeStateGrader({ expected: spec.expected }), spec.expected),
        );
        break;
      case "read-facts":
        prepared.push(
          preparedGrader(spec, createReadFactsGrader({ facts: spec.facts }), spec.facts),
        );
        break;
    }
  }
  return prepared;
}

/**
 * Why a finished grade says nothing about the agent, or null. A command grader whose program
 * could not be started from PATH or from an absolute path (`npm` missing, `/opt/ci/check` not
 * executable) means the environment is broken, so the trial is an infrastructure error rather
 * than a failure the agent is blamed for. A program named by a relative path (`./run-tests.sh`)
 * is different: it lives in the trial, and the agent may have removed it, so that stays a failed
 * check.
 */
export function gradeInfrastructureProblem(prepared: PreparedGrader, grade: Grade): string | null {
  if (prepared.kind !== "command" && prepared.kind !== "tests") return null;
  for (const check of grade.checks) {
    const evidence = check.evidence as { argv?: unknown; spawnError?: unknown } | undefined;
    if (typeof evidence?.spawnError !== "string" || !Array.isArray(evidence.argv)) continue;
    const program = String(evidence.argv[0] ?? "");
    // A relative path names a file in the trial (the agent may have removed it): that is the
    // agent's doing. A bare name (found on PATH) or an absolute path is the environment's.
    const relativePath =
      !isAbsolute(program) &&
      !win32.isAbsolute(program) &&
      (program.includes("/") || program.includes("\\"));
    if (relativePath) continue;
    return `could not start ${program}: ${evidence.spawnError}`;
  }
  return null;
}
