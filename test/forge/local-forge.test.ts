// The local forge driven by a real third-party Gitea client (gitea-js, generated from
// Gitea's OpenAPI document), then captured and scored like a trial.
import { giteaApi } from "gitea-js";
import { afterEach, describe, expect, it } from "vitest";
import { captureRepoState, type RunningForge, startForge } from "../../src/forge/index.js";
import { checkMutation, type RepoState } from "../../src/scoring/index.js";
import { conformingFetch } from "../support/gitea-openapi.js";
import { manyIssues, sampleSeed } from "./support.js";

let forge: RunningForge | undefined;
// Every answer gitea-js gets is checked against Gitea's OpenAPI document.
let contract = conformingFetch();
afterEach(async () => {
  await forge?.close();
  forge = undefined;
  const { problems } = contract;
  contract = conformingFetch();
  expect(problems, "responses that differ from Gitea's OpenAPI document").toEqual([]);
});

async function start(seed: RepoState = sampleSeed(), clock?: () => number) {
  forge = await startForge({ seed, ...(clock ? { clock } : {}) });
  const customFetch = contract.fetch;
  return {
    forge,
    api: giteaApi(forge.url, { token: forge.token, customFetch }),
    anon: giteaApi(forge.url, { customFetch }),
  };
}

/** What gitea-js throws for a non-2xx answer: the Response with `error` set to the body. */
async function failure(
  promise: Promise<unknown>,
): Promise<{ status: number; error: { message: string; url: string } }> {
  try {
    await promise;
  } catch (response) {
    return response as { status: number; error: { message: string; url: string } };
  }
  throw new Error("expected the request to fail");
}

