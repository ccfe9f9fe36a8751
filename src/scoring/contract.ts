// The forge scoring contract (docs/scoring.md): what a task's scoring spec, a submission and a
// scoring result look like. Shapes only; the logic lives in normalize/check-*/score.
import { z } from "zod";

// ---------------------------------------------------------------------------
// Repository state as written in files (hand-written specs, capture adapters).
// Lenient where the normalization makes it harmless (colour case and '#', absent
// arrays and bodies), strict about everything else so a typo such as `lables`
// is an error instead of silently meaning "no labels".
// ---------------------------------------------------------------------------

/** Volatile fields a forge assigns; accepted on every entity and never compared. */
const volatileFields = {
  id: z
    .union([z.string(), z.number()])
    .optional()
    .describe("forge-assigned identifier; ignored by the checker"),
  createdAt: z.string().optional().describe("timestamp; ignored by the checker"),
  updatedAt: z.string().optional().describe("timestamp; ignored by the checker"),
};

const nonEmpty = (what: string) => z.string().min(1, `${what} must not be empty`);

const hexColourSchema = z
  .string()
  .regex(
    /^#?[0-9a-fA-F]{6}$/,
    "expected a 6-digit hex colour such as #d73a4a or D73A4A (case and leading # are normalized)",
  );

const labelSchema = z
  .strictObject({
    name: nonEmpty("a label name"),
    color: hexColourSchema,
    description: z.string().optional().describe('absent means ""'),
    ...volatileFields,
  })
  .describe("a label definition of the repository");

const commentSchema = z
  .strictObject({
    author: nonEmpty("an author"),
    body: z.string().optional().describe('absent means ""'),
    ...volatileFields,
  })
  .describe("a comment (on an issue or pull request, or inline in a review)");

export const reviewKindSchema = z.enum(["comment", "approved", "request-changes"]);

const reviewSchema = z
  .strictObject({
    author: nonEmpty("an author"),
    kind: reviewKindSchema,
    body: z.string().optional().describe('absent means ""'),
    comments: z.array(commentSchema).optional().describe("inline comments; absent means none"),
    ...volatileFields,
  })
  .describe("a pull request review");

const issueNumberSchema = z
  .int()
  .positive("expected a positive whole number")
  .describe("issues and pull requests share one number space");

const issueFields = {
  number: issueNumberSchema,
  title: z.string(),
  body: z.string().optional().describe('absent means ""'),
  labels: z.array(nonEmpty("a label name")).optional().describe("label names; a set"),
  assignees: z.array(nonEmpty("an assignee")).optional().describe("user names; a set"),
  comments: z.array(commentSchema).optional().describe("a multiset keyed on (author, body)"),
  ...volatileFields,
};

const issueStateSchema = z.enum(["open", "closed"]);
const pullRequestStateSchema = z.enum(["open", "closed", "merged"]);

const issueSchema = z.strictObject({ ...issueFields, state: issueStateSchema });

const pullRequestSchema = z.strictObject({
  ...issueFields,
  state: pullRequestStateSchema,
  reviews: z.array(reviewSchema).optional().describe("a multiset; absent means none"),
});

export const repoStateSchema = z
  .strictObject({
    labels: z.array(labelSchema).optional().describe("label definitions; absent means none"),
    issues: z.array(issueSchema).optional(),
    pullRequests: z.array(pullRequestSchema).optional(),
  })
  .describe("the issue/pull-request state of one forge repository");

export type Label = z.infer<typeof labelSchema>;
export type Comment = z.infer<typeof commentSchema>;
export type ReviewKind = z.infer<typeof reviewKindSchema>;
export type Review = z.infer<typeof reviewSchema>;
export type IssueState = z.infer<typeof issueStateSchema>;
export type PullRequestState = z.infer<typeof pullRequestStateSchema>;
export type Issue = z.infer<typeof issueSchema>;
export type PullRequest = z.infer<typeof pullRequestSchema>;
/** A repository state as accepted by the checker (normalized before comparison). */
export type RepoState = z.infer<typeof repoStateSchema>;

// ---------------------------------------------------------------------------
// Normalized repository state: what the checker compares. Every field present,
// volatile fields gone, every collection in a canonical order, so two states
// the checker accepts as equal are deep-equal once normalized.
// ---------------------------------------------------------------------------

const normalizedLabelSchema = z.strictObject({
  name: z.string(),
  color: z.string().describe("lower-case hex with a leading #"),
  description: z.string(),
});

const normalizedCommentSchema = z.strictObject({ author: z.string(), body: z.string() });

const normalizedReviewSchema = z.strictObject({
  author: z.string(),
  kind: reviewKindSchema,
  body: z.string(),
  comments: z.array(normalizedCommentSchema),
});

const normalizedIssueFields = {
  number: z.int(),
  title: z.string(),
  body: z.string(),
  labels: z.array(z.string()),
  assignees: z.array(z.string()),
  comments: z.array(normalizedCommentSchema),
};

const normalizedIssueSchema = z.strictObject({
  ...normalizedIssueFields,
  state: issueStateSchema,
});

const normalizedPullRequestSchema = z.strictObject({
  ...normalizedIssueFields,
  state: pullRequestStateSchema,
  reviews: z.array(normalizedReviewSchema),
});

export type NormalizedLabel = z.infer<typeof normalizedLabelSchema>;
export type NormalizedComment = z.infer<typeof normalizedCommentSchema>;
export type NormalizedReview = z.infer<typeof normalizedReviewSchema>;
export type NormalizedIssue = z.infer<typeof normalizedIssueSchema>;
export type NormalizedPullRequest = z.infer<typeof normalizedPullRequestSchema>;
export interface NormalizedRepoState {
  labels: NormalizedLabel[];
  issues: NormalizedIssue[];
  pullRequests: NormalizedPullRequest[];
}

