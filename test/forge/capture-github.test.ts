// GitHub capture with @octokit/rest against recorded api.github.com answers served over
// loopback: @octokit/fixtures' paginate-issues and labels recordings, and a repository
// larger than one page written from GitHub's documented REST shapes.
import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { captureRepoState } from "../../src/forge/index.js";
import { type Exchange, type ReplayServer, recordingSleep, startReplay } from "./support.js";

const require = createRequire(import.meta.url);
const GITHUB = "https://api.github.com";

interface Recorded {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  response: unknown;
}

function fixture(scenario: string): Recorded[] {
  return require(`@octokit/fixtures/scenarios/api.github.com/${scenario}/normalized-fixture.json`);
}

function asExchange(recorded: Recorded, path = recorded.path): Exchange {
  const headers: Record<string, string> = {};
  for (const name of ["link", "x-ratelimit-remaining", "x-ratelimit-reset"])
    if (recorded.headers[name] !== undefined) headers[name] = recorded.headers[name];
  return {
    method: recorded.method,
    path,
    status: recorded.status,
    headers,
    body: recorded.response,
  };
}

const user = (login: string) => ({ login, id: login.length, type: "User", site_admin: false });

/** GitHub-shaped pages of `items` at `path`, with GitHub's Link header (next, last, first, prev). */
function githubPages(path: string, items: unknown[], perPage: number, repoId = 4242): Exchange[] {
  const pages = Math.max(1, Math.ceil(items.length / perPage));
  const resource = path.replace(/^\/repos\/[^/]+\/[^/]+/, `/repositories/${repoId}`);
  const link = (page: number) => `<${GITHUB}${resource}?per_page=${perPage}&page=${page}>`;
  return Array.from({ length: pages }, (_, index): Exchange => {
    const page = index + 1;
    const rels = [
      ...(page < pages ? [`${link(page + 1)}; rel="next"`, `${link(pages)}; rel="last"`] : []),
      ...(page > 1 ? [`${link(page - 1)}; rel="prev"`, `${link(1)}; rel="first"`] : []),
    ];
    return {
      method: "GET",
      // The first page is what the client asks for; later pages are where Link points.
      path:
        page === 1 ? `${path}?per_page=${perPage}` : `${resource}?per_page=${perPage}&page=${page}`,
      status: 200,
      headers: rels.length > 0 ? { link: rels.join(", ") } : {},
      body: items.slice(index * perPage, page * perPage),
    };
  });
}

let replay: ReplayServer | undefined;
afterEach(async () => {
  await replay?.close();
  replay = undefined;
});

