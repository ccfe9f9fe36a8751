import { maskCredentials } from "../policy/index.js";

export const REDACTED = "[REDACTED]";
const CIRCULAR = "[Circular]";

/**
 * Key words that name a credential whatever the value. `auth` alone counts (`auth: {…}` blocks
 * carry tokens); `author` does not, because keys are compared word by word.
 */
const CREDENTIAL_WORDS = new Set([
  "password",
  "passwd",
  "passphrase",
  "secret",
  "secrets",
  "authorization",
  "auth",
  "credential",
  "credentials",
  "cookie",
  "cookies",
  "bearer",
  "apikey",
  "privatekey",
  "secretkey",
  "accesskey",
  "clientsecret",
  "authtoken",
  "accesstoken",
  "refreshtoken",
  "idtoken",
  "sessiontoken",
]);

/** Words that make a following `key` a credential (`api_key`, `privateKey`); `key` alone is not. */
const KEY_QUALIFIERS = new Set([
  "api",
  "access",
  "private",
  "secret",
  "signing",
  "encryption",
  "client",
  "session",
  "master",
  "auth",
]);

/** Words that make a `token` key a usage counter or a limit (`input_tokens`, `max_tokens`). */
const COUNTER_WORDS = new Set([
  "count",
  "counts",
  "usage",
  "input",
  "output",
  "max",
  "min",
  "total",
  "cache",
  "cached",
  "creation",
  "read",
  "write",
  "reasoning",
  "prompt",
  "completion",
  "limit",
  "limits",
  "budget",
  "remaining",
  "used",
  "per",
  "estimate",
  "estimated",
  "num",
  "number",
]);

/**
 * Last words that make a key describe a credential rather than hold it: `apiKeySource: "env"`,
 * `auth_method`, `token_type`, `password_required`. Their values are useful evidence.
 */
const DESCRIPTOR_WORDS = new Set([
  "source",
  "type",
  "kind",
  "method",
  "mode",
  "status",
  "name",
  "names",
  "required",
  "present",
  "configured",
  "env",
  "var",
  "length",
  "count",
  "helper",
  "id",
]);

/** `ANTHROPIC_API_KEY` → anthropic api key; `cacheReadInputTokens` → cache read input tokens. */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
}

/**
 * Whether a property holds a secret. Token counters survive: a `token` key is secret only when
 * it has no counting word and its value is a string (numbers and usage objects are not secrets).
 */
export function isSecretKey(key: string, value: unknown): boolean {
  const words = keyWords(key);
  if (words.length === 0) return false;
  if (words.length > 1 && DESCRIPTOR_WORDS.has(words[words.length - 1]!)) return false;
  if (words.some((w) => CREDENTIAL_WORDS.has(w))) return true;
  for (let i = 1; i < words.length; i++) {
    if ((words[i] === "key" || words[i] === "keys") && KEY_QUALIFIERS.has(words[i - 1]!))
      return true;
  }
  if (words.some((w) => w === "token" || w === "tokens")) {
    if (words.some((w) => COUNTER_WORDS.has(w))) return false;
    return typeof value === "string";
  }
  return false;
}

/** Variables whose value is a credential even though the name does not say so by our rules. */
const KNOWN_SECRET_ENV = new Set([
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "OPENAI_API_KEY",
  "CODEX_API_KEY",
  "QODER_PERSONAL_ACCESS_TOKEN",
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "NPM_TOKEN",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "GOOGLE_API_KEY",
  "GEMINI_API_KEY",
]);

/** Shorter values are not replaced: masking "1" or "true" everywhere would destroy the trace. */
const MIN_SECRET_VALUE_LENGTH = 8;

/** Values of the environment's credential variables, to be masked wherever they appear. */
export function secretValuesFromEnv(env: Readonly<Record<string, string | undefined>>): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.length < MIN_SECRET_VALUE_LENGTH) continue;
    if (KNOWN_SECRET_ENV.has(name) || isSecretKey(name, value)) values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

