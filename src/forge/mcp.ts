// The forge MCP server: issue and pull-request tools over one repository of a Gitea-compatible
// forge (the trial's local forge, or live mode's throwaway repository), served over MCP's
// Streamable HTTP transport. No tool takes an owner or a repository: the server is bound to
// its trial's repository, and an argument it does not define is an error, not ignored.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { type ForgeApi, ForgeApiError, repoPath } from "./api-client.js";

/** The server's name in hosts' MCP configuration: its tools are `mcp__forge__<tool>`. */
export const FORGE_MCP_SERVER = "forge";

/** Every tool the server offers, in the order it lists them. */
export const FORGE_MCP_TOOLS = [
  "list_labels",
  "list_issues",
  "search_issues",
  "get_issue",
  "list_pull_requests",
  "get_pull_request",
  "add_comment",
  "add_labels",
  "remove_label",
  "assign",
  "unassign",
  "close",
  "reopen",
  "edit",
  "create_issue",
  "create_review",
  "merge_pull_request",
] as const;
export type ForgeMcpTool = (typeof FORGE_MCP_TOOLS)[number];

/** The names a host gives the tools (`mcp__forge__get_issue`), which the tool policy allows. */
export function forgeMcpToolNames(server = FORGE_MCP_SERVER): string[] {
  return FORGE_MCP_TOOLS.map((tool) => `mcp__${server}__${tool}`);
}

/** Request bodies above this many bytes are refused (413) before MCP parses them. */
const MCP_MAX_BODY_BYTES = 256 * 1024;

export interface ForgeMcpTarget {
  api: ForgeApi;
  owner: string;
  repo: string;
}

const number = z.int().min(1).max(1_000_000_000).describe("the issue or pull request number");
const body = z.string().max(65_536, "at most 65536 characters");
const labelName = z.string().min(1).max(200);
const login = z.string().min(1).max(100);
const pageNumber = z.int().min(1).max(10_000).optional().describe("page number, from 1");
const limit = z.int().min(1).max(50).optional().describe("items per page (at most 50; default 30)");

interface GiteaUser {
  login?: string;
}
interface GiteaLabel {
  id: number;
  name: string;
  color?: string;
  description?: string;
}
interface GiteaIssue {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  labels?: GiteaLabel[] | null;
  assignees?: GiteaUser[] | null;
  user?: GiteaUser | null;
  comments?: number;
  pull_request?: { merged?: boolean } | null;
  merged?: boolean;
  head?: { ref?: string };
  base?: { ref?: string };
}
interface GiteaComment {
  id: number;
  body?: string | null;
  user?: GiteaUser | null;
}
interface GiteaReview {
  id: number;
  state: string;
  body?: string | null;
  user?: GiteaUser | null;
}

function issueView(issue: GiteaIssue) {
  const pull = issue.pull_request !== undefined && issue.pull_request !== null;
  const merged = issue.merged === true || issue.pull_request?.merged === true;
  return {
    number: issue.number,
    kind: pull || issue.head !== undefined ? "pull request" : "issue",
    title: issue.title,
    state: merged ? "merged" : issue.state,
    author: issue.user?.login ?? "ghost",
    labels: (issue.labels ?? []).map((label) => label.name),
    assignees: (issue.assignees ?? []).map((user) => user.login ?? "ghost"),
    ...(issue.comments === undefined ? {} : { comments: issue.comments }),
    body: issue.body ?? "",
    ...(issue.head?.ref === undefined ? {} : { head: issue.head.ref, base: issue.base?.ref }),
  };
}

function commentView(comment: GiteaComment) {
  return { id: comment.id, author: comment.user?.login ?? "ghost", body: comment.body ?? "" };
}

function reviewView(review: GiteaReview) {
  return {
    id: review.id,
    author: review.user?.login ?? "ghost",
    state: review.state,
    body: review.body ?? "",
  };
}

function ok(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 1) }] };
}

function failure(message: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text: message }] };
}

/** Runs a tool; a forge error reaches the agent as the tool's error, with the forge's message. */
async function attempt(run: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return ok(await run());
  } catch (error) {
    if (error instanceof ForgeApiError)
      return failure(
        error.status === 0 ? error.message : `the forge answered ${error.status}: ${error.message}`,
      );
    if (error instanceof ToolInputError) return failure(error.message);
    throw error;
  }
}

/** A call the tool itself refuses (an undefined label, an unknown assignee). */
class ToolInputError extends Error {}

function listQuery(fields: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(fields))
    if (value !== undefined) query.set(key, String(value));
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

