// What every route of the local forge shares: the Hono environment, Gitea's error bodies,
// request-body validation (422), paging (`page`/`limit`, `Link`, `X-Total-Count`),
// repository look-up and the write permission check.
import type { Context } from "hono";
import { z } from "zod";
import { formatJsonPath } from "../shared/index.js";
import { errorJson, type RenderContext } from "./gitea-json.js";
import { asGoDecodes } from "./go-json.js";
import type { RepoRecord, WriteLogEntry } from "./model.js";
import { type ForgeStore, isValidName, NOT_FOUND } from "./store.js";

export interface ForgeEnv {
  Variables: {
    /** The authenticated login, or null for an anonymous request. */
    actor: string | null;
    /** True when a site administrator acts as `actor` through a `Sudo` header. */
    sudo: boolean;
    /** The parsed request body, kept for the write log's summary. */
    body: unknown;
  };
}

export type ForgeContext = Context<ForgeEnv>;

/** What the routes of one forge instance work on. */
export interface ForgeRuntime extends RenderContext {
  store: ForgeStore;
  token: string;
  user: string;
  /** The token's user is a site administrator (may act as any user with `Sudo`). */
  admin?: boolean;
  log: WriteLogEntry[];
  git?: import("./git.js").GitBacking;
}

/** Gitea's page size rules: `limit` ≤ 0 means 30 (DEFAULT_PAGING_NUM), at most 50 (MAX_RESPONSE_ITEMS). */
export const DEFAULT_PAGE_SIZE = 30;
export const MAX_PAGE_SIZE = 50;

export function fail(
  c: ForgeContext,
  rt: RenderContext,
  status: number,
  message: string,
): Response {
  return c.json(errorJson(rt, message), status as 400);
}

export function notFound(c: ForgeContext, rt: RenderContext): Response {
  return c.json({ errors: null, ...errorJson(rt, NOT_FOUND) }, 404);
}

function integerQuery(c: ForgeContext, name: string): number {
  const raw = c.req.query(name);
  const value = raw === undefined ? 0 : Number.parseInt(raw, 10);
  return Number.isSafeInteger(value) ? value : 0;
}

/** One page of `items`, with Gitea's `Link` and `X-Total-Count` headers set on the response. */
export function paginate<T>(c: ForgeContext, rt: RenderContext, items: readonly T[]): T[] {
  const requested = integerQuery(c, "limit");
  const size = requested <= 0 ? DEFAULT_PAGE_SIZE : Math.min(requested, MAX_PAGE_SIZE);
  const page = Math.max(1, integerQuery(c, "page"));
  setPageHeaders(c, rt, items.length, size, page);
  return items.slice((page - 1) * size, page * size);
}

function setPageHeaders(
  c: ForgeContext,
  rt: RenderContext,
  total: number,
  size: number,
  page: number,
) {
  const pages = Math.max(1, Math.ceil(total / size));
  const url = new URL(c.req.url);
  const link = (to: number, rel: string) => {
    const query = new URLSearchParams(url.search);
    query.set("page", String(to));
    return `<${rt.root}${url.pathname.slice(1)}?${query.toString()}>; rel="${rel}"`;
  };
  const links: string[] = [];
  if (page < pages) links.push(link(page + 1, "next"), link(pages, "last"));
  if (page > 1) links.push(link(1, "first"), link(Math.min(page - 1, pages), "prev"));
  if (links.length > 0) c.header("Link", links.join(","));
  c.header("X-Total-Count", String(total));
  c.header("Access-Control-Expose-Headers", "X-Total-Count, Link");
}

export type BodyResult<T> = { ok: true; value: T } | { ok: false; response: Response };

/** Parses and validates a JSON body; an invalid one is answered with 422 naming the field. */
export async function readBody<S extends z.ZodType>(
  c: ForgeContext,
  rt: RenderContext,
  schema: S,
): Promise<BodyResult<z.output<S>>> {
  const text = await c.req.text();
  let json: unknown = {};
  if (text.trim() !== "") {
    try {
      json = JSON.parse(text);
    } catch (error) {
      c.set("body", { invalidJson: true });
      return {
        ok: false,
        response: fail(c, rt, 422, `[body]: invalid JSON: ${(error as Error).message}`),
      };
    }
  }
  c.set("body", json);
  const parsed = schema.safeParse(asGoDecodes(json, schema));
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length === 0 ? "body" : formatJsonPath(issue.path);
  return { ok: false, response: fail(c, rt, 422, `[${where}]: ${issue.message}`) };
}

/** The repository named by `:owner/:repo`, when it exists and the actor may see it. */
export function findRepo(c: ForgeContext, rt: ForgeRuntime): RepoRecord | undefined {
  const owner = c.req.param("owner") ?? "";
  const name = c.req.param("repo") ?? "";
  if (!isValidName(owner) || !isValidName(name)) return undefined;
  const repo = rt.store.repo(owner, name);
  if (!repo) return undefined;
  if (repo.private && c.get("actor") === null) return undefined;
  return repo;
}

/** The actor when it may write to `repo`; otherwise the 401/403 response to send. */
function writer(
  c: ForgeContext,
  rt: ForgeRuntime,
  repo: RepoRecord,
): { ok: true; actor: string } | { ok: false; response: Response } {
  const actor = c.get("actor");
  if (actor === null) return { ok: false, response: fail(c, rt, 401, "token is required") };
  // A site administrator may write anywhere, also while acting as another user.
  if (!c.get("sudo") && !rt.store.canWriteAs(actor, repo.owner))
    return { ok: false, response: fail(c, rt, 403, "user should have write permission") };
  return { ok: true, actor };
}

/** A positive integer path parameter, or undefined (Gitea answers 404 for anything else). */
export function intParam(c: ForgeContext, name: string): number | undefined {
  const raw = c.req.param(name) ?? "";
  if (!/^\d{1,15}$/.test(raw)) return undefined;
  const value = Number(raw);
  return value > 0 ? value : undefined;
}

/** A body a route ignores (DELETE): read for the write log, anything accepted. */
export const ANY_BODY = z.unknown();

export type WriteStart<T, B> =
  | ({ ok: true; actor: string; body: B } & T)
  | { ok: false; response: Response };

/**
 * The checks every write makes, in Gitea's order: the target exists (404), the actor may
 * write to its repository (401/403), the body is valid (422). The target's fields come
 * back beside the actor and the parsed body.
 */
export async function beginWrite<T extends { repo: RepoRecord }, S extends z.ZodType>(
  c: ForgeContext,
  rt: ForgeRuntime,
  target: T | undefined,
  schema: S,
): Promise<WriteStart<T, z.output<S>>> {
  if (!target) return { ok: false, response: notFound(c, rt) };
  const allowed = writer(c, rt, target.repo);
  if (!allowed.ok) return allowed;
  const body = await readBody(c, rt, schema);
  if (!body.ok) return body;
  return { ...target, ok: true, actor: allowed.actor, body: body.value };
}

/** `{repo}` for the repository named by the path, when it exists and is visible. */
export function repoTarget(c: ForgeContext, rt: ForgeRuntime): { repo: RepoRecord } | undefined {
  const repo = findRepo(c, rt);
  return repo ? { repo } : undefined;
}