describe("capturing from GitHub", () => {
  it("follows the recorded Link pages of octokit's paginate-issues fixture and keeps bare-hex label colours", async () => {
    const repoPath = "/repos/octokit-fixture-org/paginate-issues";
    const issuePages = fixture("paginate-issues").map((recorded) => asExchange(recorded));
    const labels = fixture("labels")[0]!;
    const repository = fixture("get-repository")[0]!;
    replay = await startReplay(
      [
        asExchange(repository, repoPath),
        asExchange(labels, `${repoPath}/labels`),
        ...issuePages,
        ...githubPages(`${repoPath}/pulls`, [], 3),
        ...githubPages(`${repoPath}/issues/comments`, [], 3),
        ...githubPages(`${repoPath}/pulls/comments`, [], 3),
      ],
      GITHUB,
    );
    const result = await captureRepoState({
      kind: "github",
      url: replay.url,
      repo: "octokit-fixture-org/paginate-issues",
      token: "secret-token-value",
      pageSize: 3,
    });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.state.issues!.map((issue) => issue.number)).toEqual(
      Array.from({ length: 13 }, (_, i) => i + 1),
    );
    expect(result.state.issues![0]).toMatchObject({
      title: "Test issue 1",
      body: "",
      state: "open",
    });
    expect(result.state.labels!.find((label) => label.name === "bug")).toMatchObject({
      color: "#d73a4a",
      description: "Something isn't working",
    });
    // Five issue pages, reached through Link headers that point at /repositories/1000.
    expect(
      replay.requests.filter((r) => r.url.startsWith("/repositories/1000/issues")),
    ).toHaveLength(4);
    expect(
      replay.requests.every((r) => r.headers.authorization === "token secret-token-value"),
    ).toBe(true);
  });

  it("captures a repository larger than one page: pull requests out of the issue list, merged_at, review states, inline comments by review", async () => {
    const repoPath = "/repos/acme/big";
    const issueItem = (number: number, pull: boolean) => ({
      id: 5000 + number,
      number,
      title: `Item ${number}`,
      user: user("alice"),
      labels:
        number % 2 === 0
          ? [{ id: 1, name: "bug", color: "d73a4a", description: null, default: true }]
          : [],
      state: number % 3 === 0 ? "closed" : "open",
      assignee: null,
      assignees: number % 4 === 0 ? [user("bob")] : [],
      body: number % 5 === 0 ? null : `Body of ${number}\r\nsecond line`,
      created_at: "2024-02-01T10:00:00Z",
      updated_at: "2024-02-02T10:00:00Z",
      ...(pull
        ? { pull_request: { url: `${GITHUB}${repoPath}/pulls/${number}`, merged_at: null } }
        : {}),
    });
    const numbers = Array.from({ length: 130 }, (_, i) => i + 1);
    const isPull = (n: number) => n > 100;
    const pulls = numbers.filter(isPull).map((n) => ({
      ...issueItem(n, false),
      merged_at: n % 6 === 0 ? "2024-02-03T10:00:00Z" : null,
      head: { ref: `feature-${n}` },
      base: { ref: "main" },
    }));
    const comments = numbers.map((n) => ({
      id: 9000 + n,
      user: n === 7 ? null : user("carol"),
      body: `Comment on ${n}`,
      issue_url: `${GITHUB}${repoPath}/issues/${n}`,
      created_at: "2024-02-01T11:00:00Z",
    }));
    const reviewsOf = (n: number) => [
      {
        id: n * 10 + 1,
        user: user("dave"),
        body: "Looks good",
        state: "APPROVED",
        submitted_at: "2024-02-01T12:00:00Z",
      },
      {
        id: n * 10 + 2,
        user: user("erin"),
        body: "Fix this",
        state: "CHANGES_REQUESTED",
        submitted_at: "2024-02-01T12:05:00Z",
      },
      {
        id: n * 10 + 3,
        user: user("frank"),
        body: "",
        state: "COMMENTED",
        submitted_at: "2024-02-01T12:10:00Z",
      },
      { id: n * 10 + 4, user: user("grace"), body: "draft", state: "PENDING" },
      {
        id: n * 10 + 5,
        user: user("heidi"),
        body: "old",
        state: "DISMISSED",
        submitted_at: "2024-02-01T12:15:00Z",
      },
    ];
    const inline = numbers.filter(isPull).flatMap((n) => [
      {
        id: 70000 + n,
        pull_request_review_id: n * 10 + 3,
        user: user("frank"),
        body: "nit",
        path: "a.ts",
        pull_request_url: `${GITHUB}${repoPath}/pulls/${n}`,
      },
      {
        id: 80000 + n,
        pull_request_review_id: n * 10 + 5,
        user: user("heidi"),
        body: "dismissed",
        path: "a.ts",
        pull_request_url: `${GITHUB}${repoPath}/pulls/${n}`,
      },
    ]);
    replay = await startReplay(
      [
        {
          method: "GET",
          path: repoPath,
          status: 200,
          body: { id: 4242, name: "big", full_name: "acme/big" },
        },
        ...githubPages(
          `${repoPath}/labels`,
          [{ id: 1, name: "bug", color: "D73A4A", description: null, default: true }],
          100,
        ),
        ...githubPages(
          `${repoPath}/issues`,
          numbers.map((n) => issueItem(n, isPull(n))),
          100,
        ),
        ...githubPages(`${repoPath}/pulls`, pulls, 100),
        ...githubPages(`${repoPath}/issues/comments`, comments, 100),
        ...githubPages(`${repoPath}/pulls/comments`, inline, 100),
        ...numbers
          .filter(isPull)
          .flatMap((n) => githubPages(`${repoPath}/pulls/${n}/reviews`, reviewsOf(n), 100)),
      ],
      GITHUB,
    );
    const result = await captureRepoState({ kind: "github", url: replay.url, repo: "acme/big" });
    if (!result.ok) throw new Error(result.error.message);
    const { state } = result;
    expect(state.issues).toHaveLength(100);
    expect(state.pullRequests).toHaveLength(30);
    expect(state.labels).toEqual([{ name: "bug", color: "#d73a4a", description: "", id: 1 }]);
    expect(state.issues![4]).toMatchObject({ number: 5, body: "", labels: [], assignees: [] });
    expect(state.issues![3]).toMatchObject({
      number: 4,
      body: "Body of 4\nsecond line",
      labels: ["bug"],
      assignees: ["bob"],
    });
    expect(state.issues![6]!.comments).toEqual([
      expect.objectContaining({ author: "ghost", body: "Comment on 7" }),
    ]);
    const pr = state.pullRequests!.find((p) => p.number === 102)!;
    const stateOf = (n: number) => state.pullRequests!.find((p) => p.number === n)!.state;
    expect([stateOf(102), stateOf(103), stateOf(105)]).toEqual(["merged", "open", "closed"]);
    expect(pr.comments).toEqual([
      expect.objectContaining({ author: "carol", body: "Comment on 102" }),
    ]);
    expect(pr.reviews!.map((r) => [r.author, r.kind, r.comments!.map((c) => c.body)])).toEqual([
      ["dave", "approved", []],
      ["erin", "request-changes", []],
      ["frank", "comment", ["nit"]],
    ]);
    expect(
      replay.requests.some((r) => r.url.includes("/repositories/4242/issues?per_page=100&page=2")),
    ).toBe(true);
  });

  it("waits for x-ratelimit-reset on a primary rate limit, and names GITHUB_TOKEN on 401", async () => {
    const now = Date.parse("2024-05-01T00:00:00Z");
    const repoPath = "/repos/acme/small";
    const limited: Exchange = {
      method: "GET",
      path: `${repoPath}/labels?per_page=100`,
      status: 403,
      headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(now / 1000 + 30) },
      body: { message: "API rate limit exceeded" },
      once: true,
    };
    const empty = (path: string) => githubPages(path, [], 100);
    replay = await startReplay([
      { method: "GET", path: repoPath, status: 200, body: { id: 1 } },
      limited,
      ...empty(`${repoPath}/labels`),
      ...empty(`${repoPath}/issues`),
      ...empty(`${repoPath}/pulls`),
      ...empty(`${repoPath}/issues/comments`),
      ...empty(`${repoPath}/pulls/comments`),
    ]);
    const recorder = recordingSleep();
    const result = await captureRepoState({
      kind: "github",
      url: replay.url,
      repo: "acme/small",
      sleep: recorder.sleep,
      now: () => now,
    });
    expect(result.ok).toBe(true);
    expect(recorder.waits).toEqual([31_000]);
    await replay.close();
    replay = await startReplay([
      { method: "GET", path: repoPath, status: 401, body: { message: "Bad credentials" } },
    ]);
    const denied = await captureRepoState({
      kind: "github",
      url: replay.url,
      repo: "acme/small",
      token: "nope",
    });
    expect(denied).toEqual({
      ok: false,
      error: { code: "auth", message: expect.stringContaining("set GITHUB_TOKEN") },
    });
    expect(JSON.stringify(denied)).not.toContain("nope");
  });
});
