// Gitea capture against the local forge (real paging) and against recorded Gitea answers
// with the quirks the local forge does not have, all over loopback HTTP.
import { afterEach, describe, expect, it } from "vitest";
import { captureRepoState, type RunningForge, startForge } from "../../src/forge/index.js";
import { checkMutation, validateRepoState } from "../../src/scoring/index.js";
import {
  type Exchange,
  manyIssues,
  type ReplayServer,
  recordingSleep,
  sampleSeed,
  startReplay,
} from "./support.js";

let forge: RunningForge | undefined;
let replay: ReplayServer | undefined;
afterEach(async () => {
  await forge?.close();
  await replay?.close();
  forge = undefined;
  replay = undefined;
});

describe("capturing from Gitea", () => {
  it("returns the seed right after seeding, across pages, even asking for 100 per page", async () => {
    const seed = sampleSeed();
    seed.issues = [...(seed.issues ?? []), ...manyIssues(120)];
    forge = await startForge({ seed });
    for (const pageSize of [100, 50, 7]) {
      const result = await captureRepoState({
        kind: "gitea",
        url: forge.url,
        repo: `${forge.owner}/${forge.repo}`,
        pageSize,
      });
      if (!result.ok) throw new Error(result.error.message);
      expect(result.state.issues).toHaveLength(123);
      expect(checkMutation(seed, result.state)).toEqual({ pass: true });
      expect(validateRepoState(JSON.parse(JSON.stringify(result.state))).ok).toBe(true);
    }
  });

  it("records bodies with LF line ends and colours as lower-case #rrggbb", async () => {
    forge = await startForge({ seed: sampleSeed() });
    const result = await captureRepoState({
      kind: "gitea",
      url: `${forge.url}/api/v1/`,
      repo: `${forge.owner}/${forge.repo}`,
    });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.state.issues![0]!.body).toBe("Steps:\n1. parse\n2. look");
    expect(result.state.labels!.map((l) => l.color)).toEqual(["#d73a4a", "#0075ca", "#b60205"]);
    expect(result.state.pullRequests!.map((p) => [p.number, p.state])).toEqual([
      [3, "open"],
      [5, "merged"],
      [6, "closed"],
    ]);
  });

  it("copes with a Gitea that ignores type=issues, links to its ROOT_URL and sends pending, requested and dismissed reviews", async () => {
    const base = "/api/v1/repos/acme/app";
    const user = (login: string) => ({ id: 1, login });
    const rootUrl = "http://gitea.internal:3000/";
    const issue = (number: number, extra: object = {}) => ({
      id: 100 + number,
      number,
      title: `Issue ${number}`,
      body: null,
      state: "open",
      labels: [{ id: 1, name: "bug", color: "EE0701", description: "" }],
      assignees: null,
      user: user("alice"),
      pull_request: null,
      created_at: "2024-01-01T00:00:00+08:00",
      updated_at: "2024-01-01T00:00:00+08:00",
      ...extra,
    });
    const pages = [
      Array.from({ length: 50 }, (_, i) => issue(i + 1)),
      [issue(51), issue(52, { pull_request: { merged: false } })],
    ];
    const exchanges: Exchange[] = [
      { method: "GET", path: base, status: 200, body: { id: 1, name: "app" } },
      {
        method: "GET",
        path: `${base}/labels`,
        status: 200,
        headers: { "x-total-count": "1" },
        body: [{ id: 1, name: "bug", color: "ee0701", description: "" }],
      },
      ...pages.map((body, index) => ({
        method: "GET",
        path: `${base}/issues?page=${index + 1}`,
        status: 200,
        headers: {
          "x-total-count": "52",
          // Gitea builds Link from ROOT_URL, which this capture cannot reach.
          link: `<${rootUrl}api/v1/repos/acme/app/issues?limit=50&page=2&state=all&type=issues>; rel="next"`,
        },
        body,
      })),
      {
        method: "GET",
        path: `${base}/pulls`,
        status: 200,
        headers: { "x-total-count": "1" },
        body: [{ ...issue(52), merged: false, merged_at: null, pull_request: undefined }],
      },
      {
        method: "GET",
        path: `${base}/issues/comments`,
        status: 200,
        headers: { "x-total-count": "1" },
        body: [
          {
            id: 9,
            user: null,
            body: "from a deleted account",
            issue_url: "",
            pull_request_url: `${rootUrl}acme/app/pulls/52`,
          },
        ],
      },
      {
        method: "GET",
        path: `${base}/pulls/52/reviews`,
        status: 200,
        body: [
          {
            id: 1,
            user: user("bob"),
            body: "",
            state: "APPROVED",
            dismissed: false,
            comments_count: 1,
          },
          { id: 2, user: user("carol"), body: "draft", state: "PENDING", comments_count: 0 },
          { id: 3, user: user("dave"), body: "", state: "REQUEST_REVIEW", comments_count: 0 },
          {
            id: 4,
            user: user("erin"),
            body: "old",
            state: "REQUEST_CHANGES",
            dismissed: true,
            comments_count: 0,
          },
        ],
      },
      {
        method: "GET",
        path: `${base}/pulls/52/reviews/1/comments`,
        status: 200,
        body: [{ id: 11, user: user("bob"), body: "line 3\r\nok" }],
      },
    ];
    replay = await startReplay(exchanges);
    const result = await captureRepoState({
      kind: "gitea",
      url: replay.url,
      repo: "acme/app",
      pageSize: 100,
    });
    if (!result.ok) throw new Error(result.error.message);
    expect(result.state.issues).toHaveLength(51);
    expect(result.state.issues![0]).toMatchObject({ body: "", labels: ["bug"], assignees: [] });
    expect(result.state.pullRequests).toEqual([
      expect.objectContaining({
        number: 52,
        state: "open",
        comments: [expect.objectContaining({ author: "ghost", body: "from a deleted account" })],
        reviews: [
          expect.objectContaining({
            author: "bob",
            kind: "approved",
            comments: [expect.objectContaining({ body: "line 3\nok" })],
          }),
        ],
      }),
    ]);
    expect(replay.requests.filter((r) => r.url.includes("/issues?"))).toHaveLength(2);
  });

  it("says which variable to set on 401, names the repository on 404 and reports a network failure", async () => {
    forge = await startForge({ seed: sampleSeed() });
    const denied = await captureRepoState({
      kind: "gitea",
      url: forge.url,
      repo: `${forge.owner}/${forge.repo}`,
      token: "wrong",
      tokenEnv: "MY_GITEA",
    });
    expect(denied).toEqual({
      ok: false,
      error: { code: "auth", message: expect.stringContaining("set MY_GITEA") },
    });
    const missing = await captureRepoState({
      kind: "gitea",
      url: forge.url,
      repo: `${forge.owner}/nothing`,
    });
    expect(missing).toEqual({
      ok: false,
      error: { code: "not-found", message: expect.stringContaining(`${forge.owner}/nothing`) },
    });
    const closed = await startReplay([]);
    const url = closed.url;
    await closed.close();
    const down = await captureRepoState({ kind: "gitea", url, repo: "harness/sandbox" });
    expect(down).toEqual({
      ok: false,
      error: {
        code: "network",
        message: expect.stringMatching(
          /^network failure: cannot reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
        ),
      },
    });
  });

  it("waits out a 429 with Retry-After and gives up when the wait is over the bound", async () => {
    const base = "/api/v1/repos/acme/app";
    const ok = (path: string, body: unknown = []) => ({ method: "GET", path, status: 200, body });
    const limited: Exchange = {
      method: "GET",
      path: `${base}/labels`,
      status: 429,
      headers: { "retry-after": "2" },
      body: { message: "slow down" },
      once: true,
    };
    const all = [
      ok(base, { id: 1 }),
      limited,
      ok(`${base}/labels`),
      ok(`${base}/issues`),
      ok(`${base}/pulls`),
      ok(`${base}/issues/comments`),
    ];
    replay = await startReplay(all);
    const recorder = recordingSleep();
    const waited = await captureRepoState({
      kind: "gitea",
      url: replay.url,
      repo: "acme/app",
      sleep: recorder.sleep,
    });
    expect(waited.ok).toBe(true);
    expect(recorder.waits).toEqual([2000]);
    await replay.close();
    replay = await startReplay([
      ok(base, { id: 1 }),
      { ...limited, headers: { "retry-after": "3600" } },
    ]);
    const never = recordingSleep();
    const gaveUp = await captureRepoState({
      kind: "gitea",
      url: replay.url,
      repo: "acme/app",
      sleep: never.sleep,
    });
    expect(gaveUp).toEqual({
      ok: false,
      error: { code: "rate-limited", message: expect.stringContaining("3600 s") },
    });
    expect(never.waits).toEqual([]);
  });
});
