// The local Gitea-compatible forge: one Hono app over an in-memory store, listening on
// loopback, seeded from a RepoState. Reads are open; writes need the instance's token.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { type RepoState, validateRepoState } from "../scoring/index.js";
import { InvalidInputError } from "../shared/index.js";
import type { ForgeInfo } from "./contract.js";
import { cloneBare, createGitBacking, listBranches } from "./git.js";
import { type ForgeEnv, type ForgeRuntime, fail, notFound } from "./http.js";
import type { WriteLogEntry } from "./model.js";
import { registerIssueRoutes, registerIssueSearchRoute } from "./routes-issues.js";
import { registerPullRoutes } from "./routes-pulls.js";
import { registerRepoRoutes } from "./routes-repos.js";
import { seedProblems, seedRepository, snapshotRepository } from "./seed.js";
import { ForgeStore, isValidName } from "./store.js";
import { summarizeBody } from "./write-log.js";

export const DEFAULT_REPO = "harness/sandbox";
export const DEFAULT_USER = "agent";
const DEFAULT_AUTHOR = "maintainer";
/** Request bodies above this many bytes get 413 (Gitea's own limits are larger; no API body here needs more). */
const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface ForgeOptions {
  /** The repository state to start from (a RepoState, as `harness forge capture` writes). */
  seed?: RepoState;
  /** `owner/name` of the seeded repository. */
  repo?: string;
  /** The login the token authenticates as. */
  user?: string;
  /** Who opened the seeded issues and pull requests (a RepoState does not say). */
  author?: string;
  /** Port on 127.0.0.1; 0 or absent picks a free one. */
  port?: number;
  /** The token; a random 40-hex-digit one when absent. */
  token?: string;
  /** Milliseconds since the epoch; timestamps come from it. */
  clock?: () => number;
  /** A git repository whose branches back the pull requests (copied, never modified). */
  git?: string;
  maxBodyBytes?: number;
  /**
   * The token's user is a site administrator: a request may act as another existing user with a
   * `Sudo: <login>` header, as on Gitea. Off by default (a trial's agent never gets it); live
   * mode's tests use it to seed authors.
   */
  admin?: boolean;
  /** Further user accounts to create (logins a seed does not mention). */
  users?: readonly string[];
}

export interface RunningForge extends ForgeInfo {
  /** `url` + `/api/v1`. */
  apiUrl: string;
  /** Every write so far, oldest first (a copy). */
  writeLog(): WriteLogEntry[];
  /** A repository's state read directly (the seeded one by default); undefined when it is gone. */
  snapshot(fullName?: string): RepoState | undefined;
  close(): Promise<void>;
}

function splitRepo(fullName: string): { owner: string; name: string } {
  const [owner, name, ...rest] = fullName.split("/");
  if (!owner || !name || rest.length > 0 || !isValidName(owner) || !isValidName(name))
    throw new InvalidInputError("--repo", [
      {
        path: "(file)",
        message: `${JSON.stringify(fullName)} is not owner/name (letters, digits, '-', '_', '.')`,
      },
    ]);
  return { owner, name };
}

function checkLogin(login: string, what: string): void {
  if (!isValidName(login))
    throw new InvalidInputError(what, [
      {
        path: "(file)",
        message: `${JSON.stringify(login)} is not a valid login (letters, digits, '-', '_', '.')`,
      },
    ]);
}

/** Which login a request authenticates as: null when anonymous, "invalid" for a wrong credential. */
function authenticate(header: string | undefined, rt: ForgeRuntime): string | null | "invalid" {
  if (header === undefined || header.trim() === "") return null;
  const [scheme = "", value = ""] = header.trim().split(/\s+/, 2);
  let presented: string | undefined;
  const kind = scheme.toLowerCase();
  if (kind === "token" || kind === "bearer") presented = value;
  else if (kind === "basic") {
    // Gitea accepts the token as the password (or as the user name with any password).
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const [name, password] =
      colon < 0 ? [decoded, ""] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
    presented = sameSecret(password, rt.token) ? password : name;
  }
  return presented !== undefined && sameSecret(presented, rt.token) ? rt.user : "invalid";
}