// ---------------------------------------------------------------------------
// Scoring specs and submissions.
// ---------------------------------------------------------------------------

export const requiredFactSchema = z
  .strictObject({
    description: nonEmpty("a description").describe("what the fact is, for people"),
    anyOf: z
      .array(z.string())
      .describe("renderings; the fact is present when any occurs as a whole phrase"),
    pattern: z
      .string()
      .optional()
      .describe(
        "a JavaScript regular expression (Unicode mode, case-insensitive) tested against the normalized report",
      ),
  })
  .describe("one fact the agent's final report must state");

const mutationSpecSchema = z.strictObject({
  kind: z.literal("mutation"),
  expected: repoStateSchema.describe("the whole repository state the task should end in"),
});

const readSpecSchema = z.strictObject({
  kind: z.literal("read"),
  facts: z
    .array(requiredFactSchema)
    .min(1, "a read spec needs at least one fact")
    .describe("every fact is required"),
});

export const scoringSpecSchema = z
  .discriminatedUnion("kind", [mutationSpecSchema, readSpecSchema], {
    error: 'expected one of "mutation", "read"',
  })
  .describe("what a forge task is scored against: an expected end state or required facts");

const mutationSubmissionSchema = z.strictObject({
  kind: z.literal("mutation"),
  state: repoStateSchema.describe("the repository state captured after the run"),
});

const readSubmissionSchema = z.strictObject({
  kind: z.literal("read"),
  report: z.string().describe("the agent's final report"),
});

export const submissionSchema = z
  .discriminatedUnion("kind", [mutationSubmissionSchema, readSubmissionSchema], {
    error: 'expected one of "mutation", "read"',
  })
  .describe("what one trial of a forge task produced");

export type RequiredFact = z.infer<typeof requiredFactSchema>;
export type MutationSpec = z.infer<typeof mutationSpecSchema>;
export type ReadSpec = z.infer<typeof readSpecSchema>;
export type ScoringSpec = z.infer<typeof scoringSpecSchema>;
export type MutationSubmission = z.infer<typeof mutationSubmissionSchema>;
export type ReadSubmission = z.infer<typeof readSubmissionSchema>;
export type Submission = z.infer<typeof submissionSchema>;

// ---------------------------------------------------------------------------
// Results.
// ---------------------------------------------------------------------------

const differenceKindSchema = z.enum(["missing", "unexpected", "changed"]);

/** Whatever sits at a difference's path: a field value, a set element, a comment, a review, a whole entity. */
const differenceValueSchema = z.union([
  z.string(),
  normalizedCommentSchema,
  normalizedReviewSchema,
  normalizedLabelSchema,
  normalizedIssueSchema,
  normalizedPullRequestSchema,
]);

export const differenceSchema = z.strictObject({
  path: z
    .string()
    .describe(
      'entity and field, entities addressed by key: labels[name="bug"].color, issues[number=12].labels',
    ),
  kind: differenceKindSchema,
  collateral: z
    .boolean()
    .describe("true when the actual state has something the expected state does not"),
  expected: differenceValueSchema.optional(),
  actual: differenceValueSchema.optional(),
  message: z.string().describe('for people, e.g. `issue #12: label "bug" missing`'),
});

const mutationCheckSchema = z.union([
  z.strictObject({ pass: z.literal(true) }),
  z.strictObject({ pass: z.literal(false), differences: z.array(differenceSchema).min(1) }),
]);

const factMatchSchema = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("anyOf"), rendering: z.string() }),
  z.strictObject({
    kind: z.literal("pattern"),
    text: z.string().describe("what the pattern matched, in the normalized report"),
  }),
]);

const factOutcomeSchema = z.strictObject({
  description: z.string(),
  present: z.boolean(),
  match: factMatchSchema.optional(),
});

const missingFactSchema = z.strictObject({
  index: z.int().describe("position in the spec's facts"),
  description: z.string(),
  message: z.string(),
});

const readCheckFields = {
  facts: z.array(factOutcomeSchema).describe("one outcome per fact, in spec order"),
  report: z.string().describe("the report that was scored, as given"),
};

const readCheckSchema = z.union([
  z.strictObject({ pass: z.literal(true), ...readCheckFields }),
  z.strictObject({
    pass: z.literal(false),
    ...readCheckFields,
    missing: z.array(missingFactSchema).min(1),
  }),
]);

export const scoringResultSchema = z
  .union([
    z.strictObject({ kind: z.literal("mutation"), pass: z.literal(true) }),
    z.strictObject({
      kind: z.literal("mutation"),
      pass: z.literal(false),
      differences: z.array(differenceSchema).min(1),
    }),
    z.strictObject({ kind: z.literal("read"), pass: z.literal(true), ...readCheckFields }),
    z.strictObject({
      kind: z.literal("read"),
      pass: z.literal(false),
      ...readCheckFields,
      missing: z.array(missingFactSchema).min(1),
    }),
  ])
  .describe("the outcome of scoring one forge submission (`harness score --json`)");

export type DifferenceKind = z.infer<typeof differenceKindSchema>;
export type DifferenceValue = z.infer<typeof differenceValueSchema>;
export type Difference = z.infer<typeof differenceSchema>;
export type MutationCheck = z.infer<typeof mutationCheckSchema>;
export type FactMatch = z.infer<typeof factMatchSchema>;
export type FactOutcome = z.infer<typeof factOutcomeSchema>;
export type MissingFact = z.infer<typeof missingFactSchema>;
export type ReadCheck = z.infer<typeof readCheckSchema>;
export type ScoringResult = z.infer<typeof scoringResultSchema>;
