// captureRepoState: one entry for both forges. Expected failures (auth, missing repository,
// rate limit past the bound, network, a response of the wrong shape) come back as values.
import type { RepoState } from "../scoring/index.js";
import { captureGitea, giteaApiUrl } from "./capture-gitea.js";
import { captureGitHub, GITHUB_API_URL } from "./capture-github.js";
import {
  CaptureError,
  type CaptureErrorCode,
  createCaptureFetch,
  DEFAULT_MAX_RATE_LIMIT_WAIT_MS,
} from "./capture-http.js";

export type ForgeKind = "gitea" | "github";

export const DEFAULT_TOKEN_ENV: Record<ForgeKind, string> = {
  gitea: "GITEA_TOKEN",
  github: "GITHUB_TOKEN",
};

/** Items asked for per page: Gitea serves at most 50 by default, GitHub at most 100. */
const DEFAULT_PAGE_SIZE: Record<ForgeKind, number> = { gitea: 50, github: 100 };

export interface CaptureOptions {
  kind: ForgeKind;
  /** Gitea: the instance root (`/api/v1` is added). GitHub: the REST API root. */
  url?: string;
  /** `owner/name`. */
  repo: string;
  /** The token, sent as `Authorization: token …`; never written anywhere. */
  token?: string;
  /** Only for messages: the variable the token came from. */
  tokenEnv?: string;
  pageSize?: number;
  fetch?: typeof fetch;
  /** Waits between rate-limited attempts (default: a real timer). */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** The most the whole capture waits for rate limits (default 120 s). */
  maxRateLimitWaitMs?: number;
  maxRetries?: number;
}

export type CaptureResult =
  | { ok: true; state: RepoState; requests: number }
  | { ok: false; error: { code: CaptureErrorCode; message: string } };

export async function captureRepoState(options: CaptureOptions): Promise<CaptureResult> {
  const [owner, repo, ...rest] = options.repo.split("/");
  if (!owner || !repo || rest.length > 0)
    throw new TypeError(
      `captureRepoState: repo must be owner/name, not ${JSON.stringify(options.repo)}`,
    );
  const forgeName = options.kind === "gitea" ? "Gitea" : "GitHub";
  const fetch = createCaptureFetch(
    options.fetch ?? globalThis.fetch,
    {
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      now: options.now ?? Date.now,
      maxWaitMs: options.maxRateLimitWaitMs ?? DEFAULT_MAX_RATE_LIMIT_WAIT_MS,
      maxRetries: options.maxRetries ?? 3,
    },
    forgeName,
  );
  const input = {
    owner,
    repo,
    token: options.token,
    tokenEnv: options.tokenEnv ?? DEFAULT_TOKEN_ENV[options.kind],
    pageSize: options.pageSize ?? DEFAULT_PAGE_SIZE[options.kind],
    fetch,
  };
  try {
    const result =
      options.kind === "gitea"
        ? await captureGitea({ ...input, apiUrl: giteaApiUrl(requireUrl(options.url)) })
        : await captureGitHub({
            ...input,
            apiUrl: (options.url ?? GITHUB_API_URL).replace(/\/+$/, ""),
          });
    return { ok: true, ...result };
  } catch (error) {
    if (error instanceof CaptureError)
      return { ok: false, error: { code: error.code, message: error.message } };
    throw error;
  }
}

function requireUrl(url: string | undefined): string {
  if (!url) throw new TypeError("captureRepoState: a Gitea capture needs the instance url");
  return url;
}
