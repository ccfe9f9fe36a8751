// The environment of a Claude Code run: which of the harness's variables pass, and the fixed
// values that isolate it. No SDK types here, so the public surface never needs the SDK's.
import { join } from "node:path";
import { QUIET_NPM_ENV } from "../sdk/common.js";

export const CLAUDE_AGENT_SDK_PACKAGE = "@anthropic-ai/claude-agent-sdk";

/**
 * Credential, endpoint and provider variables passed through when set in the executor's
 * environment source. Everything else of the harness's environment stays out.
 */
export const CLAUDE_HOST_VARIABLES = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_VERTEX",
  "ANTHROPIC_BEDROCK_BASE_URL",
  "ANTHROPIC_VERTEX_BASE_URL",
  "ANTHROPIC_VERTEX_PROJECT_ID",
  "CLOUD_ML_REGION",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "AWS_REGION",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_BEARER_TOKEN_BEDROCK",
  "HTTPS_PROXY",
  "HTTP_PROXY",
  "NO_PROXY",
  "NODE_EXTRA_CA_CERTS",
] as const;

/** Fixed variables: isolated home and config, and no traffic but the model API. */
export function claudeEnvOverrides(
  home: string,
  tmpDir: string,
  maxRetries: number,
): Record<string, string> {
  return {
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    TMPDIR: tmpDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_TELEMETRY: "1",
    // Claude Code retries a dead endpoint ten times with growing delays by default (minutes).
    CLAUDE_CODE_MAX_RETRIES: String(maxRetries),
    ...QUIET_NPM_ENV,
  };
}

/** The credential variables whose value the endpoint proxy adds as a header, and how. */
const CREDENTIAL_HEADERS: ReadonlyArray<
  [variable: string, header: (value: string) => [string, string]]
> = [
  ["ANTHROPIC_API_KEY", (value) => ["x-api-key", value]],
  ["ANTHROPIC_AUTH_TOKEN", (value) => ["authorization", `Bearer ${value}`]],
  ["CLAUDE_CODE_OAUTH_TOKEN", (value) => ["authorization", `Bearer ${value}`]],
];

/** Providers whose requests are signed with cloud credentials, which a proxy cannot re-sign. */
const CLOUD_PROVIDERS = ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"] as const;

export type ClaudeEndpointPlan =
  | {
      ok: true;
      upstream: string;
      credentialHeaders: Record<string, string>;
      /** The run's variables with the credentials replaced by `placeholder` and the base URL by `baseUrl`. */
      containedEnv(baseUrl: string, placeholder: string): Record<string, string>;
    }
  | { ok: false; error: string };

/** How a contained Claude Code reaches its model API: which endpoint, with which credential. */
export function claudeEndpoint(env: Readonly<Record<string, string>>): ClaudeEndpointPlan {
  const cloud = CLOUD_PROVIDERS.find((name) => env[name] !== undefined && env[name] !== "0");
  if (cloud !== undefined)
    return {
      ok: false,
      error: `${cloud} is set: Bedrock and Vertex requests are signed with cloud credentials, which cannot be kept outside the sandbox; use ANTHROPIC_API_KEY (with ANTHROPIC_BASE_URL for a gateway), or run with --unsafe-no-sandbox`,
    };
  const credentialHeaders: Record<string, string> = {};
  for (const [variable, header] of CREDENTIAL_HEADERS) {
    const value = env[variable];
    if (value === undefined) continue;
    const [name, headerValue] = header(value);
    credentialHeaders[name] ??= headerValue;
  }
  return {
    ok: true,
    upstream: env.ANTHROPIC_BASE_URL ?? "https://api.anthropic.com",
    credentialHeaders,
    containedEnv: (baseUrl, placeholder) => {
      const contained: Record<string, string> = { ...env, ANTHROPIC_BASE_URL: baseUrl };
      for (const [variable] of CREDENTIAL_HEADERS)
        if (contained[variable] !== undefined) contained[variable] = placeholder;
      // The process cannot reach a proxy of the user's: the endpoint proxy is its only way out.
      for (const name of ["HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "NODE_EXTRA_CA_CERTS"])
        delete contained[name];
      return contained;
    },
  };
}
