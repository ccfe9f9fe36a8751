// Issue, issue-label, comment and issue-search endpoints of the local forge. Gitea serves
// pull requests through these too: a pull request is an issue with a `pull_request` field.
import type { Hono } from "hono";
import {
  commentJson,
  issueJson,
  labelJson,
  reactionJson,
  timelineCommentJson,
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
  readBody,
  repoTarget,
} from "./http.js";
import type { IssueRecord, ReactionRecord, RepoRecord } from "./model.js";
import {
  ALLOWED_REACTIONS,
  commentOption,
  createIssueOption,
  editIssueOption,
  editReactionOption,
  issueLabelsOption,
} from "./requests.js";
import type { IssueFilter } from "./store.js";

/** Gitea treats any `state` other than closed/all as open. */
function stateQuery(c: ForgeContext): IssueFilter["state"] {
  const state = c.req.query("state");
  return state === "closed" || state === "all" ? state : "open";
}

function typeQuery(c: ForgeContext): IssueFilter["type"] {
  const type = c.req.query("type");
  return type === "issues" || type === "pulls" ? type : undefined;
}

/**
 * The issue filter a list or search request asks for; a `since`/`before` that is not an RFC 3339
 * time is Gitea's 422.
 */
function issueFilterOf(
  c: ForgeContext,
): { ok: true; filter: IssueFilter } | { ok: false; field: string } {
  const time = (name: string): number | undefined | null => {
    const raw = c.req.query(name);
    if (raw === undefined || raw === "") return undefined;
    const value = /^\d{4}-\d{2}-\d{2}T/.test(raw) ? Date.parse(raw) : Number.NaN;
    return Number.isNaN(value) ? null : value;
  };
  const since = time("since");
  const before = time("before");
  if (since === null) return { ok: false, field: "since" };
  if (before === null) return { ok: false, field: "before" };
  return {
    ok: true,
    filter: {
      state: stateQuery(c),
      type: typeQuery(c),
      labels: listQuery(c.req.query("labels")),
      keyword: c.req.query("q"),
      createdBy: c.req.query("created_by") || undefined,
      assignedTo: c.req.query("assigned_by") || undefined,
      mentioned: c.req.query("mentioned_by") || undefined,
      ...(since === undefined ? {} : { since }),
      ...(before === undefined ? {} : { before }),
    },
  };
}

