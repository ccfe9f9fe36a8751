// A small client of the Gitea API v1 (the local forge or a real Gitea): what the forge MCP tools
// and live mode's seeding need, over `fetch`. Every response is JSON or empty; an error status
// becomes a ForgeApiError carrying Gitea's own message, which the MCP tools pass to the agent.
import { summarizeBody } from "./write-log.js";

/** An error answer of the forge, with Gitea's `message` when it sent one. */
export class ForgeApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(message);
    this.name = "ForgeApiError";
  }
}

export interface ForgeApiOptions {
  /** The API root, e.g. `http://127.0.0.1:3000/api/v1`. */
  apiUrl: string;
  /** Sent as `Authorization: token …` when given. */
  token?: string;
  /** A fetch to use instead of the global one (tests, a fetch over a Unix socket). */
  fetch?: typeof fetch;
  /** How long one request may take (default 30 s). */
  timeoutMs?: number;
  /** Told of every write (not GET) once answered: a write log where the forge keeps none. */
  onWrite?: (entry: {
    method: string;
    path: string;
    status: number;
    summary: Record<string, unknown>;
  }) => void;
}

export interface ForgeApiResponse<T> {
  status: number;
  body: T;
  /** `X-Total-Count` of a list, when the forge sent it. */
  total: number | null;
}

/** One client per forge instance; paths are relative to the API root and already encoded. */
export class ForgeApi {
  private readonly fetcher: typeof fetch;
  private readonly base: string;

  constructor(private readonly options: ForgeApiOptions) {
    this.fetcher = options.fetch ?? fetch;
    this.base = options.apiUrl.replace(/\/+$/, "");
  }

  async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ForgeApiResponse<T>> {
    const init: RequestInit = {
      method,
      headers: {
        accept: "application/json",
        ...(this.options.token ? { authorization: `token ${this.options.token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
    };
    let response: Response;
    try {
      response = await this.fetcher(`${this.base}${path}`, init);
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new ForgeApiError(
        0,
        `cannot reach the forge at ${this.base} (${cause ?? (error as Error).message})`,
        method,
        path,
      );
    }
    if (method !== "GET" && this.options.onWrite)
      this.options.onWrite({
        method,
        path: new URL(`${this.base}${path}`).pathname,
        status: response.status,
        summary: summarizeBody(body, this.options.token ?? ""),
      });
    const text = await response.text();
    let parsed: unknown = null;
    if (text !== "") {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!response.ok) {
      const message =
        parsed !== null && typeof parsed === "object" && "message" in parsed
          ? String((parsed as { message: unknown }).message)
          : `HTTP ${response.status}`;
      throw new ForgeApiError(response.status, message, method, path);
    }
    const total = response.headers.get("x-total-count");
    return {
      status: response.status,
      body: parsed as T,
      total: total === null || !/^\d+$/.test(total) ? null : Number(total),
    };
  }

  get<T = unknown>(path: string): Promise<ForgeApiResponse<T>> {
    return this.request<T>("GET", path);
  }
}

/** `/repos/{owner}/{repo}` with both parts encoded. */
export function repoPath(owner: string, repo: string): string {
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
}
