// The forge MCP server driven by the real MCP SDK client over Streamable HTTP on loopback,
// against a real local forge; then the forge's state is scored as a trial would score it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createForgeMcpEndpoint,
  FORGE_MCP_TOOLS,
  ForgeApi,
  type RunningForge,
  type ServedMcpEndpoint,
  serveMcpOnLoopback,
  startForge,
} from "../../src/forge/index.js";
import { applyIntendedChanges, checkMutation } from "../../src/scoring/index.js";
import { sampleSeed } from "./support.js";

let forge: RunningForge;
let served: ServedMcpEndpoint;
let client: Client;

beforeEach(async () => {
  forge = await startForge({ seed: sampleSeed(), repo: "acme/widgets" });
  // A second repository the tools must never reach.
  const api = new ForgeApi({ apiUrl: forge.apiUrl, token: forge.token });
  await api.request("POST", "/user/repos", { name: "secret" });
  await api.request("POST", "/repos/agent/secret/issues", { title: "private" });
  served = await serveMcpOnLoopback(
    createForgeMcpEndpoint({ api, owner: "acme", repo: "widgets" }, { maxBodyBytes: 128 * 1024 }),
  );
  client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
});

afterEach(async () => {
  await client.close();
  await served.close();
  await forge.close();
});

function parsed(result: Awaited<ReturnType<Client["callTool"]>>): unknown {
  const content = result.content as Array<{ type: string; text: string }>;
  return JSON.parse(content[0]!.text);
}

function text(result: Awaited<ReturnType<Client["callTool"]>>): string {
  return (result.content as Array<{ text: string }>)[0]!.text;
}

describe("the forge MCP server", () => {
  it("lists exactly its tools, each with a closed input schema", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([...FORGE_MCP_TOOLS]);
    for (const tool of tools) expect(tool.inputSchema.additionalProperties).toBe(false);
  });

  it("reads issues, pull requests and labels of its repository", async () => {
    const issues = parsed(await client.callTool({ name: "list_issues", arguments: {} })) as {
      total: number;
      items: Array<{ number: number; labels: string[] }>;
    };
    expect(issues.items.map((i) => i.number)).toEqual([4, 1]);
    expect(issues.total).toBe(2);
    const issue = parsed(
      await client.callTool({ name: "get_issue", arguments: { number: 1 } }),
    ) as { title: string; assignees: string[]; comments: Array<{ author: string }> };
    expect(issue).toMatchObject({ title: "Parser drops the last line", assignees: ["alice"] });
    expect(issue.comments.map((c) => c.author)).toEqual(["bob", "bob"]);
    const pull = parsed(
      await client.callTool({ name: "get_pull_request", arguments: { number: 3 } }),
    ) as { reviews: Array<{ author: string; state: string }> };
    expect(pull.reviews).toEqual([
      expect.objectContaining({ author: "carol", state: "REQUEST_CHANGES" }),
    ]);
    const found = parsed(
      await client.callTool({ name: "search_issues", arguments: { query: "crash" } }),
    ) as { items: Array<{ number: number }> };
    expect(found.items.map((i) => i.number)).toEqual([4]);
  });

  it("carries out the write tools, and the forge ends in the state the changes describe", async () => {
    const calls: Array<[string, Record<string, unknown>]> = [
      ["add_comment", { number: 4, body: "Reproduced on main." }],
      ["add_labels", { number: 3, labels: ["docs"] }],
      ["remove_label", { number: 4, label: "priority: high" }],
      ["assign", { number: 4, users: ["agent"] }],
      ["unassign", { number: 1, users: ["alice"] }],
      ["close", { number: 1 }],
      ["reopen", { number: 2 }],
      ["edit", { number: 2, title: "Document the whole CLI" }],
      ["create_issue", { title: "Add a --verbose flag", labels: ["docs"] }],
      ["create_review", { number: 3, event: "approve", body: "Looks good now" }],
      ["merge_pull_request", { number: 3 }],
    ];
    for (const [name, args] of calls) {
      const result = await client.callTool({ name, arguments: args });
      expect(result.isError ?? false, `${name}: ${text(result)}`).toBe(false);
    }
    const expected = applyIntendedChanges(
      sampleSeed(),
      [
        { op: "comment", number: 4, body: "Reproduced on main." },
        { op: "add-label", number: 3, label: "docs" },
        { op: "remove-label", number: 4, label: "priority: high" },
        { op: "assign", number: 4, user: "agent" },
        { op: "unassign", number: 1, user: "alice" },
        { op: "close", number: 1 },
        { op: "reopen", number: 2 },
        { op: "edit", number: 2, title: "Document the whole CLI" },
        { op: "create-issue", title: "Add a --verbose flag", labels: ["docs"] },
        { op: "review", number: 3, kind: "approved", body: "Looks good now" },
        { op: "merge", number: 3 },
      ],
      "agent",
    );
    if (!expected.ok) throw new Error(JSON.stringify(expected.problems));
    expect(checkMutation(expected.state, forge.snapshot()!)).toEqual({ pass: true });
  });

  it("answers a forge refusal as the tool's error, with the forge's message", async () => {
    const result = await client.callTool({
      name: "create_review",
      arguments: { number: 3, event: "request_changes" },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(
      /the forge answered 422: review event REQUEST_CHANGES requires a body/,
    );
    const unknown = await client.callTool({
      name: "add_labels",
      arguments: { number: 1, labels: ["wontfix"] },
    });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/no label "wontfix" in acme\/widgets; its labels are bug, docs/);
  });
});

describe("attacks on the forge MCP server", () => {
  it("refuses a call naming another repository instead of ignoring the argument", async () => {
    const result = await client.callTool({
      name: "get_issue",
      arguments: { number: 1, owner: "agent", repo: "secret" },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Unrecognized keys?: "owner", "repo"|unrecognized/i);
    // The only issue #1 it can read is its own repository's.
    const own = parsed(await client.callTool({ name: "get_issue", arguments: { number: 1 } }));
    expect(own).toMatchObject({ title: "Parser drops the last line" });
  });

  it("keeps names out of the request path: a label name with ../ is only a name", async () => {
    const result = await client.callTool({
      name: "remove_label",
      arguments: { number: 1, label: "../../../agent/secret/labels/1" },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/no label/);
    expect(forge.snapshot("agent/secret")?.issues?.[0]?.title).toBe("private");
  });

  it("refuses numbers that are not positive integers and bodies past the limit", async () => {
    for (const number of [-1, 0, 1.5, "1/../../x"]) {
      const result = await client.callTool({ name: "get_issue", arguments: { number } });
      expect(result.isError, String(number)).toBe(true);
    }
    // Over the endpoint's 128 KiB: refused with 413 before MCP parses it.
    await expect(
      client.callTool({ name: "add_comment", arguments: { number: 1, body: "x".repeat(140_000) } }),
    ).rejects.toThrow(/request body larger than 131072 bytes/);
    const schemaLimit = await client.callTool({
      name: "add_comment",
      arguments: { number: 1, body: "x".repeat(65_537) },
    });
    expect(schemaLimit.isError).toBe(true);
    expect(forge.snapshot()!.issues!.find((i) => i.number === 1)!.comments).toHaveLength(2);
  });

  it("answers only POST on its secret path", async () => {
    const base = new URL(served.url);
    const get = await fetch(served.url);
    expect(get.status).toBe(405);
    const elsewhere = await fetch(`${base.origin}/mcp`, { method: "POST", body: "{}" });
    expect(elsewhere.status).toBe(404);
  });
});