/** One repository of the forge, as the tools reach it. */
class ForgeRepo {
  readonly path: string;
  constructor(
    readonly api: ForgeApi,
    readonly owner: string,
    readonly name: string,
  ) {
    this.path = repoPath(owner, name);
  }

  async labels(): Promise<GiteaLabel[]> {
    return (await this.api.get<GiteaLabel[]>(`${this.path}/labels?limit=50`)).body ?? [];
  }

  /** The ids of labels given by name; an undefined name is the caller's error, naming the labels there are. */
  async labelIds(names: readonly string[]): Promise<number[]> {
    const defined = await this.labels();
    const unknown = names.filter((name) => !defined.some((label) => label.name === name));
    if (unknown.length > 0)
      throw new ToolInputError(
        `no label ${unknown.map((n) => JSON.stringify(n)).join(", ")} in ${this.owner}/${this.name}; its labels are ${defined.map((l) => l.name).join(", ") || "none"}`,
      );
    return names.map((name) => defined.find((label) => label.name === name)!.id);
  }

  async issue(n: number): Promise<GiteaIssue> {
    return (await this.api.get<GiteaIssue>(`${this.path}/issues/${n}`)).body;
  }

  async listPage(path: string) {
    const answer = await this.api.get<GiteaIssue[]>(path);
    return { total: answer.total, items: (answer.body ?? []).map(issueView) };
  }

  async setAssignees(n: number, change: (current: string[]) => string[]) {
    const current = issueView(await this.issue(n)).assignees;
    const answer = await this.api.request<GiteaIssue>("PATCH", `${this.path}/issues/${n}`, {
      assignees: change(current),
    });
    return { number: n, assignees: issueView(answer.body).assignees };
  }
}

const readOnly = { readOnlyHint: true, openWorldHint: false };
const write = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

/** Registers one tool whose answer (or forge error) becomes the tool's result. */
type ToolRegistrar = <S extends z.ZodObject>(
  name: ForgeMcpTool,
  description: string,
  inputSchema: S,
  annotations: typeof readOnly | typeof write,
  run: (args: z.infer<S>) => Promise<unknown>,
) => void;

/** An MCP server with the forge tools, acting on `target`'s repository only. */
export function createForgeMcpServer(target: ForgeMcpTarget): McpServer {
  const server = new McpServer(
    { name: "harnesslab-forge", version: "1.0.0" },
    {
      instructions: `Issue and pull-request tools for the repository ${target.owner}/${target.repo} on a Gitea-compatible forge. Every tool acts on this repository only.`,
    },
  );
  const repo = new ForgeRepo(target.api, target.owner, target.repo);
  const tool: ToolRegistrar = (name, description, inputSchema, annotations, run) => {
    server.registerTool(name, { description, inputSchema, annotations }, ((
      args: z.infer<typeof inputSchema>,
    ) => attempt(() => run(args))) as never);
  };
  // In FORGE_MCP_TOOLS order: the order a host lists them in.
  registerReadTools(tool, repo);
  registerPullRequestReadTools(tool, repo);
  registerIssueTools(tool, repo);
  registerIssueStateTools(tool, repo);
  registerPullRequestTools(tool, repo);
  return server;
}

/** Tools that read labels and issues, and search. */
function registerReadTools(tool: ToolRegistrar, repo: ForgeRepo): void {
  tool("list_labels", "The repository's labels.", z.strictObject({}), readOnly, async () =>
    (await repo.labels()).map((label) => ({
      name: label.name,
      color: label.color,
      description: label.description ?? "",
    })),
  );
  tool(
    "list_issues",
    "Issues (not pull requests), newest first, one page at a time.",
    z.strictObject({
      state: z.enum(["open", "closed", "all"]).optional().describe("default open"),
      labels: z.array(labelName).max(20).optional().describe("only issues with all these labels"),
      page: pageNumber,
      limit,
    }),
    readOnly,
    (args) =>
      repo.listPage(
        `${repo.path}/issues${listQuery({ type: "issues", state: args.state ?? "open", labels: args.labels?.join(","), page: args.page, limit: args.limit })}`,
      ),
  );
  tool(
    "search_issues",
    "Issues and pull requests whose title, body or comments contain the query (case-insensitive).",
    z.strictObject({
      query: z.string().min(1).max(200),
      state: z.enum(["open", "closed", "all"]).optional().describe("default all"),
      type: z.enum(["issues", "pulls"]).optional().describe("default both"),
      page: pageNumber,
      limit,
    }),
    readOnly,
    (args) =>
      repo.listPage(
        `${repo.path}/issues${listQuery({ q: args.query, state: args.state ?? "all", type: args.type, page: args.page, limit: args.limit })}`,
      ),
  );
  tool(
    "get_issue",
    "One issue (or pull request) with its comments.",
    z.strictObject({ number }),
    readOnly,
    async ({ number: n }) => {
      const found = await repo.issue(n);
      const comments = await repo.api.get<GiteaComment[]>(`${repo.path}/issues/${n}/comments`);
      return { ...issueView(found), comments: (comments.body ?? []).map(commentView) };
    },
  );
}

