// The forge is reachable by agent-written code: oversized bodies, names that try to climb
// out of a repository, malformed and wrong credentials, bodies of the wrong shape. Each
// is refused with Gitea's status and shape, and none changes the state or leaks the token.
import { request } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningForge, startForge, writeLogSchema } from "../../src/forge/index.js";
import { sampleSeed } from "./support.js";

let forge: RunningForge;
beforeEach(async () => {
  forge = await startForge({ seed: sampleSeed(), maxBodyBytes: 64 * 1024 });
});
afterEach(async () => {
  await forge.close();
});

function call(
  method: string,
  path: string,
  body?: unknown,
  auth: string | null = `token ${forge.token}`,
) {
  return fetch(`${forge.url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(auth === null ? {} : { authorization: auth }),
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
}

/** A request sent byte for byte (fetch would normalise `..` out of the path first). */
function raw(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const url = new URL(forge.url);
    const req = request({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

const comments = "/api/v1/repos/harness/sandbox/issues/1/comments";

describe("attacks on the local forge", () => {
  it("refuses an oversized body with 413 and keeps nothing of it", async () => {
    const before = forge.snapshot();
    const huge = await call("POST", comments, { body: "x".repeat(200 * 1024) });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({
      message: expect.stringContaining("larger than 65536 bytes"),
    });
    // Without Content-Length (a streamed body) the limit holds too.
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 100; i++)
          controller.enqueue(new TextEncoder().encode("y".repeat(1024)));
        controller.close();
      },
    });
    const streamed = await fetch(`${forge.url}${comments}`, {
      method: "POST",
      headers: { authorization: `token ${forge.token}`, "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(forge.snapshot()).toEqual(before);
  });

  it.each([
    "/api/v1/repos/harness/sandbox/../../../etc/passwd",
    "/api/v1/repos/%2e%2e/%2e%2e/issues/1",
    "/api/v1/repos/harness%2F..%2F..%2Fetc/sandbox/issues/1",
    "/api/v1/repos/harness/sandbox%00/issues/1",
    "/api/v1/repos/harness/..%5C..%5Cwindows/issues/1",
  ])("answers 404 for path tricks in owner/repo names: %s", async (path) => {
    expect(await raw(path)).toBe(404);
  });

  it("refuses to create repositories with names that are not Gitea names", async () => {
    for (const name of ["..", "a/b", "../x", "x.git", "", "a b"]) {
      const response = await call("POST", "/api/v1/user/repos", { name });
      expect(response.status, name).toBe(422);
      expect(Object.keys((await response.json()) as object).sort()).toEqual(["message", "url"]);
    }
  });

  it.each([
    ["no credential on a write", null, 401],
    ["a wrong token", "token 0123456789abcdef0123456789abcdef01234567", 401],
    ["a bearer of the wrong token", "Bearer nope", 401],
    [
      "basic auth with a wrong password",
      `Basic ${Buffer.from("agent:wrong").toString("base64")}`,
      401,
    ],
    ["a malformed header", "token", 401],
    ["an unknown scheme", "Digest abc", 401],
  ])("refuses %s", async (_what, auth, status) => {
    const response = await call("POST", comments, { body: "sneaky" }, auth);
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({
      message: expect.any(String),
      url: `${forge.url}/api/swagger`,
    });
    expect(forge.snapshot()!.issues![0]!.comments).toHaveLength(2);
  });

  it("accepts the token as a bearer and as a basic-auth password", async () => {
    expect((await call("POST", comments, { body: "a" }, `Bearer ${forge.token}`)).status).toBe(201);
    const basic = `Basic ${Buffer.from(`agent:${forge.token}`).toString("base64")}`;
    expect((await call("POST", comments, { body: "b" }, basic)).status).toBe(201);
  });

  it.each([
    [{ body: 42 }, "[body]: "],
    [{}, "[body]: "],
    ["{not json", "[body]: invalid JSON"],
    [[1, 2], "[body]: "],
  ])("answers 422 {message, url} for an invalid body %j", async (body, message) => {
    const response = await call("POST", comments, body);
    expect(response.status).toBe(422);
    const json = (await response.json()) as { message: string; url: string };
    expect(json.message.startsWith(message)).toBe(true);
    expect(json.url).toBe(`${forge.url}/api/swagger`);
  });

  it("validates nested fields and enumerations", async () => {
    const state = await call("PATCH", "/api/v1/repos/harness/sandbox/issues/1", {
      state: "deleted",
    });
    expect(state.status).toBe(422);
    expect(((await state.json()) as { message: string }).message).toContain("[state]");
    const review = await call("POST", "/api/v1/repos/harness/sandbox/pulls/3/reviews", {
      event: "APPROVED",
      comments: [{ path: "a.ts", new_position: "three" }],
    });
    expect(review.status).toBe(422);
    expect(((await review.json()) as { message: string }).message).toContain(
      "[comments[0].new_position]",
    );
    const colour = await call("POST", "/api/v1/repos/harness/sandbox/labels", {
      name: "x",
      color: "red",
    });
    expect(colour.status).toBe(422);
  });

  it("never writes the token into the write log, even when a body repeats it", async () => {
    await call("POST", comments, { body: `my token is ${forge.token}` });
    await call("POST", `${comments}?token=${forge.token}`, { body: "query" });
    await call("POST", comments, { body: "x" }, `token ${forge.token}x`);
    expect(writeLogSchema.safeParse(forge.writeLog()).success).toBe(true);
    const log = JSON.stringify(forge.writeLog());
    expect(log).not.toContain(forge.token);
    expect(forge.writeLog().map((entry) => entry.status)).toEqual([201, 201, 401]);
    expect(forge.writeLog()[0]!.summary).toEqual({ body: "my token is [REDACTED]" });
    // The comment itself keeps what the agent wrote: the forge stores, the log summarises.
    expect(forge.snapshot()!.issues![0]!.comments!.at(-2)!.body).toContain(forge.token);
  });
});
