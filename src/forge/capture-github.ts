// Capture from GitHub (or GitHub Enterprise) with @octokit/rest: its paginate() follows the
// Link headers, and a rate-limited or failed request has already been waited out or turned
// into a CaptureError by the fetch underneath (capture-http.ts).
import { Octokit } from "@octokit/rest";
import type { z } from "zod";
import type { RepoState, ReviewKind } from "../scoring/index.js";
import { formatJsonPath } from "../shared/index.js";
import { type AdapterInput, httpFailure } from "./capture-gitea.js";
import { CaptureError } from "./capture-http.js";
import { buildRepoState, GHOST, numberFromUrl, type RawReview } from "./capture-records.js";
import {
  commentResponse,
  githubPullResponse,
  issueResponse,
  labelResponse,
  rawComment,
  rawIssue,
  reviewCommentResponse,
  reviewResponse,
} from "./capture-schemas.js";

export const GITHUB_API_URL = "https://api.github.com";

const GITHUB_REVIEW_KINDS: Record<string, ReviewKind | undefined> = {
  APPROVED: "approved",
  CHANGES_REQUESTED: "request-changes",
  COMMENTED: "comment",
};
/** A pending review is a draft only its author sees; a dismissed one no longer counts. */
const GITHUB_SKIPPED_REVIEWS = new Set(["PENDING", "DISMISSED"]);

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function parseAll<S extends z.ZodType>(schema: S, items: unknown[], where: string): z.output<S>[] {
  return items.map((item, index) => {
    const parsed = schema.safeParse(item);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    throw new CaptureError(
      "bad-response",
      `${where}: [${index}].${formatJsonPath(issue.path)}: ${issue.message} (is --url a GitHub REST API root?)`,
    );
  });
}

/** The CaptureError a request failure carries, or one made from its HTTP status. */
function asCaptureError(error: unknown, input: AdapterInput, what: string): unknown {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause)
    if (cause instanceof CaptureError) return cause;
  const status = (error as { status?: unknown }).status;
  if (typeof status === "number" && status !== 500) {
    const data = (error as { response?: { data?: { message?: unknown } } }).response?.data;
    return httpFailure(status, String(data?.message ?? ""), input, "GitHub", what);
  }
  return error;
}

export async function captureGitHub(
  input: AdapterInput,
): Promise<{ state: RepoState; requests: number }> {
  let requests = 0;
  const counted: typeof fetch = (url, init) => {
    requests++;
    return input.fetch(url, init);
  };
  const octokit = new Octokit({
    baseUrl: input.apiUrl,
    ...(input.token ? { auth: input.token } : {}),
    userAgent: "harnesslab-forge-capture",
    request: { fetch: counted },
    log: quiet,
  });
  const { owner, repo } = input;
  const per_page = input.pageSize;
  const base = `/repos/${owner}/${repo}`;
  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw asCaptureError(error, input, what);
    }
  };

  await call(`GET ${base}`, () => octokit.rest.repos.get({ owner, repo }));
  const labels = parseAll(
    labelResponse,
    await call(`GET ${base}/labels`, () =>
      octokit.paginate(octokit.rest.issues.listLabelsForRepo, { owner, repo, per_page }),
    ),
    `GET ${base}/labels`,
  );
  // GitHub's issue list holds the pull requests too; they carry a pull_request field.
  const issues = parseAll(
    issueResponse,
    await call(`GET ${base}/issues`, () =>
      octokit.paginate(octokit.rest.issues.listForRepo, { owner, repo, state: "all", per_page }),
    ),
    `GET ${base}/issues`,
  ).filter((issue) => issue.pull_request == null);
  const pulls = parseAll(
    githubPullResponse,
    await call(`GET ${base}/pulls`, () =>
      octokit.paginate(octokit.rest.pulls.list, { owner, repo, state: "all", per_page }),
    ),
    `GET ${base}/pulls`,
  );
  const comments = parseAll(
    commentResponse,
    await call(`GET ${base}/issues/comments`, () =>
      octokit.paginate(octokit.rest.issues.listCommentsForRepo, { owner, repo, per_page }),
    ),
    `GET ${base}/issues/comments`,
  );
  const inline = parseAll(
    reviewCommentResponse,
    await call(`GET ${base}/pulls/comments`, () =>
      octokit.paginate(octokit.rest.pulls.listReviewCommentsForRepo, { owner, repo, per_page }),
    ),
    `GET ${base}/pulls/comments`,
  );
  const reviews: RawReview[] = [];
  for (const pull of pulls) {
    const where = `GET ${base}/pulls/${pull.number}/reviews`;
    const listed = parseAll(
      reviewResponse,
      await call(where, () =>
        octokit.paginate(octokit.rest.pulls.listReviews, {
          owner,
          repo,
          pull_number: pull.number,
          per_page,
        }),
      ),
      where,
    );
    for (const review of listed) {
      if (GITHUB_SKIPPED_REVIEWS.has(review.state)) continue;
      const kind = GITHUB_REVIEW_KINDS[review.state];
      if (kind === undefined)
        throw new CaptureError(
          "bad-response",
          `review ${review.id} of pull request #${pull.number} has state ${JSON.stringify(review.state)}, which is none of APPROVED, CHANGES_REQUESTED, COMMENTED, PENDING, DISMISSED`,
        );
      reviews.push({
        id: review.id,
        pullNumber: pull.number,
        author: review.user?.login ?? GHOST,
        kind,
        body: review.body,
        ...(review.submitted_at ? { createdAt: review.submitted_at } : {}),
        // Inline comments come in one repository-wide list; each names its review.
        comments: inline
          .filter((comment) => comment.pull_request_review_id === review.id)
          .map((comment) => ({
            id: comment.id,
            author: comment.user?.login ?? GHOST,
            body: comment.body,
          })),
      });
    }
  }
  const state = buildRepoState({
    labels,
    issues: issues.map(rawIssue),
    // The list endpoint has no `merged`; a closed pull request with merged_at was merged.
    pulls: pulls.map((pull) => ({ ...rawIssue(pull), merged: !!pull.merged_at })),
    comments: comments.map((comment) => {
      const issueNumber = numberFromUrl(comment.issue_url);
      if (issueNumber === undefined)
        throw new CaptureError("bad-response", `comment ${comment.id} has no issue_url`);
      return rawComment(comment, issueNumber);
    }),
    reviews,
  });
  return { state, requests };
}
