import { checkMutation } from "./check-mutation.js";
import { checkReadAnswer } from "./check-read-answer.js";
import type { ScoringResult, ScoringSpec, Submission } from "./contract.js";

/**
 * Scores one forge submission against its task's spec, dispatching on the kind.
 * A mutation spec with a read submission (or the reverse) is a wiring mistake in the
 * caller, not a failed trial, so it throws instead of returning a result.
 */
export function score(spec: ScoringSpec, submission: Submission): ScoringResult {
  if (spec.kind === "mutation" && submission.kind === "mutation")
    return { kind: "mutation", ...checkMutation(spec.expected, submission.state) };
  if (spec.kind === "read" && submission.kind === "read")
    return { kind: "read", ...checkReadAnswer(spec.facts, submission.report) };
  throw new Error(
    `score: a ${spec.kind} spec cannot score a ${submission.kind} submission (a ${spec.kind} spec needs ${
      spec.kind === "mutation" ? '{kind: "mutation", state}' : '{kind: "read", report}'
    })`,
  );
}
