// Live mode: a throwaway repository per trial on a real Gitea, seeded from a RepoState through
// the API (as any client would), captured after the agent stopped, then deleted. The seed is
// reproduced exactly or not at all: the state right after seeding is captured and compared with
// the seed, and a difference (an author the token cannot act as, a number the forge gave
// differently) fails the trial's set-up with what differs, instead of grading a different task.
import { checkMutation, type Issue, type PullRequest, type RepoState } from "../scoring/index.js";
import { ForgeApi, ForgeApiError, repoPath } from "./api-client.js";
import { captureRepoState } from "./capture.js";
import { seededHeadBranch } from "./seed.js";

export interface LiveForgeOptions {
  /** The Gitea instance root (the API is at url + /api/v1). */
  url: string;
  token: string;
  /** The variable the token came from, for messages. */
  tokenEnv: string;
  /** Where the repository is created: the token's user or an organisation it belongs to. */
  owner: string;
  /** The login the token must authenticate as. */
  user: string;
  /**
   * Who opens the seeded issues and pull requests; another user than `user` needs a site
   * administrator's token (Gitea's `Sudo`). Default: `user`.
   */
  author?: string;
  fetch?: typeof fetch;
}

export interface LiveRepository {
  owner: string;
  repo: string;
  /** The instance root and the API root. */
  url: string;
  apiUrl: string;
  /** The state right after seeding (equal to the seed under checkMutation). */
  before: RepoState;
  capture(): Promise<RepoState>;
  /** Deletes the repository (its name was made for this trial only). */
  delete(): Promise<void>;
}

/** A failed set-up step of live mode, with what to do about it. */
export class LiveForgeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LiveForgeError";
  }
}

interface GiteaRepo {
  default_branch?: string;
}
interface GiteaLabel {
  id: number;
  name: string;
}
interface GiteaNumbered {
  number: number;
}

function describe(error: unknown, tokenEnv: string): string {
  if (!(error instanceof ForgeApiError))
    return error instanceof Error ? error.message : String(error);
  const hint =
    error.status === 401
      ? `; check the token in ${tokenEnv}`
      : error.status === 403
        ? `; the token in ${tokenEnv} lacks the permission (sudo needs a site administrator's token)`
        : "";
  return `${error.method} ${error.path} answered ${error.status || "nothing"}: ${error.message}${hint}`;
}

/** The forge's identity check: the token must be `user`'s, so expected states name the right author. */
async function checkUser(api: ForgeApi, options: LiveForgeOptions): Promise<void> {
  const me = await api.get<{ login?: string }>("/user");
  const login = me.body?.login;
  if (login?.toLowerCase() !== options.user.toLowerCase())
    throw new LiveForgeError(
      `the token in ${options.tokenEnv} authenticates as ${login ?? "nobody"}, but forge.user is ${options.user}: expected states name the user the agent acts as, so set forge.user to ${login ?? "the token's login"}`,
    );
}

