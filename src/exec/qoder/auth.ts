// Turns the executor's `auth` option into the SDK's auth object. Pure: the credential source is
// passed in. Variables are resolved here, from the executor's own `env`, because the SDK falls
// back to the harness's whole `process.env` for a variable its options do not carry, and because
// a token in the CLI's environment would be visible to every command the agent runs.
import {
  DEFAULT_PERSONAL_ACCESS_TOKEN_ENV,
  DEFAULT_SERVICE_ACCOUNT_ENV,
  type QoderAuth,
  type QoderSdkAuthObject,
} from "./contract.js";

/** How the run authenticated, for the receipt's trace (never the credential). */
type QoderAuthKind = "qodercli-login" | "personal-access-token" | "service-account" | "sdk-auth";

export type ResolvedQoderAuth =
  | {
      ok: true;
      kind: QoderAuthKind;
      /** The SDK's `options.auth`. */
      sdkAuth: QoderSdkAuthObject;
      /** The variable the credential came from, when it came from one. */
      envVar: string | null;
      /** Credential values to mask wherever they might appear. */
      secrets: string[];
    }
  | { ok: false; reason: "auth_missing" | "config_invalid"; error: string };

const LOGIN_HINT = "set QODER_PERSONAL_ACCESS_TOKEN (or QODER_SERVICE_ACCOUNT_KEY)";

function fromVariable(
  env: NodeJS.ProcessEnv,
  name: string,
  kind: "personal-access-token" | "service-account",
): ResolvedQoderAuth {
  const value = env[name];
  if (value === undefined || value.trim() === "") {
    const what = kind === "personal-access-token" ? "personal access token" : "service account key";
    return {
      ok: false,
      reason: "auth_missing",
      error: `Qoder authentication is not configured: the ${what} variable ${name} is not set`,
    };
  }
  const sdkAuth: QoderSdkAuthObject =
    kind === "personal-access-token"
      ? { type: "accessToken", accessToken: value }
      : { type: "serviceAccount", serviceAccountKey: value };
  return { ok: true, kind, sdkAuth, envVar: name, secrets: [value] };
}

function isEnvReference(value: unknown): value is { envVar: string } {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { envVar?: unknown }).envVar === "string"
  );
}

/** An SDK auth object whose `{ envVar }` references are replaced by the values from `env`. */
function fromSdkObject(auth: QoderSdkAuthObject, env: NodeJS.ProcessEnv): ResolvedQoderAuth {
  const field =
    auth.type === "accessToken"
      ? "accessToken"
      : auth.type === "serviceAccount"
        ? "serviceAccountKey"
        : null;
  const credential = field === null ? undefined : auth[field];
  if (field !== null && isEnvReference(credential)) {
    const resolved = fromVariable(
      env,
      credential.envVar,
      field === "accessToken" ? "personal-access-token" : "service-account",
    );
    if (!resolved.ok) return resolved;
    return { ...resolved, kind: "sdk-auth", sdkAuth: { ...auth, [field]: resolved.secrets[0] } };
  }
  const secrets = typeof credential === "string" && credential !== "" ? [credential] : [];
  if (field !== null && typeof credential === "string" && credential.trim() === "") {
    return {
      ok: false,
      reason: "auth_missing",
      error: `Qoder authentication is not configured: the SDK auth object's ${field} is empty`,
    };
  }
  return {
    ok: true,
    kind: auth.type === "qodercli" ? "qodercli-login" : "sdk-auth",
    sdkAuth: auth,
    envVar: null,
    secrets,
  };
}

/**
 * Resolves the configured authentication against the credential source. Without a configured
 * auth, a personal access token variable wins over a service account variable; with neither, the
 * run cannot authenticate.
 */
export function resolveQoderAuth(
  auth: QoderAuth | undefined,
  env: NodeJS.ProcessEnv,
): ResolvedQoderAuth {
  if (auth === undefined) {
    if (env[DEFAULT_PERSONAL_ACCESS_TOKEN_ENV]?.trim()) {
      return fromVariable(env, DEFAULT_PERSONAL_ACCESS_TOKEN_ENV, "personal-access-token");
    }
    if (env[DEFAULT_SERVICE_ACCOUNT_ENV]?.trim()) {
      return fromVariable(env, DEFAULT_SERVICE_ACCOUNT_ENV, "service-account");
    }
    return {
      ok: false,
      reason: "auth_missing",
      error: `Qoder authentication is not configured: ${LOGIN_HINT} (a \`qodercli login\` is not visible inside the run's isolated home; from the library, \`new QoderExecutor({ auth: "qodercli-login", qodercliConfigDir })\` uses one)`,
    };
  }
  switch (auth) {
    case "qodercli-login":
      return {
        ok: true,
        kind: "qodercli-login",
        sdkAuth: { type: "qodercli" },
        envVar: null,
        secrets: [],
      };
    case "personal-access-token":
      return fromVariable(env, DEFAULT_PERSONAL_ACCESS_TOKEN_ENV, "personal-access-token");
    case "service-account":
      return fromVariable(env, DEFAULT_SERVICE_ACCOUNT_ENV, "service-account");
  }
  if ("personalAccessTokenEnv" in auth && typeof auth.personalAccessTokenEnv === "string") {
    return fromVariable(env, auth.personalAccessTokenEnv, "personal-access-token");
  }
  if ("serviceAccountEnv" in auth && typeof auth.serviceAccountEnv === "string") {
    return fromVariable(env, auth.serviceAccountEnv, "service-account");
  }
  if ("type" in auth && typeof auth.type === "string") return fromSdkObject(auth, env);
  return {
    ok: false,
    reason: "config_invalid",
    error:
      'the qoder executor\'s auth option is not one of "qodercli-login", "personal-access-token", "service-account", { personalAccessTokenEnv }, { serviceAccountEnv } or an SDK auth object',
  };
}
