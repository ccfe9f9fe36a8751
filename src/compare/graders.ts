// Builds the graders a task names. Contracts are loaded once, before any trial runs, so a
// bad contract is an input error rather than an infrastructure error in every trial.
import {
  createCommandGrader,
  createReadmePackageGrader,
  createScopeGrader,
  type Grader,
  loadReadmeContract,
} from "../graders/index.js";
import { canonicalJson, sha256Hex } from "../ir/index.js";
import type { TaskSpec } from "./experiment.js";

export interface PreparedGrader {
  id: string;
  kind: string;
  grader: Grader;
  /** `sha256:` of the canonical contract, for graders that have one. */
  contractHash: string | null;
}

export async function prepareGraders(task: TaskSpec): Promise<PreparedGrader[]> {
  const prepared: PreparedGrader[] = [];
  for (const spec of task.graders) {
    switch (spec.kind) {
      case "scope":
        prepared.push({
          id: spec.id,
          kind: spec.kind,
          grader: createScopeGrader({ mode: spec.mode }),
          contractHash: null,
        });
        break;
      case "command":
        prepared.push({
          id: spec.id,
          kind: spec.kind,
          grader: createCommandGrader({
            id: spec.id,
            argv: spec.argv,
            timeoutMs: spec.timeoutMs,
            expectedExitCode: spec.expectedExitCode,
          }),
          contractHash: null,
        });
        break;
      case "readme-package-v1": {
        const contract = await loadReadmeContract(spec.contractFile);
        prepared.push({
          id: spec.id,
          kind: spec.kind,
          grader: createReadmePackageGrader(contract),
          contractHash: `sha256:${sha256Hex(canonicalJson(contract))}`,
        });
        break;
      }
    }
  }
  return prepared;
}