function listQuery(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  return value
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/** Assignees from Gitea's two fields (the deprecated single `assignee` and the list). */
export function assigneeList(
  one: string | null | undefined,
  many: readonly string[] | null | undefined,
): string[] | undefined {
  if (one == null && many == null) return undefined;
  // Gitea's rule: a list whose first login is empty is no list (Go's split of "" gives [""]).
  const listed = many !== null && many !== undefined && many[0] !== "" ? many : [];
  return [...(one && !listed.includes(one) ? [one] : []), ...listed];
}

/**
 * Issue search across repositories. Registered before any `/repos/:owner/:repo` route,
 * which would otherwise read it as the repository "issues/search".
 */
export function registerIssueSearchRoute(app: Hono<ForgeEnv>, rt: ForgeRuntime): void {
  app.get("/api/v1/repos/issues/search", (c) => {
    const owner = c.req.query("owner")?.toLowerCase();
    const asked = issueFilterOf(c);
    if (!asked.ok) return fail(c, rt, 422, `invalid ${asked.field}: expected an RFC 3339 time`);
    // The search has no per-user filters by login (Gitea's are relative to the caller).
    const { createdBy: _c, assignedTo: _a, mentioned: _m, ...filter } = asked.filter;
    const found = rt.store
      .allRepos()
      .filter((repo) => !repo.private || c.get("actor") !== null)
      .filter((repo) => owner === undefined || repo.owner.toLowerCase() === owner)
      .flatMap((repo) => rt.store.listIssues(repo, filter).map((issue) => ({ repo, issue })))
      .sort((a, b) => (a.issue.createdAt < b.issue.createdAt ? 1 : -1) || b.issue.id - a.issue.id);
    const page = paginate(c, rt, found);
    return c.json(page.map(({ repo, issue }) => issueJson(rt, repo, issue)));
  });
}

export function registerIssueRoutes(app: Hono<ForgeEnv>, rt: ForgeRuntime): void {
  const issueOf = (c: ForgeContext): { repo: RepoRecord; issue: IssueRecord } | undefined => {
    const repo = findRepo(c, rt);
    const index = intParam(c, "index");
    const issue = repo && index !== undefined ? rt.store.issue(repo, index) : undefined;
    return repo && issue ? { repo, issue } : undefined;
  };

  app.get("/api/v1/repos/:owner/:repo/issues", (c) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    const asked = issueFilterOf(c);
    if (!asked.ok) return fail(c, rt, 422, `invalid ${asked.field}: expected an RFC 3339 time`);
    const issues = rt.store.listIssues(repo, asked.filter);
    return c.json(paginate(c, rt, issues).map((issue) => issueJson(rt, repo, issue)));
  });

  app.post("/api/v1/repos/:owner/:repo/issues", async (c) => {
    const write = await beginWrite(c, rt, repoTarget(c, rt), createIssueOption);
    if (!write.ok) return write.response;
    const { repo, actor, body } = write;
    const created = rt.store.createIssue(repo, actor, {
      title: body.title,
      body: body.body,
      assignees: assigneeList(body.assignee, body.assignees),
      labelIds: body.labels,
      closed: body.closed,
    });
    if (!created.ok) return fail(c, rt, created.status, created.message);
    return c.json(issueJson(rt, repo, created.value), 201);
  });

  app.get("/api/v1/repos/:owner/:repo/issues/comments", (c) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    const page = paginate(c, rt, rt.store.repoComments(repo));
    return c.json(page.map(({ issue, comment }) => commentJson(rt, repo, issue, comment)));
  });
  const commentOf = (c: ForgeContext) => {
    const repo = findRepo(c, rt);
    const id = intParam(c, "id");
    const found = repo && id !== undefined ? rt.store.findComment(repo, id) : undefined;
    return repo && found ? { repo, ...found } : undefined;
  };
  app.get("/api/v1/repos/:owner/:repo/issues/comments/:id", (c) => {
    const found = commentOf(c);
    return found
      ? c.json(commentJson(rt, found.repo, found.issue, found.comment))
      : notFound(c, rt);
  });
  app.patch("/api/v1/repos/:owner/:repo/issues/comments/:id", async (c) => {
    const write = await beginWrite(c, rt, commentOf(c), commentOption);
    if (!write.ok) return write.response;
    if (write.comment.author.toLowerCase() !== write.actor.toLowerCase())
      return fail(c, rt, 403, "user should be the comment's poster");
    const edited = rt.store.editComment(write.issue, write.comment, write.body.body);
    return c.json(commentJson(rt, write.repo, write.issue, edited));
  });
  app.delete("/api/v1/repos/:owner/:repo/issues/comments/:id", async (c) => {
    const write = await beginWrite(c, rt, commentOf(c), ANY_BODY);
    if (!write.ok) return write.response;
    rt.store.deleteComment(write.issue, write.comment);
    return c.body(null, 204);
  });

  app.get("/api/v1/repos/:owner/:repo/issues/:index", (c) => {
    const found = issueOf(c);
    return found ? c.json(issueJson(rt, found.repo, found.issue)) : notFound(c, rt);
  });
  app.patch("/api/v1/repos/:owner/:repo/issues/:index", async (c) => {
    const found = await beginWrite(c, rt, issueOf(c), editIssueOption);
    if (!found.ok) return found.response;
    const { body } = found;
    const edited = rt.store.editIssue(
      found.issue,
      {
        // Gitea changes the title only to a non-empty one: Go clients send "" for "unchanged".
        title: body.title || undefined,
        body: body.body ?? undefined,
        state: body.state ?? undefined,
        assignees: assigneeList(body.assignee, body.assignees),
      },
      found.repo,
    );
    if (!edited.ok) return fail(c, rt, edited.status, edited.message);
    // Gitea answers an issue edit with 201 Created.
    return c.json(issueJson(rt, found.repo, edited.value), 201);
  });

  app.get("/api/v1/repos/:owner/:repo/issues/:index/comments", (c) => {
    const found = issueOf(c);
    if (!found) return notFound(c, rt);
    return c.json(
      found.issue.comments.map((comment) => commentJson(rt, found.repo, found.issue, comment)),
    );
  });
  app.post("/api/v1/repos/:owner/:repo/issues/:index/comments", async (c) => {
    const found = await beginWrite(c, rt, issueOf(c), commentOption);
    if (!found.ok) return found.response;
    const { actor, body } = found;
    const comment = rt.store.addComment(found.issue, actor, body.body);
    return c.json(commentJson(rt, found.repo, found.issue, comment), 201);
  });

  // The timeline as the forge keeps it: the comments, oldest first (`since`/`before` as lists do).
  app.get("/api/v1/repos/:owner/:repo/issues/:index/timeline", (c) => {
    const found = issueOf(c);
    if (!found) return notFound(c, rt);
    const asked = issueFilterOf(c);
    if (!asked.ok) return fail(c, rt, 422, `invalid ${asked.field}: expected an RFC 3339 time`);
    const { since, before } = asked.filter;
    const entries = found.issue.comments.filter(
      (comment) =>
        (since === undefined || Date.parse(comment.updatedAt) >= since) &&
        (before === undefined || Date.parse(comment.updatedAt) <= before),
    );
    return c.json(
      paginate(c, rt, entries).map((comment) =>
        timelineCommentJson(rt, found.repo, found.issue, comment),
      ),
    );
  });

  // Reactions: Gitea's default set (setting.UI.Reactions); any signed-in reader may react.
  app.get("/api/v1/repos/:owner/:repo/issues/:index/reactions", (c) => {
    const found = issueOf(c);
    if (!found) return notFound(c, rt);
    return c.json(
      paginate(c, rt, found.issue.reactions ?? []).map((reaction) => reactionJson(rt, reaction)),
    );
  });
  for (const method of ["post", "delete"] as const) {
    app[method]("/api/v1/repos/:owner/:repo/issues/:index/reactions", async (c) => {
      const found = issueOf(c);
      if (!found) return notFound(c, rt);
      const actor = c.get("actor");
      if (actor === null) return fail(c, rt, 401, "token is required");
      const body = await readBody(c, rt, editReactionOption);
      if (!body.ok) return body.response;
      const content = body.value.content;
      if (!ALLOWED_REACTIONS.includes(content))
        return fail(c, rt, 403, `'${content}' is not an allowed reaction`);
      found.issue.reactions ??= [];
      const reactions = found.issue.reactions;
      const mine = (r: ReactionRecord) =>
        r.content === content && r.user.toLowerCase() === actor.toLowerCase();
      const existing = reactions.find(mine);
      if (method === "delete") {
        found.issue.reactions = reactions.filter((r) => !mine(r));
        return c.body(null, 204);
      }
      if (existing) return c.json(reactionJson(rt, existing), 200);
      const reaction = { user: actor, content, createdAt: rt.store.now() };
      reactions.push(reaction);
      return c.json(reactionJson(rt, reaction), 201);
    });
  }

  const labelsResponse = (c: ForgeContext, repo: RepoRecord, issue: IssueRecord) =>
    c.json(
      rt.store
        .labels(repo)
        .filter((label) => issue.labelIds.includes(label.id))
        .map((label) => labelJson(rt, repo, label)),
    );

  app.get("/api/v1/repos/:owner/:repo/issues/:index/labels", (c) => {
    const found = issueOf(c);
    return found ? labelsResponse(c, found.repo, found.issue) : notFound(c, rt);
  });
  for (const method of ["post", "put"] as const) {
    app[method]("/api/v1/repos/:owner/:repo/issues/:index/labels", async (c) => {
      const found = await beginWrite(c, rt, issueOf(c), issueLabelsOption);
      if (!found.ok) return found.response;
      const refs = found.body.labels ?? [];
      const ids = refs.filter((ref): ref is number => typeof ref === "number");
      const names = refs.filter((ref): ref is string => typeof ref === "string");
      if (ids.length > 0 && names.length > 0)
        return fail(c, rt, 400, "labels should be an array of strings or integers");
      const resolved = [...ids, ...rt.store.labelIdsByName(found.repo, names)];
      if (method === "post") rt.store.addLabels(found.repo, found.issue, resolved);
      else rt.store.setLabels(found.repo, found.issue, resolved);
      return labelsResponse(c, found.repo, found.issue);
    });
  }
  app.delete("/api/v1/repos/:owner/:repo/issues/:index/labels", async (c) => {
    const found = await beginWrite(c, rt, issueOf(c), ANY_BODY);
    if (!found.ok) return found.response;
    rt.store.setLabels(found.repo, found.issue, []);
    return c.body(null, 204);
  });
  app.delete("/api/v1/repos/:owner/:repo/issues/:index/labels/:id", async (c) => {
    const found = await beginWrite(c, rt, issueOf(c), ANY_BODY);
    if (!found.ok) return found.response;
    const id = intParam(c, "id");
    const label = id === undefined ? undefined : rt.store.label(found.repo, id);
    if (!label) return fail(c, rt, 422, `label does not exist [id: ${c.req.param("id")}]`);
    rt.store.setLabels(
      found.repo,
      found.issue,
      found.issue.labelIds.filter((other) => other !== label.id),
    );
    return c.body(null, 204);
  });
}
