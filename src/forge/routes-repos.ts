// Instance, user, repository and label endpoints of the local forge.
import type { Hono } from "hono";
import {
  commitJson,
  commitStatusJson,
  contentsJson,
  GITEA_VERSION,
  labelJson,
  organizationJson,
  repositoryJson,
  userJson,
} from "./gitea-json.js";
import {
  ANY_BODY,
  beginWrite,
  DEFAULT_PAGE_SIZE,
  type ForgeContext,
  type ForgeEnv,
  type ForgeRuntime,
  fail,
  findRepo,
  intParam,
  MAX_PAGE_SIZE,
  notFound,
  paginate,
  readBody,
  repoTarget,
} from "./http.js";
import type { CommitStatusRecord } from "./model.js";
import {
  createBranchRepoOption,
  createLabelOption,
  createRepoOption,
  createStatusOption,
  editLabelOption,
} from "./requests.js";

export function registerRepoRoutes(app: Hono<ForgeEnv>, rt: ForgeRuntime): void {
  app.get("/api/v1/version", (c) => c.json({ version: GITEA_VERSION }));
  app.get("/api/v1/settings/api", (c) =>
    c.json({
      max_response_items: MAX_PAGE_SIZE,
      default_paging_num: DEFAULT_PAGE_SIZE,
      default_git_trees_per_page: 1000,
      default_max_blob_size: 10_485_760,
    }),
  );
  app.get("/api/v1/user", (c) => {
    const actor = c.get("actor");
    if (actor === null) return fail(c, rt, 401, "token is required");
    return c.json(userJson(rt, actor));
  });
  app.get("/api/v1/users/:username", (c) => {
    const account = rt.store.account(c.req.param("username"));
    return account ? c.json(userJson(rt, account.login)) : notFound(c, rt);
  });

  app.get("/api/v1/orgs/:org", (c) => {
    const account = rt.store.account(c.req.param("org"));
    return account?.kind === "organization"
      ? c.json(organizationJson(rt, account.login))
      : notFound(c, rt);
  });

  app.get("/api/v1/repos/search", (c) => {
    const keyword = (c.req.query("q") ?? "").toLowerCase();
    const visible = rt.store
      .allRepos()
      .filter((repo) => !repo.private || c.get("actor") !== null)
      .filter((repo) => keyword === "" || repo.name.toLowerCase().includes(keyword));
    const page = paginate(c, rt, visible);
    return c.json({ ok: true, data: page.map((repo) => repositoryJson(rt, repo)) });
  });

  app.post("/api/v1/user/repos", async (c) => {
    const actor = c.get("actor");
    if (actor === null) return fail(c, rt, 401, "token is required");
    return createRepo(c, rt, actor);
  });
  app.post("/api/v1/orgs/:org/repos", async (c) => {
    const actor = c.get("actor");
    if (actor === null) return fail(c, rt, 401, "token is required");
    const org = rt.store.account(c.req.param("org"));
    if (org?.kind !== "organization") return notFound(c, rt);
    if (!rt.store.canWriteAs(actor, org.login))
      return fail(c, rt, 403, "Given user is not allowed to create repository in organization.");
    return createRepo(c, rt, org.login);
  });

  app.get("/api/v1/repos/:owner/:repo", (c) => {
    const repo = findRepo(c, rt);
    return repo ? c.json(repositoryJson(rt, repo)) : notFound(c, rt);
  });
  app.delete("/api/v1/repos/:owner/:repo", async (c) => {
    const write = await beginWrite(c, rt, repoTarget(c, rt), ANY_BODY);
    if (!write.ok) return write.response;
    const { repo } = write;
    rt.store.deleteRepo(repo);
    return c.body(null, 204);
  });

  // Branches as names only (no commits) unless the repository has git: enough for a client
  // to prepare the head branch of a pull request, as it would on a real Gitea.
  const branchJson = (name: string) => ({
    name,
    commit: null,
    protected: false,
    required_approvals: 0,
    enable_status_check: false,
    status_check_contexts: [],
    user_can_push: true,
    user_can_merge: true,
    effective_branch_protection_name: "",
  });
  app.get("/api/v1/repos/:owner/:repo/branches", (c) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    return c.json(paginate(c, rt, [...repo.branches].sort()).map(branchJson));
  });
  app.post("/api/v1/repos/:owner/:repo/branches", async (c) => {
    const write = await beginWrite(c, rt, repoTarget(c, rt), createBranchRepoOption);
    if (!write.ok) return write.response;
    const { repo, body } = write;
    if (repo.gitDir)
      return fail(c, rt, 405, "branches of a git-backed repository come from its git repository");
    const from = body.old_ref_name ?? body.old_branch_name ?? repo.defaultBranch;
    if (!repo.branches.has(from.replace(/^refs\/heads\//, ""))) return notFound(c, rt);
    if (!isBranchName(body.new_branch_name))
      return fail(c, rt, 422, `[new_branch_name]: not a valid branch name`);
    if (repo.branches.has(body.new_branch_name))
      return fail(c, rt, 409, "The branch already exists.");
    repo.branches.add(body.new_branch_name);
    return c.json(branchJson(body.new_branch_name), 201);
  });

  // The code at a ref, from the repository's git (a forge without git has no files).
  const contents = async (c: ForgeContext, path: string) => {
    const repo = findRepo(c, rt);
    if (!repo?.gitDir || !rt.git) return notFound(c, rt);
    const ref = c.req.query("ref") || repo.defaultBranch;
    const found = await rt.git.readPath(repo.gitDir, ref, path);
    if (found === undefined) return notFound(c, rt);
    if (found.kind === "file")
      return c.json(
        contentsJson(rt, repo, ref, {
          name: found.path.split("/").pop() ?? found.path,
          path: found.path,
          type: "file",
          sha: found.sha,
          size: found.size,
          lastCommit: found.commit,
          content: found.content,
        }),
      );
    return c.json(
      found.entries.map((entry) =>
        contentsJson(rt, repo, ref, { ...entry, lastCommit: found.commit }),
      ),
    );
  };
  app.get("/api/v1/repos/:owner/:repo/contents", (c) => contents(c, ""));
  app.get("/api/v1/repos/:owner/:repo/contents/*", (c) => {
    // The segments after /api/v1/repos/{owner}/{repo}/contents, as sent (each decoded below).
    const raw = new URL(c.req.url).pathname.split("/").slice(7).join("/");
    let path: string;
    try {
      path = decodeURIComponent(raw);
    } catch {
      return notFound(c, rt);
    }
    return contents(c, path);
  });
  app.get("/api/v1/repos/:owner/:repo/commits", async (c) => {
    const repo = findRepo(c, rt);
    if (!repo?.gitDir || !rt.git) return notFound(c, rt);
    const log = await rt.git.log(
      repo.gitDir,
      c.req.query("sha") || repo.defaultBranch,
      c.req.query("path") || undefined,
    );
    if (log === undefined) return notFound(c, rt);
    return c.json(paginate(c, rt, log).map((commit) => commitJson(rt, repo, commit)));
  });

  // Milestones are not part of the state a forge task seeds or grades: a repository has none.
  app.get("/api/v1/repos/:owner/:repo/milestones", (c) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    return c.json(paginate(c, rt, []));
  });
  app.get("/api/v1/repos/:owner/:repo/milestones/:id", (c) => notFound(c, rt));

  // Who may be assigned: every user who can write to the repository (its owner, or the members
  // of the organization that owns it). Collaborators are users added to a repository one by
  // one; the forge adds none.
  app.get("/api/v1/repos/:owner/:repo/assignees", (c) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    return c.json(rt.store.writers(repo.owner).map((account) => userJson(rt, account.login)));
  });
  app.get("/api/v1/repos/:owner/:repo/collaborators", (c) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    return c.json(paginate(c, rt, []));
  });
  app.get("/api/v1/repos/:owner/:repo/collaborators/:collaborator", (c) => notFound(c, rt));

  // Commit statuses (what a CI job reports on a commit): kept as the client set them, newest
  // first in lists, whatever the commit (a forge without git knows its pull requests' head SHAs
  // only by name).
  const statusesOf = (c: ForgeContext, sha: string) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    const found = repo.statuses.filter((s) => s.sha === sha).reverse();
    return c.json(paginate(c, rt, found).map((s) => commitStatusJson(rt, repo, s)));
  };
  app.get("/api/v1/repos/:owner/:repo/statuses/:sha", (c) => statusesOf(c, c.req.param("sha")));
  app.get("/api/v1/repos/:owner/:repo/commits/:ref/statuses", (c) =>
    statusesOf(c, c.req.param("ref")),
  );
  app.post("/api/v1/repos/:owner/:repo/statuses/:sha", async (c) => {
    const write = await beginWrite(c, rt, repoTarget(c, rt), createStatusOption);
    if (!write.ok) return write.response;
    const { repo, body, actor } = write;
    const status: CommitStatusRecord = {
      id: rt.store.nextId("status"),
      sha: c.req.param("sha"),
      state: body.state,
      context: body.context ?? "default",
      description: body.description ?? "",
      targetUrl: body.target_url ?? "",
      creator: actor,
      createdAt: rt.store.now(),
    };
    repo.statuses.push(status);
    return c.json(commitStatusJson(rt, repo, status), 201);
  });

  app.get("/api/v1/repos/:owner/:repo/labels", (c) => {
    const repo = findRepo(c, rt);
    if (!repo) return notFound(c, rt);
    const page = paginate(c, rt, rt.store.labels(repo));
    return c.json(page.map((label) => labelJson(rt, repo, label)));
  });
  app.post("/api/v1/repos/:owner/:repo/labels", async (c) => {
    const write = await beginWrite(c, rt, repoTarget(c, rt), createLabelOption);
    if (!write.ok) return write.response;
    const { repo, body } = write;
    const created = rt.store.createLabel(repo, body);
    if (!created.ok) return fail(c, rt, created.status, created.message);
    return c.json(labelJson(rt, repo, created.value), 201);
  });
  const labelOf = (c: ForgeContext) => {
    const repo = findRepo(c, rt);
    const id = intParam(c, "id");
    const label = repo && id !== undefined ? rt.store.label(repo, id) : undefined;
    return repo && label ? { repo, label } : undefined;
  };
  app.get("/api/v1/repos/:owner/:repo/labels/:id", (c) => {
    const found = labelOf(c);
    return found ? c.json(labelJson(rt, found.repo, found.label)) : notFound(c, rt);
  });
  app.patch("/api/v1/repos/:owner/:repo/labels/:id", async (c) => {
    const write = await beginWrite(c, rt, labelOf(c), editLabelOption);
    if (!write.ok) return write.response;
    const edited = rt.store.editLabel(write.repo, write.label, write.body);
    if (!edited.ok) return fail(c, rt, edited.status, edited.message);
    return c.json(labelJson(rt, write.repo, edited.value));
  });
  app.delete("/api/v1/repos/:owner/:repo/labels/:id", async (c) => {
    const write = await beginWrite(c, rt, labelOf(c), ANY_BODY);
    if (!write.ok) return write.response;
    rt.store.deleteLabel(write.repo, write.label);
    return c.body(null, 204);
  });
}

async function createRepo(c: ForgeContext, rt: ForgeRuntime, owner: string) {
  const body = await readBody(c, rt, createRepoOption);
  if (!body.ok) return body.response;
  const created = rt.store.createRepo(owner, body.value.name, {
    description: body.value.description,
    private: body.value.private,
    defaultBranch: body.value.default_branch,
  });
  if (!created.ok) return fail(c, rt, created.status, created.message);
  return c.json(repositoryJson(rt, created.value), 201);
}

const BRANCH_NAME = /^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/-]{1,255}$/;

function isBranchName(name: string): boolean {
  return BRANCH_NAME.test(name) && !name.endsWith("/") && !name.endsWith(".lock");
}
