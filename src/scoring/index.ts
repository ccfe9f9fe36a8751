// The forge scoring seam (docs/scoring.md): pure, no I/O.
export {
  applyIntendedChanges,
  type IntendedChange,
  intendedChangeSchema,
  intendedChangesSchema,
} from "./changes.js";
export { checkMutation } from "./check-mutation.js";
export {
  checkReadAnswer,
  findWholePhrase,
  normalizeForMatching,
} from "./check-read-answer.js";
export {
  type Comment,
  type Difference,
  type DifferenceKind,
  differenceSchema,
  type FactMatch,
  type FactOutcome,
  type Issue,
  type IssueState,
  type Label,
  type MissingFact,
  type MutationCheck,
  type MutationSpec,
  type MutationSubmission,
  type NormalizedRepoState,
  type PullRequest,
  type PullRequestState,
  type ReadCheck,
  type ReadSpec,
  type ReadSubmission,
  type RepoState,
  type RequiredFact,
  type Review,
  type ReviewKind,
  repoStateSchema,
  requiredFactSchema,
  type ScoringResult,
  type ScoringSpec,
  type Submission,
  scoringResultSchema,
  scoringSpecSchema,
  submissionSchema,
} from "./contract.js";
export { validateRepoState, validateScoringSpec, validateSubmission } from "./load.js";
export { normalizeRepoState } from "./normalize.js";
export { score } from "./score.js";
