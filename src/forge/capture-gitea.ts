// Capture from a Gitea instance (API v1) with plain fetch and zod-checked responses.
// Gitea caps a page at MAX_RESPONSE_ITEMS (50 by default) whatever `limit` asks for, so
// paging goes on while X-Total-Count (or a `Link: rel="next"`) says there is more, never
// "until a short page". Link URLs are not followed: Gitea builds them from its ROOT_URL,
// which is often not the address the capture reached it by.
import type { z } from "zod";
import type { RepoState, ReviewKind } from "../scoring/index.js";
import { formatJsonPath } from "../shared/index.js";
import { CaptureError } from "./capture-http.js";
import {
  buildRepoState,
  GHOST,
  numberFromUrl,
  type RawCapture,
  type RawReview,
} from "./capture-records.js";
import {
  commentResponse,
  giteaPullResponse,
  issueResponse,
  labelResponse,
  rawComment,
  rawIssue,
  reviewCommentResponse,
  reviewResponse,
} from "./capture-schemas.js";

export interface AdapterInput {
  /** API root without a trailing slash (`…/api/v1` for Gitea). */
  apiUrl: string;
  owner: string;
  repo: string;
  token?: string;
  tokenEnv: string;
  pageSize: number;
  fetch: typeof fetch;
}

const GITEA_REVIEW_KINDS: Record<string, ReviewKind | undefined> = {
  APPROVED: "approved",
  REQUEST_CHANGES: "request-changes",
  COMMENT: "comment",
};
/** Review states that are not repository state: drafts and requests for a review. */
const GITEA_SKIPPED_REVIEWS = new Set(["PENDING", "REQUEST_REVIEW", ""]);
const MAX_PAGES = 10_000;

/** `https://host/` or `https://host/api/v1` → `https://host/api/v1`. */
export function giteaApiUrl(url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  return trimmed.endsWith("/api/v1") ? trimmed : `${trimmed}/api/v1`;
}

export function httpFailure(
  status: number,
  message: string,
  input: Pick<AdapterInput, "owner" | "repo" | "token" | "tokenEnv">,
  forge: string,
  what: string,
): CaptureError {
  const repo = `${input.owner}/${input.repo}`;
  const tokenHint = input.token
    ? `the token in ${input.tokenEnv} was refused or cannot read ${repo}; set ${input.tokenEnv} to a token with read access`
    : `no token was sent: set ${input.tokenEnv} (or name another variable with --token-env)`;
  if (status === 401 || status === 403)
    return new CaptureError("auth", `${forge} answered ${status} for ${what}: ${tokenHint}`);
  if (status === 404)
    return new CaptureError(
      "not-found",
      `${forge} has no repository ${repo} (404 for ${what}); check --repo and --url${input.token ? "" : `, or set ${input.tokenEnv} if it is private`}`,
    );
  return new CaptureError(
    "http",
    `${forge} answered ${status} for ${what}${message ? `: ${message}` : ""}`,
  );
}

class GiteaReader {
  requests = 0;
  constructor(private readonly input: AdapterInput) {}

