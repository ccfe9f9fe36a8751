// The loopback OpenAI Responses server, exercised with plain HTTP requests.
import { afterEach, describe, expect, it } from "vitest";
import {
  applyPatch,
  execCommand,
  type ResponsesLoopback,
  startResponsesLoopback,
} from "../../src/exec/loopback/index.js";

let server: ResponsesLoopback | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface SseEvent {
  event: string;
  data: Record<string, unknown> & { type: string; sequence_number: number };
}

function parseSse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "";
      const data = JSON.parse(lines.find((l) => l.startsWith("data: "))?.slice(6) ?? "{}");
      return { event, data };
    });
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}/responses`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: "Bearer k-123456789",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("startResponsesLoopback", () => {
  it("listens on 127.0.0.1 only and gives a /v1 base URL", async () => {
    server = await startResponsesLoopback({ script: [] });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/v1`);
  });

  it("streams a scripted turn as Responses API events with usage", async () => {
    server = await startResponsesLoopback({
      script: [
        {
          output: [
            { type: "message", text: "Let me look." },
            execCommand("cat a.js"),
            applyPatch("*** Begin Patch\n*** End Patch\n"),
          ],
          usage: { input_tokens: 500, cached_tokens: 100 },
        },
      ],
    });
    const response = await post(server.url, {
      model: "gpt-5.5",
      stream: true,
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
      tools: [
        { type: "function", name: "exec_command" },
        { type: "custom", name: "apply_patch" },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = parseSse(await response.text());
    expect(events.every((e) => e.event === e.data.type)).toBe(true);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.event)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.delta",
      "response.custom_tool_call_input.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const deltas = events
      .filter((e) => e.event === "response.output_text.delta")
      .map((e) => e.data.delta)
      .join("");
    expect(deltas).toBe("Let me look.");
    const completed = events.at(-1)?.data.response as {
      status: string;
      model: string;
      output: Record<string, unknown>[];
      usage: unknown;
    };
    expect(completed.status).toBe("completed");
    expect(completed.model).toBe("gpt-5.5");
    expect(completed.output.map((o) => [o.type, o.name ?? null, o.call_id ?? null])).toEqual([
      ["message", null, null],
      ["function_call", "exec_command", "call_loopback_0_1"],
      ["custom_tool_call", "apply_patch", "call_loopback_0_2"],
    ]);
    expect(completed.output[1]?.arguments).toBe('{"cmd":"cat a.js"}');
    expect(completed.usage).toEqual({
      input_tokens: 500,
      input_tokens_details: { cached_tokens: 100 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 530,
    });
  });

  it("advances the script only when the client sends back a turn's call outputs, so a retry gets the same turn", async () => {
    server = await startResponsesLoopback({
      script: [{ output: [execCommand("ls")] }, { output: [{ type: "message", text: "second" }] }],
    });
    const first = { model: "m", input: [{ type: "message", role: "user", content: "go" }] };
    const again = await post(server.url, first);
    const retry = await post(server.url, first);
    expect(((await again.json()) as { output: { call_id: string }[] }).output[0]?.call_id).toBe(
      "call_loopback_0_0",
    );
    expect(((await retry.json()) as { output: { call_id: string }[] }).output[0]?.call_id).toBe(
      "call_loopback_0_0",
    );
    const next = await post(server.url, {
      model: "m",
      input: [
        ...first.input,
        {
          type: "function_call",
          call_id: "call_loopback_0_0",
          name: "exec_command",
          arguments: "{}",
        },
        {
          type: "function_call_output",
          call_id: "call_loopback_0_0",
          output: "a.js\nkey=sk-abcdefghijklmnop",
        },
      ],
    });
    const body = (await next.json()) as { output: { content: { text: string }[] }[] };
    expect(body.output[0]?.content[0]?.text).toBe("second");
    const past = await post(server.url, {
      model: "m",
      input: [{ type: "function_call_output", call_id: "call_loopback_1_0", output: "" }],
    });
    const exhausted = (await past.json()) as { output: { content: { text: string }[] }[] };
    expect(exhausted.output[0]?.content[0]?.text).toBe("(the loopback script is exhausted)");

    const log = server.requests;
    expect(log.map((r) => [r.kind, r.turnIndex, r.status])).toEqual([
      ["turn", 0, 200],
      ["turn", 0, 200],
      ["turn", 1, 200],
      ["turn", 2, 200],
    ]);
    expect(log[2]?.inputTypes).toEqual(["message", "function_call", "function_call_output"]);
    expect(log[2]?.toolOutputs).toEqual([
      { callId: "call_loopback_0_0", text: "a.js\nkey=[REDACTED]" },
    ]);
  });

  it("answers scripted API errors and refuses a wrong key, a bad body and unknown routes", async () => {
    server = await startResponsesLoopback({
      apiKey: "k-123456789",
      script: [
        {
          error: {
            status: 429,
            type: "requests",
            code: "rate_limit_exceeded",
            message: "slow down",
          },
        },
      ],
    });
    const limited = await post(server.url, { model: "m", input: [] });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("0");
    expect(await limited.json()).toEqual({
      error: { message: "slow down", type: "requests", code: "rate_limit_exceeded", param: null },
    });
    const wrongKey = await post(
      server.url,
      { model: "m", input: [] },
      { authorization: "Bearer nope" },
    );
    expect(wrongKey.status).toBe(401);
    const noBody = await post(server.url, "not json");
    expect(noBody.status).toBe(400);
    const models = await fetch(`${server.url}/models`);
    expect(models.status).toBe(404);

    const log = server.requests;
    expect(log.map((r) => [r.kind, r.status])).toEqual([
      ["turn", 429],
      ["rejected", 401],
      ["rejected", 400],
      ["not_found", 404],
    ]);
    expect(log[1]?.credential).toBe("bearer");
    expect(log[3]?.credential).toBe("none");
    expect(JSON.stringify(log)).not.toContain("k-123456789");
    expect(log[0]?.headers.authorization).toBe("[REDACTED]");
  });

  it("refuses requests past its budget and stops listening on close", async () => {
    server = await startResponsesLoopback({ script: [], maxRequests: 1 });
    expect((await post(server.url, { model: "m", input: [] })).status).toBe(200);
    expect((await post(server.url, { model: "m", input: [] })).status).toBe(503);
    const url = server.url;
    await server.close();
    await server.close();
    await expect(post(url, { model: "m", input: [] })).rejects.toThrow();
  });
});
