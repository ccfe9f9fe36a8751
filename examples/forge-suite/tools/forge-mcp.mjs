// The example's stand-in for a third-party forge MCP server (such as Gitea's own gitea-mcp): a
// stdio MCP server that reads its instance and token from GITEA_HOST and GITEA_ACCESS_TOKEN, and
// whose tools take the repository's owner and name on every call. It depends on nothing but Node:
// newline-delimited JSON-RPC on stdin/stdout.
import { createInterface } from "node:readline";
import { giteaClient, repositoryOperations } from "./gitea.mjs";

const request = giteaClient({
  url: process.env.GITEA_HOST,
  token: process.env.GITEA_ACCESS_TOKEN,
});

const repository = { owner: { type: "string" }, repo: { type: "string" } };
const index = { index: { type: "integer", minimum: 1 } };
const tool = (name, description, properties, required, run) => ({
  name,
  description,
  inputSchema: {
    type: "object",
    properties: { ...repository, ...properties },
    required: ["owner", "repo", ...required],
  },
  run,
});
const state = { type: "string", enum: ["open", "closed", "all"] };

const TOOLS = [
  tool("list_repo_labels", "The repository's labels.", {}, [], (ops) => ops.labels()),
  tool(
    "list_repo_issues",
    "Issues or pull requests of the repository, newest first; `query` searches titles, bodies and comments, `labels` is a comma-separated list of label names.",
    {
      state,
      type: { type: "string", enum: ["issues", "pulls"] },
      query: { type: "string" },
      labels: { type: "string" },
      page: { type: "integer", minimum: 1 },
    },
    [],
    (ops, a) =>
      ops.issues({ state: a.state, type: a.type, q: a.query, labels: a.labels, page: a.page }),
  ),
  tool(
    "get_issue_by_index",
    "One issue or pull request with its comments.",
    index,
    ["index"],
    (ops, a) => ops.issue(a.index),
  ),
  tool("list_repo_pull_requests", "Pull requests of the repository.", { state }, [], (ops, a) =>
    ops.pulls({ state: a.state }),
  ),
  tool(
    "get_pull_request_by_index",
    "One pull request with its reviews.",
    index,
    ["index"],
    (ops, a) => ops.pull(a.index),
  ),
  tool(
    "create_issue",
    "Opens an issue; labels by name.",
    {
      title: { type: "string" },
      body: { type: "string" },
      labels: { type: "array", items: { type: "string" } },
      assignees: { type: "array", items: { type: "string" } },
    },
    ["title"],
    (ops, a) => ops.createIssue(a),
  ),
  tool(
    "create_issue_comment",
    "Comments on an issue or pull request.",
    { ...index, body: { type: "string" } },
    ["index", "body"],
    (ops, a) => ops.comment(a.index, a.body),
  ),
  tool(
    "add_issue_labels",
    "Adds labels, by name, to an issue or pull request.",
    { ...index, labels: { type: "array", items: { type: "string" } } },
    ["index", "labels"],
    (ops, a) => ops.addLabels(a.index, a.labels),
  ),
  tool(
    "add_issue_assignees",
    "Adds assignees to an issue or pull request, keeping its others.",
    { ...index, assignees: { type: "array", items: { type: "string" } } },
    ["index", "assignees"],
    (ops, a) => ops.assign(a.index, a.assignees),
  ),
  tool(
    "edit_issue",
    "Changes an issue's or pull request's title, body or state (open, closed).",
    {
      ...index,
      title: { type: "string" },
      body: { type: "string" },
      state: { type: "string", enum: ["open", "closed"] },
    },
    ["index"],
    (ops, { owner: _o, repo: _r, index: n, ...fields }) => ops.edit(n, fields),
  ),
  tool(
    "create_pull_review",
    "Reviews a pull request: APPROVED, REQUEST_CHANGES or COMMENT, with a body.",
    {
      ...index,
      event: { type: "string", enum: ["APPROVED", "REQUEST_CHANGES", "COMMENT"] },
      body: { type: "string" },
    },
    ["index", "event"],
    (ops, a) => ops.review(a.index, a.event, a.body),
  ),
  tool(
    "merge_pull_request",
    "Merges a pull request (style merge, rebase or squash).",
    { ...index, style: { type: "string", enum: ["merge", "rebase", "squash"] } },
    ["index"],
    (ops, a) => ops.merge(a.index, a.style),
  ),
];

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
}

async function callTool(params) {
  const found = TOOLS.find((t) => t.name === params?.name);
  if (found === undefined)
    return { isError: true, content: [{ type: "text", text: `no tool ${params?.name}` }] };
  const args = params.arguments ?? {};
  try {
    const result = await found.run(repositoryOperations(request, args.owner, args.repo), args);
    return { content: [{ type: "text", text: JSON.stringify(result) }] };
  } catch (error) {
    return { isError: true, content: [{ type: "text", text: error.message }] };
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === "") continue;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    send({ id: null, error: { code: -32700, message: "parse error" } });
    continue;
  }
  const { id, method, params } = message;
  if (id === undefined) continue; // a notification (notifications/initialized)
  if (method === "initialize")
    send({
      id,
      result: {
        protocolVersion: params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "widgets-forge-mcp", version: "1.0.0" },
      },
    });
  else if (method === "tools/list")
    send({ id, result: { tools: TOOLS.map(({ run: _run, ...t }) => t) } });
  else if (method === "tools/call") send({ id, result: await callTool(params) });
  else if (method === "ping") send({ id, result: {} });
  else send({ id, error: { code: -32601, message: `no method ${method}` } });
}
