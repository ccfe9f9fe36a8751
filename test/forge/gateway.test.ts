// The forge gateway: the endpoint proxy with the forge's path rule, in front of a real local
// forge, driven over HTTP as an agent's curl would drive it (here on loopback: the sandboxed
// path is covered by the trial tests).
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ForgeApi,
  forgeGatewayRule,
  type RunningForge,
  startForge,
} from "../../src/forge/index.js";
import { type EndpointProxy, startEndpointProxy } from "../../src/sandbox/index.js";
import { sampleSeed } from "./support.js";

let forge: RunningForge;
let gateway: EndpointProxy;

beforeAll(async () => {
  forge = await startForge({ seed: sampleSeed(), repo: "acme/widgets" });
  const api = new ForgeApi({ apiUrl: forge.apiUrl, token: forge.token });
  await api.request("POST", "/user/repos", { name: "secret" });
  gateway = await startEndpointProxy({
    upstream: forge.url,
    headers: { authorization: `token ${forge.token}` },
    dropHeaders: ["authorization"],
    parentDir: "/tmp",
    listen: "loopback",
    allow: forgeGatewayRule("acme", "widgets"),
    maxBodyBytes: 64 * 1024,
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
    ["GET", "/api/v1/repos/acme/widgets/../../agent/secret/issues"],
    ["GET", "/api/v1/repos/acme/widgets/%2e%2e/%2e%2e/agent/secret/issues"],
    ["GET", "/api/v1/repos/acme%2fwidgets/issues"],
    ["GET", "/api/v1/repos/acme/widgets//issues"],
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

  it("refuses a body past the limit, declared or streamed", async () => {
    const big = "x".repeat(70 * 1024);
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