function sameSecret(presented: string, token: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

type Actor =
  | { ok: true; actor: string | null; sudo: boolean }
  | { ok: false; status: number; message: string };

/**
 * Who a request acts as: the token's user, anonymous, or, for a site administrator's request
 * with a `Sudo` header, the user it names (Gitea's rule; 403 for anyone else, 404 for no such user).
 */
function resolveActor(
  authorization: string | undefined,
  sudo: string | undefined,
  rt: ForgeRuntime,
): Actor {
  const actor = authenticate(authorization, rt);
  if (actor === "invalid")
    return { ok: false, status: 401, message: "invalid username, password or token" };
  if (sudo === undefined || actor === null) return { ok: true, actor, sudo: false };
  if (rt.admin !== true)
    return { ok: false, status: 403, message: "Only administrators allowed to sudo." };
  const account = rt.store.account(sudo);
  if (account === undefined || account.kind !== "user")
    return { ok: false, status: 404, message: `user does not exist [name: ${sudo}]` };
  return { ok: true, actor: account.login, sudo: true };
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The forge's HTTP application over a runtime (exported for in-process use and tests). */
function createForgeApp(rt: ForgeRuntime, maxBodyBytes = DEFAULT_MAX_BODY_BYTES): Hono<ForgeEnv> {
  const app = new Hono<ForgeEnv>();
  app.use("*", async (c, next) => {
    c.set("body", undefined);
    c.set("sudo", false);
    c.set("actor", null);
    const who = resolveActor(c.req.header("authorization"), c.req.header("sudo"), rt);
    if (!who.ok) c.res = fail(c, rt, who.status, who.message);
    else {
      c.set("actor", who.actor);
      c.set("sudo", who.sudo);
      await next();
    }
    const actor = who.ok ? who.actor : null;
    if (WRITE_METHODS.has(c.req.method))
      rt.log.push({
        seq: rt.log.length + 1,
        at: rt.store.now(),
        method: c.req.method,
        path: new URL(c.req.url).pathname,
        actor,
        status: c.res.status,
        summary: summarizeBody(c.get("body"), rt.token),
      });
  });
  app.use(
    "*",
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: (c) => fail(c, rt, 413, `request body larger than ${maxBodyBytes} bytes`),
    }),
  );
  registerIssueSearchRoute(app, rt);
  registerRepoRoutes(app, rt);
  registerIssueRoutes(app, rt);
  registerPullRoutes(app, rt);
  const known = knownPaths(app);
  app.notFound((c) => {
    // A path the API has, asked with a method it does not take: 405, as Gitea's router answers.
    const path = new URL(c.req.url).pathname;
    // `{n}.diff` and `{n}.patch` share the `{n}` route's pattern but are read only.
    const allowed = /\/pulls\/\d+\.(diff|patch)$/.test(path)
      ? ["GET"]
      : known.filter((route) => route.pattern.test(path)).map((r) => r.method);
    if (allowed.length === 0) return notFound(c, rt);
    c.header("Allow", [...new Set(allowed)].join(", "));
    return fail(c, rt, 405, "Method Not Allowed");
  });
  app.onError((_error, c) => fail(c, rt, 500, "internal error of the local forge"));
  return app;
}

/** Each route's method and a pattern its paths match (`:name` stands for one segment). */
function knownPaths(app: Hono<ForgeEnv>): Array<{ method: string; pattern: RegExp }> {
  return app.routes
    .filter((route) => route.method !== "ALL" && route.path.startsWith("/api/"))
    .map((route) => ({
      method: route.method,
      pattern: new RegExp(
        `^${route.path
          .split("/")
          .map((part) =>
            part === "*"
              ? ".+"
              : part.startsWith(":")
                ? "[^/]+"
                : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
          )
          .join("/")}$`,
      ),
    }));
}

/** Starts a forge on 127.0.0.1 with one seeded repository; resolves once it accepts requests. */
export async function startForge(options: ForgeOptions = {}): Promise<RunningForge> {
  const { owner, name } = splitRepo(options.repo ?? DEFAULT_REPO);
  const user = options.user ?? DEFAULT_USER;
  const author = options.author ?? DEFAULT_AUTHOR;
  checkLogin(user, "--user");
  checkLogin(author, "--author");
  const seed = options.seed ?? {};
  const validated = validateRepoState(seed);
  const problems = validated.ok ? seedProblems(seed) : validated.problems;
  if (problems.length > 0) throw new InvalidInputError("seed", problems, "not a usable seed");

  const store = new ForgeStore(options.clock ?? Date.now);
  store.addAccount(user, "user");
  store.addAccount(author, "user");
  for (const login of options.users ?? []) {
    checkLogin(login, "--users");
    store.addAccount(login, "user");
  }
  if (owner.toLowerCase() !== user.toLowerCase()) {
    const existing = store.account(owner);
    if (existing && existing.kind === "user")
      throw new InvalidInputError("--repo", [
        {
          path: "(file)",
          message: `the owner ${owner} is also a user in the seed; name another owner`,
        },
      ]);
    store.addAccount(owner, "organization");
    store.addMember(owner, user);
  }
  const created = store.createRepo(owner, name);
  if (!created.ok) throw new Error(created.message);
  const repo = created.value;
  seedRepository(store, repo, seed, author);

  const rt: ForgeRuntime = {
    root: "",
    store,
    token: options.token ?? randomBytes(20).toString("hex"),
    user,
    ...(options.admin === true ? { admin: true } : {}),
    log: [],
  };
  let workDir: string | undefined;
  if (options.git !== undefined) {
    workDir = await mkdtemp(join(tmpdir(), "hl-forge-"));
    repo.gitDir = join(workDir, `${name}.git`);
    await cloneBare(options.git, repo.gitDir);
    for (const branch of await listBranches(repo.gitDir)) repo.branches.add(branch);
    rt.git = createGitBacking();
  }
  const app = createForgeApp(rt, options.maxBodyBytes);
  const server = await listen(app, options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  rt.root = `${url}/`;
  return {
    url,
    apiUrl: `${url}/api/v1`,
    token: rt.token,
    owner,
    repo: name,
    user,
    ...(repo.gitDir ? { cloneUrl: `file://${repo.gitDir}` } : {}),
    writeLog: () => rt.log.map((entry) => ({ ...entry })),
    snapshot: (fullName = `${owner}/${name}`) => {
      const [o = "", n = ""] = fullName.split("/");
      const found = store.repo(o, n);
      return found ? snapshotRepository(found) : undefined;
    },
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (workDir) await rm(workDir, { recursive: true, force: true });
    },
  };
}

function listen(app: Hono<ForgeEnv>, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname: "127.0.0.1" }) as Server;
    server.once("error", reject);
    server.once("listening", () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