describe("the local forge, driven by gitea-js", () => {
  it("lists issues newest first, caps pages at 50 and pages with Link and X-Total-Count", async () => {
    const seed = sampleSeed();
    seed.issues = [...(seed.issues ?? []), ...manyIssues(60)];
    const { forge, api } = await start(seed);
    const first = await api.repos.issueListIssues(forge.owner, forge.repo, {
      state: "all",
      limit: 100,
    });
    expect(first.data).toHaveLength(50);
    expect(first.headers.get("x-total-count")).toBe("66");
    expect(first.headers.get("link")).toContain('rel="next"');
    expect(first.data[0]!.number).toBe(159);
    const second = await api.repos.issueListIssues(forge.owner, forge.repo, {
      state: "all",
      limit: 100,
      page: 2,
    });
    expect(second.data).toHaveLength(16);
    expect(second.headers.get("link")).not.toContain('rel="next"');
    const numbers = [...first.data, ...second.data].map((issue) => issue.number);
    expect(new Set(numbers).size).toBe(66);
    const onlyIssues = await api.repos.issueListIssues(forge.owner, forge.repo, {
      state: "all",
      type: "issues",
    });
    expect(onlyIssues.headers.get("x-total-count")).toBe("63");
    expect(onlyIssues.data).toHaveLength(30);
    const bugsOpen = await api.repos.issueListIssues(forge.owner, forge.repo, {
      labels: "bug,priority: high",
    });
    expect(bugsOpen.data.map((issue) => issue.number)).toEqual([4]);
    const found = await api.repos.issueListIssues(forge.owner, forge.repo, {
      state: "all",
      q: "LAST LINE",
    });
    expect(found.data.map((issue) => issue.number)).toEqual([1]);
  });

  it("renders Gitea's shapes: bare-hex colours, null assignees, pull_request on pull requests", async () => {
    const { forge, api } = await start();
    const issue = (await api.repos.issueGetIssue(forge.owner, forge.repo, 4)).data;
    expect(issue.assignees).toBeNull();
    expect(issue.pull_request).toBeNull();
    expect(issue.labels?.map((l) => [l.name, l.color])).toEqual([
      ["bug", "d73a4a"],
      ["priority: high", "b60205"],
    ]);
    const asIssue = (await api.repos.issueGetIssue(forge.owner, forge.repo, 5)).data;
    expect(asIssue.pull_request).toMatchObject({ merged: true });
    const pull = (await api.repos.repoGetPullRequest(forge.owner, forge.repo, 5)).data;
    expect(pull).toMatchObject({
      merged: true,
      state: "closed",
      merged_by: { login: "maintainer" },
    });
    const comments = (await api.repos.issueGetRepoComments(forge.owner, forge.repo)).data;
    expect(
      comments.map((c) => [
        c.issue_url?.split("/").slice(-2).join("/"),
        c.pull_request_url?.split("/").slice(-2).join("/"),
      ]),
    ).toEqual([
      ["issues/1", ""],
      ["issues/1", ""],
      ["", "pulls/5"],
    ]);
  });

  it("answers 404 with Gitea's JSON for missing issues, repositories and unknown routes", async () => {
    const { forge, api } = await start();
    const missing = await failure(api.repos.issueGetIssue(forge.owner, forge.repo, 99));
    expect(missing.status).toBe(404);
    expect(missing.error).toMatchObject({
      message: "The target couldn't be found.",
      url: `${forge.url}/api/swagger`,
    });
    expect((await failure(api.repos.repoGet(forge.owner, "nope"))).status).toBe(404);
    const unknown = await fetch(`${forge.url}/api/v1/no/such/route`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ message: "The target couldn't be found." });
    expect((await failure(api.repos.repoGetPullRequest(forge.owner, forge.repo, 1))).status).toBe(
      404,
    );
  });

  it("refuses writes without a token (401) and any request with a wrong one", async () => {
    const { forge, anon } = await start();
    const write = await failure(
      anon.repos.issueCreateComment(forge.owner, forge.repo, 1, { body: "hi" }),
    );
    expect(write.status).toBe(401);
    expect(write.error.message).toBe("token is required");
    expect((await anon.repos.issueGetIssue(forge.owner, forge.repo, 1)).status).toBe(200);
    const wrong = giteaApi(forge.url, { token: "0".repeat(40) });
    expect((await failure(wrong.repos.issueGetIssue(forge.owner, forge.repo, 1))).status).toBe(401);
    expect(forge.snapshot()).toEqual(forge.snapshot());
    expect(forge.snapshot()!.issues![0]!.comments).toHaveLength(2);
  });

  it("creates, comments, labels, assigns, closes, reviews and merges; a capture then scores against the expected state", async () => {
    const { forge, api } = await start();
    const { owner, repo } = forge;
    // Issues and pull requests share one number space: the next number follows #6.
    const created = await api.repos.issueCreateIssue(owner, repo, {
      title: "New bug",
      body: "found it",
    });
    expect(created.status).toBe(201);
    expect(created.data.number).toBe(7);
    expect(created.data.user?.login).toBe("agent");
    expect(
      (await api.repos.issueCreateComment(owner, repo, 1, { body: "Fixed in #3" })).status,
    ).toBe(201);
    const labels = await api.repos.issueAddLabel(owner, repo, 2, {
      labels: ["bug", "no-such-label"],
    });
    expect(labels.data.map((l) => l.name)).toEqual(["bug", "docs"]);
    const docs = (await api.repos.issueListLabels(owner, repo)).data.find(
      (l) => l.name === "docs",
    )!;
    expect((await api.repos.issueRemoveLabel(owner, repo, 2, docs.id!)).status).toBe(204);
    const edited = await api.repos.issueEditIssue(owner, repo, 4, {
      assignees: ["alice", "bob"],
      state: "closed",
    });
    expect(edited.status).toBe(201);
    expect(edited.data.state).toBe("closed");
    const review = await api.repos.repoCreatePullReview(owner, repo, 3, {
      event: "APPROVED",
      body: "LGTM",
      comments: [{ path: "src/parser.ts", body: "nice", new_position: 3 }],
    });
    expect(review.data.state).toBe("APPROVED");
    const inline = await api.repos.repoGetPullReviewComments(owner, repo, 3, review.data.id!);
    expect(inline.data.map((c) => [c.path, c.body, c.user?.login])).toEqual([
      ["src/parser.ts", "nice", "agent"],
    ]);
    expect((await api.repos.repoMergePullRequest(owner, repo, 3, { Do: "merge" })).status).toBe(
      200,
    );
    const merged = (await api.repos.repoGetPullRequest(owner, repo, 3)).data;
    expect(merged).toMatchObject({ merged: true, state: "closed", merged_by: { login: "agent" } });
    expect(merged.merged_at).toBeTruthy();
    expect(
      (await failure(api.repos.repoMergePullRequest(owner, repo, 3, { Do: "merge" }))).status,
    ).toBe(405);
    expect(
      (await failure(api.repos.repoEditPullRequest(owner, repo, 3, { state: "open" }))).status,
    ).toBe(412);
    expect((await api.repos.repoPullRequestIsMerged(owner, repo, 3)).status).toBe(204);

    const expected = sampleSeed();
    expected.issues!.push({ number: 7, title: "New bug", body: "found it", state: "open" });
    expected.issues![0]!.comments!.push({ author: "agent", body: "Fixed in #3" });
    expected.issues![1]!.labels = ["bug"];
    expected.issues![2]!.assignees = ["alice", "bob"];
    expected.issues![2]!.state = "closed";
    const pull = expected.pullRequests![0]!;
    pull.state = "merged";
    pull.reviews!.push({
      author: "agent",
      kind: "approved",
      body: "LGTM",
      comments: [{ author: "agent", body: "nice" }],
    });

    const captured = await captureRepoState({
      kind: "gitea",
      url: forge.url,
      repo: `${owner}/${repo}`,
      token: forge.token,
    });
    if (!captured.ok) throw new Error(captured.error.message);
    expect(checkMutation(expected, captured.state)).toEqual({ pass: true });
    expect(checkMutation(expected, forge.snapshot()!)).toEqual({ pass: true });
    // The write log is the trial's evidence: every write, in order, with its status.
    expect(
      forge.writeLog().map((entry) => `${entry.method} ${entry.path} ${entry.status}`),
    ).toContain(`POST /api/v1/repos/${owner}/${repo}/pulls/3/merge 200`);
  });

  it("creates pull requests from existing branches only, and forbids approving one's own", async () => {
    const { forge, api } = await start({
      pullRequests: [{ number: 1, title: "Seeded", state: "closed" }],
    });
    const { owner, repo } = forge;
    expect(
      (
        await failure(
          api.repos.repoCreatePullRequest(owner, repo, { head: "nope", base: "main", title: "x" }),
        )
      ).status,
    ).toBe(404);
    const pull = await api.repos.repoCreatePullRequest(owner, repo, {
      head: "pull-1",
      base: "main",
      title: "Reopened work",
    });
    expect(pull.status).toBe(201);
    expect(pull.data).toMatchObject({
      number: 2,
      head: { ref: "pull-1" },
      base: { ref: "main" },
      merged: false,
    });
    const dup = await failure(
      api.repos.repoCreatePullRequest(owner, repo, {
        head: "pull-1",
        base: "main",
        title: "again",
      }),
    );
    expect(dup.status).toBe(409);
    const own = await failure(
      api.repos.repoCreatePullReview(owner, repo, 2, { event: "APPROVED" }),
    );
    expect(own).toMatchObject({
      status: 422,
      error: { message: "approve your own pull is not allowed" },
    });
    const empty = await failure(
      api.repos.repoCreatePullReview(owner, repo, 2, { event: "COMMENT" }),
    );
    expect(empty.status).toBe(422);
  });

  it("moves updated_at on every change, even within one second", async () => {
    const { forge, api } = await start(sampleSeed(), () => Date.parse("2025-01-01T00:00:00Z"));
    const before = (await api.repos.issueGetIssue(forge.owner, forge.repo, 2)).data.updated_at!;
    await api.repos.issueEditIssue(forge.owner, forge.repo, 2, { title: "Document the CLI flags" });
    const after = (await api.repos.issueGetIssue(forge.owner, forge.repo, 2)).data.updated_at!;
    await api.repos.issueCreateComment(forge.owner, forge.repo, 2, { body: "done" });
    const later = (await api.repos.issueGetIssue(forge.owner, forge.repo, 2)).data.updated_at!;
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
    expect(Date.parse(later)).toBeGreaterThan(Date.parse(after));
  });

  it("makes and deletes a throwaway repository under the user and under the organisation", async () => {
    const { forge, api } = await start();
    const mine = await api.user.createCurrentUserRepo({ name: "scratch" });
    expect(mine.status).toBe(201);
    expect(mine.data.full_name).toBe("agent/scratch");
    const theirs = await api.orgs.createOrgRepo(forge.owner, { name: "trial-1" });
    expect(theirs.data.full_name).toBe(`${forge.owner}/trial-1`);
    expect((await failure(api.orgs.createOrgRepo(forge.owner, { name: "trial-1" }))).status).toBe(
      409,
    );
    expect((await failure(api.orgs.createOrgRepo("nobody", { name: "x" }))).status).toBe(404);
    const label = await api.repos.issueCreateLabel(forge.owner, "trial-1", {
      name: "bug",
      color: "#ee0701",
    });
    expect(label.data.color).toBe("ee0701");
    const issue = await api.repos.issueCreateIssue(forge.owner, "trial-1", {
      title: "first",
      labels: [label.data.id!],
    });
    expect(issue.data.number).toBe(1);
    // Live-mode seeding through the API: a branch, then a pull request from it, merged.
    const branch = await api.repos.repoCreateBranch(forge.owner, "trial-1", {
      new_branch_name: "fix",
      old_branch_name: "main",
    });
    expect(branch.status).toBe(201);
    expect(
      (
        await failure(
          api.repos.repoCreateBranch(forge.owner, "trial-1", { new_branch_name: "fix" }),
        )
      ).status,
    ).toBe(409);
    const pr = await api.repos.repoCreatePullRequest(forge.owner, "trial-1", {
      head: "fix",
      base: "main",
      title: "Fix",
    });
    expect(pr.data.number).toBe(2);
    expect(
      (await api.repos.repoMergePullRequest(forge.owner, "trial-1", 2, { Do: "squash" })).status,
    ).toBe(200);
    expect((await api.repos.repoDelete(forge.owner, "trial-1")).status).toBe(204);
    expect((await failure(api.repos.repoGet(forge.owner, "trial-1"))).status).toBe(404);
    const search = await api.repos.issueSearchIssues({ q: "parser", state: "all" });
    expect(search.data.map((i) => i.number).sort()).toEqual([1, 3]);
  });
});
