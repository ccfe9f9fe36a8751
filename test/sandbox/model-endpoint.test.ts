// The model endpoint a contained host reaches through the proxy: its API's requests are
// forwarded with the key added, nothing else of the upstream's host is, and a request the client
// gives up on is given up upstream too.

import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelApiRequest } from "../../src/exec/sdk/contained.js";
import { type EndpointProxy, startEndpointProxy } from "../../src/sandbox/index.js";

const KEY = "sk-upstream-secret";
let base: string;
let upstream: http.Server;
let upstreamUrl: string;
const seen: {
  method: string;
  url: string;
  key: string | undefined;
  headers?: Record<string, unknown>;
}[] = [];
let abandoned: Promise<void>;
let markAbandoned: () => void;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-model-endpoint-"));
  abandoned = new Promise((resolve) => {
    markAbandoned = resolve;
  });
  upstream = http.createServer((request, response) => {
    seen.push({
      method: request.method ?? "",
      url: request.url ?? "",
      key: request.headers["x-api-key"] as string | undefined,
      headers: { ...request.headers },
    });
    if (request.url === "/v1/slow") {
      // Never answers; the proxy must let go of it when its client does.
      request.on("close", () => markAbandoned());
      return;
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}/v1`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  await rm(base, { recursive: true, force: true });
});

async function proxy(): Promise<EndpointProxy> {
  return startEndpointProxy({
    upstream: upstreamUrl,
    headers: { "x-api-key": KEY },
    dropHeaders: ["authorization", "x-api-key"],
    parentDir: base,
    allow: modelApiRequest(new URL(upstreamUrl).pathname),
    listen: "loopback",
  });
}

/** Sends a request line as written (no URL normalisation on the way) and returns the status. */
function raw(url: string, method: string, path: string, headers = ""): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `${method} ${path} HTTP/1.1\r\nHost: x\r\n${headers}Content-Length: 0\r\nConnection: close\r\n\r\n`,
      );
    });
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("end", () => resolve(Number(text.split(" ")[1])));
    socket.on("error", reject);
  });
}

describe("the model endpoint proxy", () => {
  it("forwards the API's requests with the key, and refuses other methods, paths and tricks", async () => {
    const served = await proxy();
    try {
      seen.length = 0;
      const url = served.clientBaseUrl;
      expect(await raw(url, "POST", "/v1/messages")).toBe(200);
      expect(await raw(url, "GET", "/v1/models")).toBe(200);
      for (const [method, path] of [
        ["TRACE", "/v1/messages"],
        ["DELETE", "/v1/messages"],
        ["PUT", "/v1/messages"],
        ["GET", "/admin/keys"],
        ["GET", "/v1extra"],
      ] as const)
        expect({ method, path, status: await raw(url, method, path) }).toEqual({
          method,
          path,
          status: 403,
        });
      for (const path of ["/v1/../admin", "/v1/%2e%2e/admin", "/v1/x%2Fy"])
        expect({ path, status: await raw(url, "POST", path) }).toEqual({ path, status: 400 });
      expect(seen.map(({ method, url, key }) => ({ method, url, key }))).toEqual([
        { method: "POST", url: "/v1/messages", key: KEY },
        { method: "GET", url: "/v1/models", key: KEY },
      ]);
      expect(served.log().filter((entry) => entry.refused !== undefined)).toHaveLength(8);
    } finally {
      await served.close();
    }
  });

  // Each spelling some server in front of an API resolves to another route, with the key on it.
  it.each([
    ["a backslash", "/v1/..\\admin"],
    ["a semicolon (path parameters)", "/v1/..;/admin"],
    ["a NUL between dots", "/v1/.%00./admin"],
    ["a double-encoded dot", "/v1/%252e%252e/admin"],
    ["an encoded percent", "/v1/%25/admin"],
    ["an encoded slash", "/v1/a%2fb"],
    ["an empty segment", "/v1//admin"],
    ["a stray percent", "/v1/%zz"],
    ["an absolute-form target", "http://127.0.0.1:1/v1/messages"],
    ["an absolute-form target to another host", "http://169.254.169.254/latest/meta-data"],
    ["the asterisk form", "*"],
  ])("refuses a path with %s (400) and forwards nothing", async (_what, path) => {
    const served = await proxy();
    try {
      seen.length = 0;
      expect(await raw(served.clientBaseUrl, "GET", path)).toBe(400);
      expect(seen).toEqual([]);
      expect(served.requests()).toBe(0);
    } finally {
      await served.close();
    }
  });

  it("forwards the API's own headers and drops every header that routes or identifies a request", async () => {
    const served = await proxy();
    try {
      seen.length = 0;
      const headers = [
        "X-Original-URL: /admin",
        "X-Rewrite-URL: /admin",
        "X-Forwarded-For: 10.0.0.1",
        "X-Forwarded-Host: admin.internal",
        "X-Forwarded-Prefix: /admin",
        "Forwarded: for=10.0.0.1;host=admin.internal",
        "X-Real-IP: 10.0.0.1",
        "X-HTTP-Method-Override: DELETE",
        "Authorization: Bearer sk-agent-own",
        "X-Api-Key: sk-agent-own",
        "Cookie: session=1",
        "Anthropic-Version: 2023-06-01",
        "Anthropic-Beta: tools-2024",
        "X-Stainless-Lang: js",
        "Content-Type: application/json",
        "User-Agent: claude-cli/2",
      ]
        .map((line) => `${line}\r\n`)
        .join("");
      expect(await raw(served.clientBaseUrl, "POST", "/v1/messages?beta=true", headers)).toBe(200);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.url).toBe("/v1/messages?beta=true");
      const forwarded = Object.keys(seen[0]?.headers ?? {}).sort();
      expect(forwarded).toEqual(
        [
          "anthropic-beta",
          "anthropic-version",
          "connection",
          "content-length",
          "content-type",
          "host",
          "user-agent",
          "x-api-key",
          "x-stainless-lang",
        ].sort(),
      );
      expect(seen[0]?.key).toBe(KEY);
    } finally {
      await served.close();
    }
  });

  it("stops waiting upstream when the client goes away", async () => {
    const served = await proxy();
    try {
      const { hostname, port } = new URL(served.clientBaseUrl);
      const socket = connect(Number(port), hostname, () => {
        socket.write("POST /v1/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
      });
      await new Promise<void>((resolve) => {
        const wait = setInterval(() => {
          if (seen.some((entry) => entry.url === "/v1/slow")) {
            clearInterval(wait);
            resolve();
          }
        }, 10);
      });
      socket.destroy();
      await abandoned;
    } finally {
      await served.close();
    }
  });
});
