import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AnthropicLoopback,
  type AnthropicLoopbackOptions,
  startAnthropicLoopback,
} from "../../src/exec/loopback/index.js";

const servers: AnthropicLoopback[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(options: AnthropicLoopbackOptions): Promise<AnthropicLoopback> {
  const server = await startAnthropicLoopback(options);
  servers.push(server);
  return server;
}

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((chunk) => chunk.trim() !== "")
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? "";
      const data = JSON.parse(/^data: (.*)$/m.exec(chunk)?.[1] ?? "null") as Record<
        string,
        unknown
      >;
      return { event, data };
    });
}

function post(
  server: AnthropicLoopback,
  body: unknown,
  headers: Record<string, string> = { "x-api-key": "any-key" },
  path = "/v1/messages",
) {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

interface MessageBody {
  content: { type: string; text?: string; name?: string }[];
}

async function messageBody(response: Response | Promise<Response>): Promise<MessageBody> {
  return (await (await response).json()) as MessageBody;
}

const TOOLS = [{ name: "Read", input_schema: { type: "object" } }];

describe("startAnthropicLoopback", () => {
  it("listens on 127.0.0.1 only and reports the URL to use as ANTHROPIC_BASE_URL", async () => {
    const server = await start({ script: [] });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
  });

  it("streams a tool call as the Messages API does: message_start, blocks with input_json_delta, message_delta, message_stop", async () => {
    const server = await start({
      script: [
        {
          content: [
            { type: "text", text: "Reading the file now." },
            { type: "tool_use", name: "Read", input: { file_path: "src/index.js", limit: 20 } },
          ],
          usage: { input_tokens: 7, output_tokens: 3 },
        },
      ],
    });
    const response = await post(server, {
      model: "claude-test",
      stream: true,
      tools: TOOLS,
      messages: [{ role: "user", content: "go" }],
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = parseSse(await response.text());
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    expect(names.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(names.filter((n) => n === "content_block_start")).toHaveLength(2);
    expect(names.filter((n) => n === "content_block_stop")).toHaveLength(2);

    const start0 = events[0]?.data.message as Record<string, unknown>;
    expect(start0).toMatchObject({ role: "assistant", model: "claude-test", content: [] });
    expect(start0.usage).toMatchObject({ input_tokens: 7 });

    const deltas = events.filter((e) => e.event === "content_block_delta").map((e) => e.data);
    const text = deltas
      .filter((d) => d.index === 0)
      .map((d) => (d.delta as { text: string }).text)
      .join("");
    expect(text).toBe("Reading the file now.");
    const json = deltas
      .filter((d) => d.index === 1)
      .map((d) => d.delta as { type: string; partial_json: string });
    expect(json.length).toBeGreaterThan(1);
    expect(json.every((d) => d.type === "input_json_delta")).toBe(true);
    expect(JSON.parse(json.map((d) => d.partial_json).join(""))).toEqual({
      file_path: "src/index.js",
      limit: 20,
    });
    const toolStart = events.find((e) => e.event === "content_block_start" && e.data.index === 1)
      ?.data.content_block;
    expect(toolStart).toMatchObject({ type: "tool_use", name: "Read", input: {} });
    const final = events.find((e) => e.event === "message_delta")?.data;
    expect(final).toMatchObject({
      delta: { stop_reason: "tool_use" },
      usage: { output_tokens: 3 },
    });
  });

  it("answers a non-streaming request with one JSON message and end_turn for a text turn", async () => {
    const server = await start({ script: [{ content: [{ type: "text", text: "42" }] }] });
    const response = await post(server, {
      model: "m",
      messages: [{ role: "user", content: "6*7?" }],
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "42" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 120, output_tokens: 24, cache_read_input_tokens: 30 },
    });
  });

  it("plays turn i for a history with i assistant messages, so a retried request gets the same turn", async () => {
    const server = await start({
      script: [
        { content: [{ type: "tool_use", name: "Read", input: { file_path: "a" } }] },
        { content: [{ type: "text", text: "second" }] },
      ],
    });
    const history = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Read", input: {} }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: "file text", is_error: true }],
      },
    ];
    for (let i = 0; i < 2; i++) {
      const body = await messageBody(post(server, { model: "m", tools: TOOLS, messages: history }));
      expect(body.content).toEqual([{ type: "text", text: "second" }]);
    }
    const log = server.requests;
    expect(log.map((r) => r.turnIndex)).toEqual([1, 1]);
    expect(log[0]?.toolResults).toEqual([{ toolUseId: "t1", isError: true, text: "file text" }]);
  });

  it("gives a side request without tools the side reply instead of a tool call, without advancing the script", async () => {
    const server = await start({
      script: [{ content: [{ type: "tool_use", name: "Bash", input: { command: "ls" } }] }],
      sideReply: "a title",
    });
    const side = await messageBody(
      post(server, { model: "m", messages: [{ role: "user", content: "title?" }] }),
    );
    expect(side.content).toEqual([{ type: "text", text: "a title" }]);
    const main = await messageBody(
      post(server, { model: "m", tools: TOOLS, messages: [{ role: "user", content: "go" }] }),
    );
    expect(main.content[0]).toMatchObject({ type: "tool_use", name: "Bash" });
    expect(server.requests.map((r) => r.kind)).toEqual(["side", "turn"]);
  });

  it("answers the reachability probe and token counting", async () => {
    const server = await start({ script: [] });
    const hello = await fetch(`${server.url}/api/hello`, { method: "HEAD" });
    expect(hello.status).toBe(200);
    const counted = await post(
      server,
      { model: "m", messages: [{ role: "user", content: "x".repeat(400) }] },
      { "x-api-key": "k" },
      "/v1/messages/count_tokens?beta=true",
    );
    expect(counted.status).toBe(200);
    const { input_tokens } = (await counted.json()) as { input_tokens: number };
    expect(input_tokens).toBeGreaterThan(100);
    expect(server.requests.map((r) => r.kind)).toEqual(["hello", "count_tokens"]);
  });

  it("rejects a wrong key with the API's 401 shape and never records a credential value", async () => {
    const server = await start({ script: [], apiKey: "expected-key-123456" });
    const bad = await post(
      server,
      { model: "m", messages: [] },
      { "x-api-key": "wrong-key-abcdef", cookie: "session=abcdefgh" },
    );
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({
      type: "error",
      error: { type: "authentication_error" },
    });
    const good = await post(
      server,
      { model: "m", messages: [{ role: "user", content: "x" }] },
      { authorization: "Bearer expected-key-123456" },
    );
    expect(good.status).toBe(200);
    const log = server.requests;
    expect(log.map((r) => [r.status, r.credential, r.credentialHeaders])).toEqual([
      [401, "x-api-key", ["cookie", "x-api-key"]],
      [200, "bearer", ["authorization"]],
    ]);
    const text = JSON.stringify(log);
    expect(text).not.toContain("wrong-key-abcdef");
    expect(text).not.toContain("expected-key-123456");
    expect(text).not.toContain("abcdefgh");
  });

  it("answers a scripted error turn with the status and error type given (e.g. 429 with retry-after)", async () => {
    const server = await start({
      script: [{ error: { status: 429, type: "rate_limit_error", message: "slow down" } }],
    });
    const response = await post(server, {
      model: "m",
      tools: TOOLS,
      messages: [{ role: "user", content: "x" }],
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("0");
    expect(await response.json()).toMatchObject({
      error: { type: "rate_limit_error", message: "slow down" },
    });
  });

  it("answers an exhausted script with text and unknown routes with a 404 error", async () => {
    const server = await start({ script: [] });
    const body = await messageBody(
      post(server, { model: "m", messages: [{ role: "user", content: "x" }] }),
    );
    expect(body.content[0]?.text).toContain("exhausted");
    const missing = await fetch(`${server.url}/v1/models`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { type: "not_found_error" } });
  });

  it("refuses requests past its budget and bodies past its size limit", async () => {
    const server = await start({ script: [], maxRequests: 2, maxBodyBytes: 1000 });
    const big = await post(server, {
      model: "m",
      messages: [{ role: "user", content: "x".repeat(5000) }],
    });
    expect(big.status).toBe(413);
    const ok = await post(server, { model: "m", messages: [{ role: "user", content: "x" }] });
    expect(ok.status).toBe(200);
    const over = await post(server, { model: "m", messages: [{ role: "user", content: "x" }] });
    expect(over.status).toBe(503);
    expect(server.requests.length).toBeLessThanOrEqual(2);
  });

  it("close() ends delayed answers and open connections, and can be called twice", async () => {
    const server = await start({
      script: [{ content: [{ type: "text", text: "late" }], delayMs: 60_000 }],
    });
    const pending = post(server, {
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "x" }],
    }).then(
      () => "answered",
      () => "dropped",
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.close();
    await server.close();
    expect(await pending).toBe("dropped");
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(server.port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(false);
      });
      socket.once("error", () => resolve(true));
    });
    expect(refused).toBe(true);
  });
});
