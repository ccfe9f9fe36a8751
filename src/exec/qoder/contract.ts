// The shapes of the qoder executor: its SDK seam, how it authenticates, its runtime profiles.
// Nothing here names a type from @qoder-ai/qoder-agent-sdk, so harnesslab's own declarations
// do not require the optional SDK to be installed.

export const QODER_SDK_PACKAGE = "@qoder-ai/qoder-agent-sdk";
export const QODER_CLI_PACKAGE = "@qoder-ai/qodercli";
/** The JavaScript entry of the Qoder CLI inside its package, run by the SDK's process transport. */
export const QODER_CLI_ENTRY = "@qoder-ai/qodercli/bundle/qodercli.js";

/** Runtime profiles (a variant's `runtimeProfile`); absent means `qoder-default-v1`. */
export const QODER_PROFILES = ["qoder-default-v1", "qoder-minimal-v1"] as const;
export type QoderProfile = (typeof QODER_PROFILES)[number];

/** The SDK's own default variable names (`accessTokenFromEnv()`, `serviceAccountFromEnv()`). */
export const DEFAULT_PERSONAL_ACCESS_TOKEN_ENV = "QODER_PERSONAL_ACCESS_TOKEN";
export const DEFAULT_SERVICE_ACCOUNT_ENV = "QODER_SERVICE_ACCOUNT_KEY";

/**
 * An auth object as the SDK's helpers build it (`accessToken(…)`, `qodercliAuth()`,
 * `serviceAccount(…)`, `serviceAccountFromEnv(…)`). An `{ envVar }` inside it is read from the
 * executor's `env`, never from the harness's whole environment.
 */
export interface QoderSdkAuthObject {
  readonly type: string;
  readonly [field: string]: unknown;
}

/**
 * How a run authenticates. Qoder has no anonymous mode and no local model endpoint, so a run
 * without a usable credential ends at once as `infra_error`/`auth_missing`.
 * - `"qodercli-login"`: reuse a `qodercli login` (read-only). The login lives in the CLI's config
 *   directory, which is isolated per run unless `qodercliConfigDir` names the real one.
 * - `"personal-access-token"` / `{ personalAccessTokenEnv }`: a personal access token from that
 *   variable (default `QODER_PERSONAL_ACCESS_TOKEN`).
 * - `"service-account"` / `{ serviceAccountEnv }`: a service account key from that variable
 *   (default `QODER_SERVICE_ACCOUNT_KEY`).
 * - an SDK auth object.
 */
export type QoderAuth =
  | "qodercli-login"
  | "personal-access-token"
  | "service-account"
  | { readonly personalAccessTokenEnv: string }
  | { readonly serviceAccountEnv: string }
  | QoderSdkAuthObject;

/**
 * The part of `@qoder-ai/qoder-agent-sdk` the executor uses. The real module fits it; tests pass
 * a fake that yields messages of the SDK's own types.
 */
export interface QoderSdk {
  query(params: { prompt: string; options?: Record<string, unknown> }): AsyncIterable<unknown>;
  /** The process transport (`ProcessTransport.default`): qodercli runs as a child process. */
  readonly ProcessTransport: { readonly default: unknown };
}

export interface QoderExecutorOptions {
  /**
   * How to authenticate. Absent: a personal access token from `QODER_PERSONAL_ACCESS_TOKEN` when
   * that variable is set in `env`, else a service account key from `QODER_SERVICE_ACCOUNT_KEY`,
   * else nothing (every run is `auth_missing`).
   */
  auth?: QoderAuth;
  /** The SDK module; loaded lazily from the optional peer dependency when absent. */
  sdk?: QoderSdk;
  /** How the SDK is loaded when `sdk` is absent (default: import the optional peer dependency). */
  loadSdk?: () => Promise<QoderSdk>;
  /** The Qoder CLI entry to run; default `@qoder-ai/qodercli/bundle/qodercli.js`, resolved from this package. */
  pathToQoderCLIExecutable?: string;
  /** Where credential variables are read from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /**
   * For `qodercli-login` only: the qodercli config directory whose login is reused (e.g.
   * `~/.qoder`). Default: the run's isolated config directory, which holds no login. Pointing it
   * at a real directory also lets the CLI see that directory's other state (its settings files
   * are still ignored: the run passes no setting sources).
   */
  qodercliConfigDir?: string;
  /** A proxy for the CLI's own traffic (`http://`, `https://`, `socks5://`); the SDK ignores proxy variables. */
  proxy?: string;
  /**
   * Extra variables for the CLI, set after the executor's own (e.g. `{ QODER_HTTPDNS: "0" }`,
   * which makes qodercli resolve names through the system resolver instead of Alibaba's HTTPDNS
   * service; the offline tests use it so that nothing but loopback and DNS is attempted).
   */
  extraEnv?: Readonly<Record<string, string>>;
  /** How long to wait for the SDK to wind down after an abort before giving up on it (default 10 s). */
  abortGraceMs?: number;
  /** Extra strings to mask in the receipt (credential values are always masked). */
  secretValues?: readonly string[];
}