  async get(path: string, query: Record<string, string> = {}) {
    const url = new URL(`${this.input.apiUrl}${path}`);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.input.token) headers.authorization = `token ${this.input.token}`;
    this.requests++;
    const response = await this.input.fetch(url, { headers });
    const text = await response.text();
    if (!response.ok) {
      let message = "";
      try {
        message = String((JSON.parse(text) as { message?: unknown }).message ?? "");
      } catch {
        message = text.slice(0, 200);
      }
      throw httpFailure(response.status, message, this.input, "Gitea", `GET ${url.pathname}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new CaptureError(
        "bad-response",
        `GET ${url.pathname}${url.search} did not answer with JSON`,
      );
    }
    return { json, headers: response.headers, where: `GET ${url.pathname}${url.search}` };
  }

  one<S extends z.ZodType>(schema: S, json: unknown, where: string): z.output<S> {
    const parsed = schema.safeParse(json);
    if (parsed.success) return parsed.data;
    const issue = parsed.error.issues[0]!;
    throw new CaptureError(
      "bad-response",
      `${where}: ${formatJsonPath(issue.path)}: ${issue.message} (is --url a ${"Gitea"} instance?)`,
    );
  }

  async list<S extends z.ZodType>(schema: S, path: string): Promise<z.output<S>[]> {
    const { json, where } = await this.get(path);
    if (!Array.isArray(json)) throw new CaptureError("bad-response", `${where}: expected a list`);
    return json.map((item, index) => this.one(schema, item, `${where}: [${index}]`));
  }

  /** Every item of a paged list, by id (a page that repeats earlier ids means paging is broken). */
  async pages<S extends z.ZodType<{ id?: number }>>(
    schema: S,
    path: string,
    query: Record<string, string> = {},
  ): Promise<z.output<S>[]> {
    const items = new Map<number | string, z.output<S>>();
    let received = 0;
    for (let page = 1; page <= MAX_PAGES; page++) {
      const { json, headers, where } = await this.get(path, {
        ...query,
        page: String(page),
        limit: String(this.input.pageSize),
      });
      if (!Array.isArray(json)) throw new CaptureError("bad-response", `${where}: expected a list`);
      if (json.length === 0) return [...items.values()];
      let fresh = 0;
      json.forEach((item, index) => {
        const parsed = this.one(schema, item, `${where}: [${index}]`);
        const key = parsed.id ?? `${page}:${index}`;
        if (!items.has(key)) fresh++;
        items.set(key, parsed);
      });
      const paged = headers.has("x-total-count") || headers.has("link");
      // Some Gitea lists (older review lists) ignore `page` and send no paging headers:
      // a page of nothing new then means "that was everything".
      if (fresh === 0 && !paged) return [...items.values()];
      if (fresh === 0)
        throw new CaptureError(
          "bad-response",
          `${where} repeated items of an earlier page: the server does not page this list`,
        );
      received += json.length;
      const total = Number(headers.get("x-total-count"));
      if (headers.has("x-total-count") && Number.isFinite(total)) {
        if (received >= total) return [...items.values()];
      } else if (headers.has("link") && !/rel="next"/.test(headers.get("link") ?? "")) {
        return [...items.values()];
      }
    }
    throw new CaptureError("bad-response", `GET ${path} has more than ${MAX_PAGES} pages`);
  }
}

export async function captureGitea(
  input: AdapterInput,
): Promise<{ state: RepoState; requests: number }> {
  const reader = new GiteaReader(input);
  const base = `/repos/${encodeURIComponent(input.owner)}/${encodeURIComponent(input.repo)}`;
  await reader.get(base);
  const labels = await reader.pages(labelResponse, `${base}/labels`);
  const issues = (
    await reader.pages(issueResponse, `${base}/issues`, { state: "all", type: "issues" })
  )
    // Older Gitea versions ignore `type`: a pull request is recognised by its pull_request field.
    .filter((issue) => issue.pull_request == null);
  const pulls = await reader.pages(giteaPullResponse, `${base}/pulls`, { state: "all" });
  const comments = await reader.pages(commentResponse, `${base}/issues/comments`);
  const reviews: RawReview[] = [];
  for (const pull of pulls) {
    for (const review of await reader.pages(
      reviewResponse,
      `${base}/pulls/${pull.number}/reviews`,
    )) {
      if (review.dismissed || GITEA_SKIPPED_REVIEWS.has(review.state)) continue;
      const kind = GITEA_REVIEW_KINDS[review.state];
      if (kind === undefined)
        throw new CaptureError(
          "bad-response",
          `review ${review.id} of pull request #${pull.number} has state ${JSON.stringify(review.state)}, which is none of APPROVED, REQUEST_CHANGES, COMMENT, PENDING, REQUEST_REVIEW`,
        );
      const inline =
        review.comments_count === 0
          ? []
          : await reader.list(
              reviewCommentResponse,
              `${base}/pulls/${pull.number}/reviews/${review.id}/comments`,
            );
      reviews.push({
        id: review.id,
        pullNumber: pull.number,
        author: review.user?.login ?? GHOST,
        kind,
        body: review.body,
        ...(review.submitted_at ? { createdAt: review.submitted_at } : {}),
        comments: inline.map((c) => ({ id: c.id, author: c.user?.login ?? GHOST, body: c.body })),
      });
    }
  }
  const raw: RawCapture = {
    labels,
    issues: issues.map(rawIssue),
    pulls: pulls.map((pull) => ({
      ...rawIssue(pull),
      merged: pull.merged === true || (pull.merged == null && !!pull.merged_at),
    })),
    comments: comments.map((comment) => {
      const issueNumber = numberFromUrl(comment.pull_request_url || comment.issue_url);
      if (issueNumber === undefined)
        throw new CaptureError(
          "bad-response",
          `comment ${comment.id} names no issue or pull request (issue_url and pull_request_url are empty)`,
        );
      return rawComment(comment, issueNumber);
    }),
    reviews,
  };
  return { state: buildRepoState(raw), requests: reader.requests };
}
