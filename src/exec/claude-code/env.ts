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
