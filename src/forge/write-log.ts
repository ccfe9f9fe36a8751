// The forge's append-only record of writes (trial evidence): method, path, actor, status
// and a bounded summary of the body. It never holds a credential: no headers, no query
// string, and the token is blanked wherever a body repeats it.

const MAX_TEXT = 120;
const MAX_ITEMS = 20;
const MAX_KEYS = 30;

const REDACTED = "[REDACTED]";

function summarizeText(text: string, secret: string): string {
  const clean = secret === "" ? text : text.split(secret).join(REDACTED);
  return clean.length <= MAX_TEXT ? clean : `${clean.slice(0, MAX_TEXT)}… (${clean.length} chars)`;
}

function summarizeValue(value: unknown, secret: string, depth: number): unknown {
  if (typeof value === "string") return summarizeText(value, secret);
  if (value === null || typeof value === "number" || typeof value === "boolean") return value;
  if (Array.isArray(value)) {
    const shown = value.slice(0, MAX_ITEMS).map((item) => summarizeValue(item, secret, depth + 1));
    return value.length > MAX_ITEMS ? [...shown, `… ${value.length - MAX_ITEMS} more`] : shown;
  }
  if (typeof value === "object") {
    if (depth >= 2) return "{…}";
    return summarizeObject(value as Record<string, unknown>, secret, depth + 1);
  }
  return String(value);
}

function summarizeObject(
  object: Record<string, unknown>,
  secret: string,
  depth: number,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keys = Object.keys(object);
  // Defined, not assigned: a key "__proto__" is kept as a field, as it was sent.
  for (const key of keys.slice(0, MAX_KEYS))
    Object.defineProperty(out, summarizeText(key, secret), {
      value: summarizeValue(object[key], secret, depth),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  if (keys.length > MAX_KEYS) out["…"] = `${keys.length - MAX_KEYS} more fields`;
  return out;
}

/** A bounded, credential-free summary of a request body for the write log. */
export function summarizeBody(body: unknown, secret: string): Record<string, unknown> {
  if (body === undefined) return {};
  if (body !== null && typeof body === "object" && !Array.isArray(body))
    return summarizeObject(body as Record<string, unknown>, secret, 0);
  return { body: summarizeValue(body, secret, 0) };
}
