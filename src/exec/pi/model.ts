// Which model Pi talks to and with which credential: read only from the executor's
// environment source, set explicitly, never left for Pi to find in process.env. Pure.
import type { PiModel } from "./contract.js";

const PI_DEFAULT_MODEL = "claude-sonnet-4-5";
const ANTHROPIC_API_URL = "https://api.anthropic.com";

export type Credential = { kind: "api-key" | "bearer"; value: string; variable: string };

/** The run's single model: `claude-…` or `anthropic/claude-…`. */
export function parsePiModel(
  spec: string | undefined,
): { ok: true; provider: "anthropic"; id: string } | { ok: false; error: string } {
  const value = spec ?? PI_DEFAULT_MODEL;
  const slash = value.indexOf("/");
  const provider = slash === -1 ? "anthropic" : value.slice(0, slash);
  const id = slash === -1 ? value : value.slice(slash + 1);
  if (provider !== "anthropic" || id === "") {
    return {
      ok: false,
      error: `model ${JSON.stringify(value)}: the pi executor supports Anthropic models only (e.g. "claude-sonnet-4-5" or "anthropic/claude-sonnet-4-5")`,
    };
  }
  return { ok: true, provider: "anthropic", id };
}

export function resolveCredential(source: NodeJS.ProcessEnv): Credential | null {
  const apiKey = source.ANTHROPIC_API_KEY;
  if (apiKey) return { kind: "api-key", value: apiKey, variable: "ANTHROPIC_API_KEY" };
  const token = source.ANTHROPIC_AUTH_TOKEN;
  if (token) return { kind: "bearer", value: token, variable: "ANTHROPIC_AUTH_TOKEN" };
  return null;
}

/**
 * Pi's Anthropic client fills credentials it was not given from `process.env`
 * (`ANTHROPIC_AUTH_TOKEN` becomes a bearer header next to the key). Explicit headers win over
 * those defaults; null removes one.
 */
function credentialHeaders(credential: Credential): Record<string, string> {
  const headers: Record<string, string | null> =
    credential.kind === "api-key"
      ? { "x-api-key": credential.value, authorization: null }
      : { authorization: `Bearer ${credential.value}`, "x-api-key": null };
  return headers as Record<string, string>;
}

function isPiModel(value: unknown): value is PiModel {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as PiModel).id === "string" &&
    typeof (value as PiModel).api === "string"
  );
}

export function buildModel(
  registryModel: unknown,
  id: string,
  baseUrl: string | undefined,
  credential: Credential,
): { model: PiModel; priced: boolean } {
  const known = isPiModel(registryModel) ? registryModel : null;
  const base: PiModel = known ?? {
    id,
    name: id,
    api: "anthropic-messages",
    provider: "anthropic",
    baseUrl: ANTHROPIC_API_URL,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 200_000,
    maxTokens: 8192,
  };
  return {
    model: {
      ...base,
      baseUrl: baseUrl ?? base.baseUrl,
      headers: { ...base.headers, ...credentialHeaders(credential) },
    },
    priced: known !== null && Object.values(known.cost ?? {}).some((price) => price > 0),
  };
}
