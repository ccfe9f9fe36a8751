// Pull request, merge and review endpoints of the local forge.
import { createHash } from "node:crypto";
import type { Hono } from "hono";
import type { GitBacking } from "./git.js";
import {
  changedFileJson,
  commitJson,
  type PullShas,
  pullJson,
  reviewCommentJson,
  reviewJson,
} from "./gitea-json.js";
import {
  ANY_BODY,
  beginWrite,
  type ForgeContext,
  type ForgeEnv,
  type ForgeRuntime,
  fail,
  findRepo,
  intParam,
  notFound,
  paginate,
  repoTarget,
} from "./http.js";
import type { IssueRecord, RepoRecord, ReviewState } from "./model.js";
import {
  createPullRequestOption,
  createPullReviewOptions,
  editPullRequestOption,
  mergePullRequestOption,
  submitPullReviewOptions,
} from "./requests.js";
import { assigneeList } from "./routes-issues.js";

export function registerPullRoutes(app: Hono<ForgeEnv>, rt: ForgeRuntime): void {
  const pullOf = (c: ForgeContext): { repo: RepoRecord; issue: IssueRecord } | undefined => {
    const repo = findRepo(c, rt);
    const index = intParam(c, "index");
    const issue = repo && index !== undefined ? rt.store.issue(repo, index) : undefined;
    return repo && issue?.pull ? { repo, issue } : undefined;
  };

  /**
   * Branch commits, read from git when the repository has it. A forge without git content still
   * names each branch's commit, as every Gitea does (clients send it back as a review's
   * `commit_id`): a stable id derived from the repository and the branch.
   */
  const shasOf = async (repo: RepoRecord, issue: IssueRecord): Promise<PullShas> => {
    const pull = issue.pull!;
    if (!repo.gitDir || !rt.git) {
      const id = (ref: string) =>
        createHash("sha1").update(`${repo.owner}/${repo.name}\u0000${ref}`).digest("hex");
      return { head: id(pull.head), base: id(pull.base) };
    }
    return {
      head: (await rt.git.branchSha(repo.gitDir, pull.head)) ?? "",
      base: (await rt.git.branchSha(repo.gitDir, pull.base)) ?? "",
    };
  };
  /** What git says of a pull request's branches; `none` for a repository without git. */
  const fromGit = async <T>(
    repo: RepoRecord,
    issue: IssueRecord,
    none: T,
    read: (git: GitBacking, gitDir: string, base: string, head: string) => Promise<T>,
  ): Promise<T> =>
    repo.gitDir && rt.git ? read(rt.git, repo.gitDir, issue.pull!.base, issue.pull!.head) : none;

  const render = async (repo: RepoRecord, issue: IssueRecord) =>
    pullJson(rt, repo, issue, await shasOf(repo, issue));

  const branchExists = async (repo: RepoRecord, branch: string): Promise<boolean> =>
    repo.gitDir && rt.git
      ? (await rt.git.branchSha(repo.gitDir, branch)) !== undefined
      : repo.branches.has(branch);

  app.get("/api/v1/repos/:owner/:repo/pulls", async (c) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    const state = c.req.query("state");
    const poster = c.req.query("poster")?.toLowerCase();
    const pulls = rt.store
      .listIssues(repo, {
        state: state === "closed" || state === "all" ? state : "open",
        type: "pulls",
      })
      .filter((issue) => !poster || issue.poster.toLowerCase() === poster);
    const page = paginate(c, rt, pulls);
    return c.json(await Promise.all(page.map((issue) => render(repo, issue))));
  });

  app.post("/api/v1/repos/:owner/:repo/pulls", async (c) => {
    const write = await beginWrite(c, rt, repoTarget(c, rt), createPullRequestOption);
    if (!write.ok) return write.response;
    const { repo, actor, body } = write;
    // `owner:branch` names a branch of this repository's owner (forks are not modelled).
    const head = body.head.replace(new RegExp(`^${repo.owner}:`, "i"), "");
    const base = body.base;
    if (!(await branchExists(repo, head)) || !(await branchExists(repo, base)))
      return notFound(c, rt);
    if (head === base)
      return fail(
        c,
        rt,
        422,
        "Invalid PullRequest: There are no changes between the head and the base",
      );
    const existing = repo.issues.find(
      (issue) =>
        issue.pull &&
        issue.state === "open" &&
        issue.pull.head === head &&
        issue.pull.base === base,
    );
    if (existing)
      return fail(
        c,
        rt,
        409,
        `pull request already exists for these targets [id: ${existing.id}, issue_id: ${existing.id}, head_repo_id: ${repo.id}, base_repo_id: ${repo.id}, head_branch: ${head}, base_branch: ${base}]`,
      );
    const created = rt.store.createIssue(
      repo,
      actor,
      {
        title: body.title,
        body: body.body,
        assignees: assigneeList(body.assignee, body.assignees),
        labelIds: body.labels,
      },
      { head, base },
    );
    if (!created.ok) return fail(c, rt, created.status, created.message);
    return c.json(await render(repo, created.value), 201);
  });

  app.get("/api/v1/repos/:owner/:repo/pulls/:index", async (c) => {
    // `3.diff` and `3.patch` are the same route to Gitea's router: the change as text.
    const asText = /^(\d{1,15})\.(diff|patch)$/.exec(c.req.param("index") ?? "");
    if (asText !== null) {
      const repo = findRepo(c, rt);
      const issue = repo ? rt.store.issue(repo, Number(asText[1])) : undefined;
      if (!repo || !issue?.pull) return notFound(c, rt);
      const form = asText[2] as "diff" | "patch";
      const text = await fromGit(repo, issue, "", (git, dir, base, head) =>
        git.diff(dir, base, head, form),
      );
      return c.body(text, 200, { "Content-Type": "text/plain; charset=utf-8" });
    }
    const found = pullOf(c);
    return found ? c.json(await render(found.repo, found.issue)) : notFound(c, rt);
  });

  app.get("/api/v1/repos/:owner/:repo/pulls/:index/files", async (c) => {
    const found = pullOf(c);
    if (!found) return notFound(c, rt);
    const files = await fromGit(found.repo, found.issue, [], (git, dir, base, head) =>
      git.changedFiles(dir, base, head),
    );
    const head = (await shasOf(found.repo, found.issue)).head;
    return c.json(
      paginate(c, rt, files).map((file) => changedFileJson(rt, found.repo, head, file)),
    );
  });

  app.get("/api/v1/repos/:owner/:repo/pulls/:index/commits", async (c) => {
    const found = pullOf(c);
    if (!found) return notFound(c, rt);
    const commits = await fromGit(found.repo, found.issue, [], (git, dir, base, head) =>
      git.commits(dir, base, head),
    );
    return c.json(paginate(c, rt, commits).map((commit) => commitJson(rt, found.repo, commit)));
  });

  app.patch("/api/v1/repos/:owner/:repo/pulls/:index", async (c) => {
    // `{n}.diff`/`{n}.patch` share this route's pattern and take GET only, as on Gitea.
    if (/^\d{1,15}\.(diff|patch)$/.test(c.req.param("index") ?? "")) {
      c.header("Allow", "GET");
      return fail(c, rt, 405, "Method Not Allowed");
    }
    const found = await beginWrite(c, rt, pullOf(c), editPullRequestOption);
    if (!found.ok) return found.response;
    const { body } = found;
    // As on Gitea, an empty title or base (a Go client's "not set") changes nothing.
    const base = body.base || undefined;
    if (base !== undefined && base !== found.issue.pull!.base) {
      if (!(await branchExists(found.repo, base)))
        return fail(c, rt, 404, `new base '${base}' not exist`);
    }
    const edited = rt.store.editIssue(
      found.issue,
      {
        title: body.title || undefined,
        body: body.body ?? undefined,
        state: body.state ?? undefined,
        // Unlike an issue edit, a pull request edit reads an empty `assignee` as unset (Gitea).
        assignees: assigneeList(body.assignee || undefined, body.assignees),
        labelIds: body.labels ?? undefined,
      },
      found.repo,
    );
    if (!edited.ok) return fail(c, rt, edited.status, edited.message);
    if (base !== undefined) found.issue.pull!.base = base;
    return c.json(await render(found.repo, edited.value), 201);
  });

  app.get("/api/v1/repos/:owner/:repo/pulls/:index/merge", (c) => {
    const found = pullOf(c);
    return found?.issue.pull?.merged ? c.body(null, 204) : notFound(c, rt);
  });

  app.post("/api/v1/repos/:owner/:repo/pulls/:index/merge", async (c) => {
    const found = await beginWrite(c, rt, pullOf(c), mergePullRequestOption);
    if (!found.ok) return found.response;
    const { actor, body } = found;
    const { repo, issue } = found;
    const pull = issue.pull!;
    if (pull.merged) return fail(c, rt, 405, "The PR is already merged");
    if (issue.state === "closed") return notFound(c, rt);
    const style = body.Do || "merge";
    const title = body.merge_title_field || body.MergeTitleField;
    const message = body.merge_message_field ?? body.MergeMessageField;
    let sha: string | null = body.merge_commit_id || body.MergeCommitID || null;
    if (repo.gitDir && rt.git && style !== "manually-merged") {
      const merged = await rt.git.merge(repo.gitDir, {
        base: pull.base,
        head: pull.head,
        style,
        title: title?.trim() || `Merge pull request '${issue.title}' (#${issue.number})`,
        message: message ?? "",
        author: actor,
      });
      if (!merged.ok) return fail(c, rt, merged.status, merged.message);
      sha = merged.sha || null;
    }
    rt.store.markMerged(issue, actor, sha);
    return c.body(null, 200);
  });

  app.get("/api/v1/repos/:owner/:repo/pulls/:index/reviews", (c) => {
    const found = pullOf(c);
    if (!found) return notFound(c, rt);
    const actor = c.get("actor")?.toLowerCase();
    // A pending review is visible to its author only.
    const reviews = found.issue.pull!.reviews.filter(
      (review) => review.state !== "PENDING" || review.author.toLowerCase() === actor,
    );
    return c.json(
      paginate(c, rt, reviews).map((review) => reviewJson(rt, found.repo, found.issue, review)),
    );
  });

  app.post("/api/v1/repos/:owner/:repo/pulls/:index/reviews", async (c) => {
    const found = await beginWrite(c, rt, pullOf(c), createPullReviewOptions);
    if (!found.ok) return found.response;
    const { actor, body } = found;
    const state: ReviewState = !body.event ? "PENDING" : body.event;
    const text = body.body ?? "";
    const comments = (body.comments ?? []).map((comment) => ({
      body: comment.body ?? "",
      path: comment.path ?? "",
      oldPosition: comment.old_position ?? 0,
      newPosition: comment.new_position ?? 0,
    }));
    const isPoster = found.issue.poster.toLowerCase() === actor.toLowerCase();
    if (state === "APPROVED" && isPoster)
      return fail(c, rt, 422, "approve your own pull is not allowed");
    if (state === "REQUEST_CHANGES" && isPoster)
      return fail(c, rt, 422, "reject your own pull is not allowed");
    if (state === "REQUEST_CHANGES" && text.trim() === "")
      return fail(c, rt, 422, "review event REQUEST_CHANGES requires a body");
    if (state === "COMMENT" && text.trim() === "" && comments.length === 0)
      return fail(c, rt, 422, "review event COMMENT requires a body or a comment");
    // An empty commit_id (a Go client's "not set") means the head, as on Gitea.
    const commitId = body.commit_id || (await shasOf(found.repo, found.issue)).head;
    const review = rt.store.addReview(found.issue, actor, {
      state,
      body: text,
      commitId,
      comments,
    });
    return c.json(reviewJson(rt, found.repo, found.issue, review));
  });

  const reviewOf = (c: ForgeContext) => {
    const found = pullOf(c);
    const id = intParam(c, "id");
    const review = found?.issue.pull?.reviews.find((r) => r.id === id);
    return found && review ? { ...found, review } : undefined;
  };
  app.get("/api/v1/repos/:owner/:repo/pulls/:index/reviews/:id", (c) => {
    const found = reviewOf(c);
    return found ? c.json(reviewJson(rt, found.repo, found.issue, found.review)) : notFound(c, rt);
  });
  // A pending review is its author's to submit or delete (Gitea's rules and messages).
  app.post("/api/v1/repos/:owner/:repo/pulls/:index/reviews/:id", async (c) => {
    const found = await beginWrite(c, rt, reviewOf(c), submitPullReviewOptions);
    if (!found.ok) return found.response;
    const { actor, body, review, issue } = found;
    if (review.author.toLowerCase() !== actor.toLowerCase()) return notFound(c, rt);
    if (review.state !== "PENDING")
      return fail(c, rt, 422, "only a pending review can be submitted");
    const state = body.event || "PENDING";
    const text = body.body ?? "";
    const isPoster = issue.poster.toLowerCase() === actor.toLowerCase();
    if (state === "PENDING") return fail(c, rt, 422, "review event PENDING is not allowed here");
    if (state !== "APPROVED" && text.trim() === "" && review.body.trim() === "")
      return fail(c, rt, 422, `review event ${state} requires a body`);
    if ((state === "APPROVED" || state === "REQUEST_CHANGES") && isPoster)
      return fail(c, rt, 422, "approve or reject your own pull is not allowed");
    rt.store.submitReview(issue, review, state, text);
    return c.json(reviewJson(rt, found.repo, issue, review));
  });
  app.delete("/api/v1/repos/:owner/:repo/pulls/:index/reviews/:id", async (c) => {
    const found = await beginWrite(c, rt, reviewOf(c), ANY_BODY);
    if (!found.ok) return found.response;
    if (found.review.author.toLowerCase() !== found.actor.toLowerCase())
      return fail(c, rt, 403, "only the review's author may delete it");
    rt.store.deleteReview(found.issue, found.review);
    return c.body(null, 204);
  });

  app.get("/api/v1/repos/:owner/:repo/pulls/:index/reviews/:id/comments", (c) => {
    const found = reviewOf(c);
    if (!found) return notFound(c, rt);
    return c.json(
      found.review.comments.map((comment) =>
        reviewCommentJson(rt, found.repo, found.issue, found.review, comment),
      ),
    );
  });
}