export interface RedactOptions {
  /** Exact strings to mask wherever they occur (e.g. `secretValuesFromEnv(process.env)`). */
  secretValues?: readonly string[];
  /** Deeper values become "[MaxDepth]". Default 64. */
  maxDepth?: number;
}

/** Masks exact occurrences of known secret values (those long enough to be meaningful). */
export function maskSecretValues(text: string, secretValues: readonly string[]): string {
  let out = text;
  for (const secret of secretValues) {
    if (secret.length >= MIN_SECRET_VALUE_LENGTH) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Masks known secret values and credential-shaped substrings (bearer headers, API key formats). */
export function redactText(text: string, secretValues: readonly string[] = []): string {
  return maskCredentials(maskSecretValues(text, secretValues));
}

/**
 * A JSON-safe copy of `value` with credentials removed: properties whose key names a secret are
 * replaced by "[REDACTED]", strings are masked with `redactText`, errors keep name and message
 * (not the stack, which names local paths), binary data becomes its length. Only the chain of
 * ancestors is tracked, so an object reached twice by different paths is copied twice, and only
 * a true cycle becomes "[Circular]". Pure: same input, same output.
 */
export function redact(value: unknown, options: RedactOptions = {}): unknown {
  const secrets = [...(options.secretValues ?? [])]
    .filter((s) => s.length >= MIN_SECRET_VALUE_LENGTH)
    .sort((a, b) => b.length - a.length);
  const maxDepth = options.maxDepth ?? 64;
  const ancestors = new Set<object>();

  const visit = (input: unknown, depth: number): unknown => {
    switch (typeof input) {
      case "string":
        return redactText(input, secrets);
      case "number":
        return Number.isFinite(input) ? input : String(input);
      case "boolean":
        return input;
      case "bigint":
        return input.toString();
      case "undefined":
      case "function":
      case "symbol":
        return undefined;
    }
    if (input === null) return null;
    const object = input as object;
    if (ancestors.has(object)) return CIRCULAR;
    if (depth >= maxDepth) return "[MaxDepth]";
    if (object instanceof Date) return Number.isNaN(object.getTime()) ? null : object.toISOString();
    if (ArrayBuffer.isView(object) || object instanceof ArrayBuffer) {
      return `[binary ${object.byteLength} bytes]`;
    }
    ancestors.add(object);
    try {
      if (Array.isArray(object)) return object.map((item) => visit(item, depth + 1) ?? null);
      if (object instanceof Set) return [...object].map((item) => visit(item, depth + 1) ?? null);
      if (object instanceof Map) {
        return visitEntries(
          [...object.entries()].map(([k, v]) => [String(k), v] as const),
          depth,
        );
      }
      if (object instanceof Error) {
        const entries: (readonly [string, unknown])[] = [
          ["name", object.name],
          ["message", object.message],
        ];
        for (const key of Object.keys(object)) {
          if (key !== "stack") entries.push([key, readProperty(object, key)]);
        }
        return visitEntries(entries, depth);
      }
      const toJSON = readProperty(object, "toJSON");
      if (typeof toJSON === "function") {
        let converted: unknown;
        try {
          converted = toJSON.call(object);
        } catch {
          return "[Unserializable]";
        }
        if (converted !== object) return visit(converted, depth + 1);
      }
      return visitEntries(
        Object.keys(object).map((key) => [key, readProperty(object, key)] as const),
        depth,
      );
    } finally {
      ancestors.delete(object);
    }
  };

  const visitEntries = (entries: readonly (readonly [string, unknown])[], depth: number) => {
    const out: Record<string, unknown> = {};
    for (const [key, child] of entries) {
      if (isSecretKey(key, child)) {
        out[key] = REDACTED;
        continue;
      }
      const copied = visit(child, depth + 1);
      if (copied !== undefined) out[key] = copied;
    }
    return out;
  };

  return visit(value, 0);
}

function readProperty(object: object, key: string): unknown {
  try {
    return (object as Record<string, unknown>)[key];
  } catch {
    return "[Unreadable]";
  }
}
