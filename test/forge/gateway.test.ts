// The forge gateway: the endpoint proxy with the forge's path rule, in front of a real local
// forge, driven over HTTP as an agent's curl would drive it (here on loopback: the sandboxed
// path is covered by the trial tests).

import { readFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startForgeGateway } from "../../src/compare/trial/forge-trial.js";
import { FORGE_GATEWAY_ROUTES } from "../../src/forge/gateway.js";
import { ForgeApi, type RunningForge, startForge } from "../../src/forge/index.js";
import type { EndpointProxy } from "../../src/sandbox/index.js";
import { sampleSeed } from "./support.js";

let forge: RunningForge;
let gateway: EndpointProxy;

beforeAll(async () => {
  forge = await startForge({ seed: sampleSeed(), repo: "acme/widgets" });
  const api = new ForgeApi({ apiUrl: forge.apiUrl, token: forge.token });
  await api.request("POST", "/user/repos", { name: "secret" });
  gateway = await startForgeGateway({
    url: forge.url,
    token: forge.token,
    owner: "acme",
    repo: "widgets",
    parentDir: tmpdir(),
    listen: "loopback",
  });
});

afterAll(async () => {
  await gateway.close();
  await forge.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${gateway.clientBaseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

function raw(method: string, path: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(gateway.clientBaseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port, method, path }, (response) => {
      let body = "";
      response.on("data", (chunk) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

describe("the forge gateway", () => {
  it("adds the credential: a write without a token succeeds as the forge's user", async () => {
    const answer = await post("/api/v1/repos/acme/widgets/issues/1/comments", { body: "hi" });
    expect(answer.status).toBe(201);
    expect(((await answer.json()) as { user: { login: string } }).user.login).toBe("agent");
    const me = await fetch(`${gateway.clientBaseUrl}/api/v1/user`);
    expect(me.status).toBe(200);
  });

  it("drops a credential the client sends of its own", async () => {
    const answer = await fetch(`${gateway.clientBaseUrl}/api/v1/repos/acme/widgets/labels`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "token wrong" },
      body: JSON.stringify({ name: "triage", color: "#aaaaaa" }),
    });
    expect(answer.status).toBe(201);
  });
});

describe("attacks on the forge gateway", () => {
  it.each([
    ["GET", "/api/v1/repos/agent/secret"],
    ["GET", "/api/v1/repos/agent/secret/issues"],
    ["GET", "/api/v1/repos/issues/search"],
    ["GET", "/api/v1/repos/search"],
    ["POST", "/api/v1/user/repos"],
    ["DELETE", "/api/v1/repos/acme/widgets"],
    ["PATCH", "/api/v1/repos/acme/widgets"],
    ["POST", "/api/v1/repos/acme/widgets/transfer"],
    ["GET", "/api/v1/admin/users"],
    ["GET", "/"],
  ])("refuses %s %s with 403 and forwards nothing", async (method, path) => {
    const before = gateway.requests();
    // Sent as written: fetch would resolve dot segments before the gateway saw them.
    const answer = await raw(method, path);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).message).toMatch(/refused|only/);
    expect(gateway.requests()).toBe(before);
  });

  it.each([
    ["GET", "/api/v1/repos/acme/widgets/../../agent/secret/issues"],
    ["GET", "/api/v1/repos/acme/widgets/%2e%2e/%2e%2e/agent/secret/issues"],
    ["GET", "/api/v1/repos/acme%2fwidgets/issues"],
    ["GET", "/api/v1/repos/acme/widgets//issues"],
    ["GET", "/api/v1/repos/acme/widgets/issues;/../../agent/secret"],
    ["GET", "http://127.0.0.1/api/v1/repos/agent/secret"],
  ])("refuses the malformed target %s %s with 400 and forwards nothing", async (method, path) => {
    const before = gateway.requests();
    expect((await raw(method, path)).status).toBe(400);
    expect(gateway.requests()).toBe(before);
  });

  // Inside the repository's own path, what outlives a trial or reaches beyond issue and pull
  // request work: webhooks, deploy keys, collaborators, forks, templates, Actions, workflows.
  it.each([
    ["POST", "/api/v1/repos/acme/widgets/hooks"],
    ["GET", "/api/v1/repos/acme/widgets/hooks"],
    ["POST", "/api/v1/repos/acme/widgets/hooks/1/tests"],
    ["PUT", "/api/v1/repos/acme/widgets/collaborators/mallory"],
    ["DELETE", "/api/v1/repos/acme/widgets/collaborators/agent"],
    ["POST", "/api/v1/repos/acme/widgets/keys"],
    ["POST", "/api/v1/repos/acme/widgets/forks"],
    ["POST", "/api/v1/repos/acme/widgets/generate"],
    ["PUT", "/api/v1/repos/acme/widgets/actions/secrets/TOKEN"],
    ["GET", "/api/v1/repos/acme/widgets/actions/variables"],
    ["POST", "/api/v1/repos/acme/widgets/actions/workflows/x.yml/dispatches"],
    ["POST", "/api/v1/repos/acme/widgets/contents/.gitea/workflows/x.yml"],
    ["PUT", "/api/v1/repos/acme/widgets/contents/README.md"],
    ["DELETE", "/api/v1/repos/acme/widgets/contents/README.md"],
    ["PUT", "/api/v1/repos/acme/widgets/topics"],
    ["POST", "/api/v1/repos/acme/widgets/mirror-sync"],
    ["POST", "/api/v1/repos/acme/widgets/milestones"],
    ["DELETE", "/api/v1/repos/acme/widgets/issues/1"],
    // Commit statuses are CI's report (`harness ci`): an agent must not set its own.
    ["POST", "/api/v1/repos/acme/widgets/statuses/0000000000000000000000000000000000000001"],
  ])("refuses %s %s, which no issue or pull request work needs", async (method, path) => {
    const before = gateway.requests();
    const answer = await raw(method, path);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).message).toContain("refused");
    expect(gateway.requests()).toBe(before);
  });

  it("strips sudo, token and access_token from the query and every header but the request's own", async () => {
    const received: { url: string; headers: http.IncomingHttpHeaders }[] = [];
    const recorder = http.createServer((request, response) => {
      received.push({ url: request.url ?? "", headers: request.headers });
      response.writeHead(201, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => recorder.listen(0, "127.0.0.1", resolve));
    const recorded = await startForgeGateway({
      url: `http://127.0.0.1:${(recorder.address() as { port: number }).port}`,
      token: "gateway-token",
      owner: "acme",
      repo: "widgets",
      parentDir: tmpdir(),
      listen: "loopback",
    });
    try {
      const answer = await fetch(
        `${recorded.clientBaseUrl}/api/v1/repos/acme/widgets/issues/1/comments?sudo=alice&SUDO=bob&Token=x&access_token=y&s%75do=eve&keep=1`,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            sudo: "alice",
            authorization: "token agent-own",
            cookie: "i_like_gitea=1",
            "x-gitea-otp": "123456",
            "x-original-url": "/api/v1/admin/users",
            "x-forwarded-for": "10.0.0.1",
          },
          body: JSON.stringify({ body: "as whom?" }),
        },
      );
      expect(answer.status).toBe(201);
      expect(received).toHaveLength(1);
      expect(received[0]?.url).toBe("/api/v1/repos/acme/widgets/issues/1/comments?keep=1");
      const headers = received[0]?.headers ?? {};
      expect(headers.authorization).toBe("token gateway-token");
      for (const name of ["sudo", "cookie", "x-gitea-otp", "x-original-url", "x-forwarded-for"])
        expect(headers[name], name).toBeUndefined();
    } finally {
      await recorded.close();
      recorder.closeAllConnections();
      await new Promise<void>((resolve) => recorder.close(() => resolve()));
    }
  });

  it("forwards what issue and pull request work needs", async () => {
    for (const path of [
      "/api/v1/repos/acme/widgets",
      "/api/v1/repos/acme/widgets/issues?state=all",
      "/api/v1/repos/acme/widgets/issues/1",
      "/api/v1/repos/acme/widgets/issues/1/comments",
      "/api/v1/repos/acme/widgets/labels",
      "/api/v1/repos/acme/widgets/pulls",
    ]) {
      const answer = await raw("GET", path);
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
    }
  });

  it("refuses a body past the limit, declared or streamed", async () => {
    const big = "x".repeat(1100 * 1024);
    const declared = await post("/api/v1/repos/acme/widgets/issues", { title: "t", body: big });
    expect(declared.status).toBe(413);
    const streamed = await fetch(`${gateway.clientBaseUrl}/api/v1/repos/acme/widgets/issues`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(`{"title":"t","body":"${big}"}`));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit).catch(() => null);
    expect(streamed === null || streamed.status !== 201).toBe(true);
    expect(forge.snapshot()!.issues!.some((i) => i.title === "t")).toBe(false);
  });

  it("logs what it refused and what it forwarded", () => {
    const log = gateway.log();
    expect(
      log.some((e) => e.refused !== undefined && e.path === "/api/v1/repos/agent/secret"),
    ).toBe(true);
    expect(log.some((e) => e.refused === undefined && e.status === 201)).toBe(true);
  });
});

describe("docs/forges.md", () => {
  it("lists exactly the routes the gateway forwards, with their methods", async () => {
    const docs = await readFile(new URL("../../docs/forges.md", import.meta.url), "utf8");
    const documented = [...docs.matchAll(/^\| `\{repo\}([^`]*)` \| ([A-Z, ]+) \|$/gm)].map(
      ([, route, methods]) => [route, methods],
    );
    expect(documented).toEqual(
      FORGE_GATEWAY_ROUTES.map(([route, methods]) => [route, methods.join(", ")]),
    );
  });
});
