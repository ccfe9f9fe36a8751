// `harness ci --forge` (I/O): the pull request as GitHub's or Gitea's REST API has it, its one
// harnesslab comment created or edited, and a commit status on its head. The token goes only in
// the Authorization header; no message names it.
import type { CiStatusState } from "./comment.js";

export interface CiForge {
  kind: "github" | "gitea";
  /** The API's root: `https://api.github.com`, `https://gitea.example.com/api/v1`. */
  apiUrl: string;
  /** owner/name of the repository the pull request is in. */
  repo: string;
  pr: number;
  token: string;
}

/** Thrown when the forge refuses or cannot be reached: what, where, and the status. */
export class CiForgeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CiForgeError";
  }
}

const PAGE_SIZE = 50;
/** The most comments read looking for ours (a pull request with more is a conversation, not a PR). */
const MAX_PAGES = 40;

async function call(
  forge: CiForge,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const url = `${forge.apiUrl.replace(/\/+$/, "")}${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        accept: forge.kind === "github" ? "application/vnd.github+json" : "application/json",
        authorization: forge.kind === "github" ? `Bearer ${forge.token}` : `token ${forge.token}`,
        "user-agent": "harnesslab-ci",
        ...(forge.kind === "github" ? { "x-github-api-version": "2022-11-28" } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new CiForgeError(`${method} ${url}: ${(error as Error).message}`);
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text.slice(0, 300);
    try {
      message = String((JSON.parse(text) as { message?: unknown }).message ?? message);
    } catch {
      // not JSON: the text itself
    }
    throw new CiForgeError(
      `${method} ${url}: ${response.status} ${message.split(forge.token).join("[token]")}`,
    );
  }
  return text === "" ? null : JSON.parse(text);
}

const repoPath = (forge: CiForge) => {
  const [owner, name] = forge.repo.split("/");
  return `/repos/${encodeURIComponent(owner ?? "")}/${encodeURIComponent(name ?? "")}`;
};

/** The pull request's head commit, and whether it comes from another repository (a fork). */
export async function pullRequestHead(
  forge: CiForge,
): Promise<{ sha: string; fork: boolean; headRepo: string }> {
  const pull = (await call(forge, "GET", `${repoPath(forge)}/pulls/${forge.pr}`)) as {
    head?: { sha?: string; repo?: { full_name?: string } | null };
    base?: { repo?: { full_name?: string } | null };
  };
  const sha = pull.head?.sha;
  if (typeof sha !== "string" || sha === "")
    throw new CiForgeError(`pull request #${forge.pr} of ${forge.repo} has no head commit`);
  const headRepo = pull.head?.repo?.full_name ?? "";
  const baseRepo = pull.base?.repo?.full_name ?? forge.repo;
  return { sha, fork: headRepo.toLowerCase() !== baseRepo.toLowerCase(), headRepo };
}

/**
 * The login the token writes as: `GET /user`; GitHub's workflow token cannot read it and
 * writes as `github-actions[bot]`.
 */
async function tokenLogin(forge: CiForge): Promise<string> {
  try {
    const user = (await call(forge, "GET", "/user")) as { login?: unknown };
    if (typeof user.login === "string") return user.login;
  } catch (error) {
    if (forge.kind !== "github") throw error;
  }
  return "github-actions[bot]";
}

/**
 * Edits the pull request's comment that starts with `marker` and was written by the token's
 * own user (anyone may post a comment that starts with the marker), or adds one.
 */
export async function upsertComment(
  forge: CiForge,
  marker: string,
  body: string,
): Promise<{ id: number; edited: boolean }> {
  const issues = `${repoPath(forge)}/issues`;
  const login = (await tokenLogin(forge)).toLowerCase();
  // GitHub pages the comments; Gitea answers them all at once (it has no paging here).
  const pages = forge.kind === "github" ? MAX_PAGES : 1;
  for (let page = 1; page <= pages; page += 1) {
    const comments = (await call(
      forge,
      "GET",
      forge.kind === "github"
        ? `${issues}/${forge.pr}/comments?page=${page}&per_page=${PAGE_SIZE}`
        : `${issues}/${forge.pr}/comments`,
    )) as { id: number; body?: string; user?: { login?: string } | null }[];
    const ours = comments.find(
      (c) => c.body?.startsWith(marker) && c.user?.login?.toLowerCase() === login,
    );
    if (ours !== undefined) {
      await call(forge, "PATCH", `${issues}/comments/${ours.id}`, { body });
      return { id: ours.id, edited: true };
    }
    if (comments.length < PAGE_SIZE) break;
  }
  const created = (await call(forge, "POST", `${issues}/${forge.pr}/comments`, { body })) as {
    id: number;
  };
  return { id: created.id, edited: false };
}

/** Sets the commit status `context` on `sha`. */
export async function setCommitStatus(
  forge: CiForge,
  sha: string,
  status: { state: CiStatusState; context: string; description: string; targetUrl?: string },
): Promise<void> {
  // GitHub has no `warning`: a draw that does not fail is a success there.
  const state = forge.kind === "github" && status.state === "warning" ? "success" : status.state;
  await call(forge, "POST", `${repoPath(forge)}/statuses/${sha}`, {
    state,
    context: status.context,
    // Both forges cut a description at 140 characters.
    description: status.description.slice(0, 140),
    ...(status.targetUrl === undefined ? {} : { target_url: status.targetUrl }),
  });
}