/** Tools that read pull requests. */
function registerPullRequestReadTools(tool: ToolRegistrar, repo: ForgeRepo): void {
  tool(
    "list_pull_requests",
    "Pull requests, newest first, one page at a time.",
    z.strictObject({
      state: z.enum(["open", "closed", "all"]).optional().describe("default open"),
      page: pageNumber,
      limit,
    }),
    readOnly,
    (args) =>
      repo.listPage(
        `${repo.path}/pulls${listQuery({ state: args.state ?? "open", page: args.page, limit: args.limit })}`,
      ),
  );
  tool(
    "get_pull_request",
    "One pull request with its comments and reviews.",
    z.strictObject({ number }),
    readOnly,
    async ({ number: n }) => {
      const pull = await repo.api.get<GiteaIssue>(`${repo.path}/pulls/${n}`);
      const comments = await repo.api.get<GiteaComment[]>(`${repo.path}/issues/${n}/comments`);
      const reviews = await repo.api.get<GiteaReview[]>(`${repo.path}/pulls/${n}/reviews`);
      return {
        ...issueView(pull.body),
        comments: (comments.body ?? []).map(commentView),
        reviews: (reviews.body ?? []).map(reviewView),
      };
    },
  );
}

/** Tools that add to an issue or pull request: comments, labels, assignees. */
function registerIssueTools(tool: ToolRegistrar, repo: ForgeRepo): void {
  tool(
    "add_comment",
    "Comments on an issue or pull request.",
    z.strictObject({ number, body: body.min(1) }),
    write,
    async ({ number: n, body: text }) =>
      commentView(
        (
          await repo.api.request<GiteaComment>("POST", `${repo.path}/issues/${n}/comments`, {
            body: text,
          })
        ).body,
      ),
  );
  tool(
    "add_labels",
    "Adds labels (by name) to an issue or pull request.",
    z.strictObject({ number, labels: z.array(labelName).min(1).max(20) }),
    write,
    async ({ number: n, labels: names }) => {
      const ids = await repo.labelIds(names);
      const answer = await repo.api.request<GiteaLabel[]>(
        "POST",
        `${repo.path}/issues/${n}/labels`,
        {
          labels: ids,
        },
      );
      return { number: n, labels: (answer.body ?? []).map((label) => label.name) };
    },
  );
  tool(
    "remove_label",
    "Removes one label (by name) from an issue or pull request.",
    z.strictObject({ number, label: labelName }),
    write,
    async ({ number: n, label }) => {
      const [id] = await repo.labelIds([label]);
      await repo.api.request("DELETE", `${repo.path}/issues/${n}/labels/${id}`);
      return { number: n, labels: issueView(await repo.issue(n)).labels };
    },
  );
  tool(
    "assign",
    "Assigns users to an issue or pull request (keeps the current assignees).",
    z.strictObject({ number, users: z.array(login).min(1).max(10) }),
    write,
    ({ number: n, users }) =>
      repo.setAssignees(n, (current) => [...new Set([...current, ...users])]),
  );
  tool(
    "unassign",
    "Removes assignees from an issue or pull request.",
    z.strictObject({ number, users: z.array(login).min(1).max(10) }),
    write,
    ({ number: n, users }) =>
      repo.setAssignees(n, (current) => current.filter((u) => !users.includes(u))),
  );
}