/** Creates `owner/name` (under the user or an organisation), seeds it and checks the result. */
export async function createLiveRepository(
  options: LiveForgeOptions,
  name: string,
  seed: RepoState,
): Promise<LiveRepository> {
  const apiUrl = `${options.url.replace(/\/+$/, "")}/api/v1`;
  const api = new ForgeApi({
    apiUrl,
    token: options.token,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const repo = repoPath(options.owner, name);
  let created = false;
  const remove = async () => {
    await api.request("DELETE", repo).catch((error: unknown) => {
      if (!(error instanceof ForgeApiError && error.status === 404)) throw error;
    });
  };
  try {
    await checkUser(api, options);
    const body = { name, private: true, auto_init: true, description: "harnesslab trial" };
    const info =
      options.owner.toLowerCase() === options.user.toLowerCase()
        ? await api.request<GiteaRepo>("POST", "/user/repos", body)
        : await api.request<GiteaRepo>(
            "POST",
            `/orgs/${encodeURIComponent(options.owner)}/repos`,
            body,
          );
    created = true;
    await seedLive(api, repo, info.body?.default_branch ?? "main", seed, options);
    const target = {
      owner: options.owner,
      repo: name,
      url: options.url,
      apiUrl,
      capture: () => capture(options, name),
      delete: remove,
    };
    const before = await target.capture();
    const check = checkMutation(seed, before);
    if (!check.pass)
      throw new LiveForgeError(
        `the live forge did not reproduce the seed (${check.differences
          .slice(0, 3)
          .map((d) => d.message)
          .join(
            "; ",
          )}${check.differences.length > 3 ? "; …" : ""}); a seed with several authors needs a site administrator's token (Sudo)`,
      );
    return { ...target, before };
  } catch (error) {
    if (created) await remove().catch(() => {});
    if (error instanceof LiveForgeError) throw error;
    throw new LiveForgeError(
      `cannot prepare ${options.owner}/${name} on ${options.url}: ${describe(error, options.tokenEnv)}`,
    );
  }
}

async function capture(options: LiveForgeOptions, name: string): Promise<RepoState> {
  const result = await captureRepoState({
    kind: "gitea",
    url: options.url,
    repo: `${options.owner}/${name}`,
    token: options.token,
    tokenEnv: options.tokenEnv,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (!result.ok)
    throw new LiveForgeError(`cannot capture ${options.owner}/${name}: ${result.error.message}`);
  return result.state;
}

/**
 * Fills the new repository: labels, then issues and pull requests in number order (a forge
 * numbers them as they come, issues and pull requests in one sequence), each with its labels,
 * assignees, comments and reviews, and finally its state.
 */
async function seedLive(
  api: ForgeApi,
  repo: string,
  base: string,
  seed: RepoState,
  options: LiveForgeOptions,
): Promise<void> {
  const as = (login: string): Record<string, string> =>
    login.toLowerCase() === options.user.toLowerCase() ? {} : { sudo: login };
  const poster = options.author ?? options.user;
  const labelIds = new Map<string, number>();
  for (const label of seed.labels ?? []) {
    const made = await api.request<GiteaLabel>("POST", `${repo}/labels`, {
      name: label.name,
      color: label.color.startsWith("#") ? label.color : `#${label.color}`,
      description: label.description ?? "",
    });
    labelIds.set(label.name, made.body.id);
  }
  const ids = (names: readonly string[] | undefined) =>
    (names ?? [])
      .map((label) => labelIds.get(label))
      .filter((id): id is number => id !== undefined);
  const entities: Array<{ entity: Issue | PullRequest; pull: boolean }> = [
    ...(seed.issues ?? []).map((entity) => ({ entity, pull: false })),
    ...(seed.pullRequests ?? []).map((entity) => ({ entity, pull: true })),
  ].sort((a, b) => a.entity.number - b.entity.number);
  for (const { entity, pull } of entities) {
    const fields = {
      title: entity.title,
      body: entity.body ?? "",
      ...(entity.assignees && entity.assignees.length > 0 ? { assignees: entity.assignees } : {}),
      ...(ids(entity.labels).length > 0 ? { labels: ids(entity.labels) } : {}),
    };
    let made: GiteaNumbered;
    if (pull) {
      const head = seededHeadBranch(entity.number);
      await api.request("POST", `${repo}/branches`, {
        new_branch_name: head,
        old_branch_name: base,
      });
      made = (
        await api.request<GiteaNumbered>(
          "POST",
          `${repo}/pulls`,
          { ...fields, head, base },
          as(poster),
        )
      ).body;
    } else
      made = (await api.request<GiteaNumbered>("POST", `${repo}/issues`, fields, as(poster))).body;
    if (made.number !== entity.number)
      throw new LiveForgeError(
        `the forge numbered the seed's #${entity.number} as #${made.number}; live mode needs an empty repository whose numbers start at 1`,
      );
    for (const comment of entity.comments ?? [])
      await api.request(
        "POST",
        `${repo}/issues/${entity.number}/comments`,
        { body: comment.body ?? "" },
        as(comment.author),
      );
    if (pull)
      for (const review of (entity as PullRequest).reviews ?? [])
        await api.request(
          "POST",
          `${repo}/pulls/${entity.number}/reviews`,
          {
            event: {
              approved: "APPROVED",
              "request-changes": "REQUEST_CHANGES",
              comment: "COMMENT",
            }[review.kind],
            body: review.body ?? "",
            comments: (review.comments ?? []).map((c) => ({
              path: "README.md",
              body: c.body ?? "",
              new_position: 1,
            })),
          },
          as(review.author),
        );
    if (entity.state === "merged")
      await api.request("POST", `${repo}/pulls/${entity.number}/merge`, { Do: "merge" });
    else if (entity.state === "closed")
      await api.request("PATCH", `${repo}/issues/${entity.number}`, { state: "closed" });
  }
}