/** Tools that change an issue's or pull request's state, text, or open a new issue. */
function registerIssueStateTools(tool: ToolRegistrar, repo: ForgeRepo): void {
  for (const [name, state] of [
    ["close", "closed"],
    ["reopen", "open"],
  ] as const)
    tool(
      name,
      `${name === "close" ? "Closes" : "Reopens"} an issue or pull request.`,
      z.strictObject({ number }),
      write,
      async ({ number: n }) =>
        issueView(
          (await repo.api.request<GiteaIssue>("PATCH", `${repo.path}/issues/${n}`, { state })).body,
        ),
    );
  tool(
    "edit",
    "Changes the title and/or body of an issue or pull request.",
    z.strictObject({ number, title: z.string().min(1).max(255).optional(), body: body.optional() }),
    write,
    async ({ number: n, title, body: text }) => {
      if (title === undefined && text === undefined)
        throw new ToolInputError("give a title, a body, or both");
      const answer = await repo.api.request<GiteaIssue>("PATCH", `${repo.path}/issues/${n}`, {
        ...(title === undefined ? {} : { title }),
        ...(text === undefined ? {} : { body: text }),
      });
      return issueView(answer.body);
    },
  );
  tool(
    "create_issue",
    "Opens a new issue.",
    z.strictObject({
      title: z.string().min(1).max(255),
      body: body.optional(),
      labels: z.array(labelName).max(20).optional(),
      assignees: z.array(login).max(10).optional(),
    }),
    write,
    async (args) => {
      const ids = args.labels === undefined ? [] : await repo.labelIds(args.labels);
      const answer = await repo.api.request<GiteaIssue>("POST", `${repo.path}/issues`, {
        title: args.title,
        body: args.body ?? "",
        ...(ids.length > 0 ? { labels: ids } : {}),
        ...(args.assignees === undefined ? {} : { assignees: args.assignees }),
      });
      return issueView(answer.body);
    },
  );
}

/** Tools only a pull request has: reviews and merging. */
function registerPullRequestTools(tool: ToolRegistrar, repo: ForgeRepo): void {
  tool(
    "create_review",
    "Reviews a pull request: approve, request changes (needs a body) or comment, with optional inline comments.",
    z.strictObject({
      number,
      event: z.enum(["approve", "request_changes", "comment"]),
      body: body.optional(),
      comments: z
        .array(
          z.strictObject({
            path: z.string().min(1).max(1000),
            line: z.int().min(1).max(10_000_000).optional(),
            body: body.min(1),
          }),
        )
        .max(50)
        .optional(),
    }),
    write,
    async (args) => {
      const event = { approve: "APPROVED", request_changes: "REQUEST_CHANGES", comment: "COMMENT" }[
        args.event
      ];
      const answer = await repo.api.request<GiteaReview>(
        "POST",
        `${repo.path}/pulls/${args.number}/reviews`,
        {
          event,
          body: args.body ?? "",
          comments: (args.comments ?? []).map((c) => ({
            path: c.path,
            body: c.body,
            new_position: c.line ?? 1,
          })),
        },
      );
      return reviewView(answer.body);
    },
  );
  tool(
    "merge_pull_request",
    "Merges an open pull request.",
    z.strictObject({
      number,
      method: z.enum(["merge", "squash"]).optional().describe("default merge"),
    }),
    write,
    async ({ number: n, method }) => {
      await repo.api.request("POST", `${repo.path}/pulls/${n}/merge`, { Do: method ?? "merge" });
      return issueView((await repo.api.get<GiteaIssue>(`${repo.path}/pulls/${n}`)).body);
    },
  );
}

export interface ForgeMcpEndpoint {
  /** Answers one HTTP request to the endpoint (any path: the listener decides what reaches it). */
  handle(request: Request): Promise<Response>;
}

async function boundedBody(
  request: Request,
  max: number,
): Promise<Uint8Array<ArrayBuffer> | "too-large"> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > max) return "too-large";
  const reader = request.body?.getReader();
  if (reader === undefined) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return "too-large";
    }
    chunks.push(value);
  }
  // One buffer of its own (a Request body must not be a view of a shared one).
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function jsonError(status: number, message: string): Response {
  return new Response(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }),
    { status, headers: { "content-type": "application/json" } },
  );
}

/**
 * The server over MCP's Streamable HTTP transport, stateless (a fresh server per request, JSON
 * answers rather than event streams), with bodies bounded before parsing.
 */
export function createForgeMcpEndpoint(
  target: ForgeMcpTarget,
  options: { maxBodyBytes?: number } = {},
): ForgeMcpEndpoint {
  const max = options.maxBodyBytes ?? MCP_MAX_BODY_BYTES;
  return {
    async handle(request: Request): Promise<Response> {
      if (request.method !== "POST")
        // Stateless: no event stream to resume and no session to end.
        return jsonError(405, "this MCP endpoint answers POST requests only");
      const bytes = await boundedBody(request, max);
      if (bytes === "too-large") return jsonError(413, `request body larger than ${max} bytes`);
      const server = createForgeMcpServer(target);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      try {
        return await transport.handleRequest(
          new Request(request.url, {
            method: "POST",
            headers: request.headers,
            body: bytes,
          }),
        );
      } finally {
        await server.close().catch(() => {});
      }
    },
  };
}
