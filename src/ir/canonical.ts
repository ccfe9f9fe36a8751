import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted recursively (UTF-16 code-unit order, as `Array.prototype.sort`)
 * and no whitespace. Properties whose value is `undefined` are dropped; inside arrays `undefined`
 * becomes `null`, as in `JSON.stringify`. Content hashes and revision ids are computed over this
 * text, so the same document always hashes the same on every machine.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join("");
}

function write(value: unknown, out: string[]): void {
  if (value === null) {
    out.push("null");
    return;
  }
  switch (typeof value) {
    case "string":
      out.push(JSON.stringify(value));
      return;
    case "number":
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: ${value} is not JSON`);
      out.push(JSON.stringify(value));
      return;
    case "boolean":
      out.push(value ? "true" : "false");
      return;
    case "object":
      break;
    default:
      throw new TypeError(`canonicalJson: a ${typeof value} is not JSON`);
  }
  if (Array.isArray(value)) {
    out.push("[");
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(",");
      const item: unknown = value[i];
      if (item === undefined) out.push("null");
      else write(item, out);
    }
    out.push("]");
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  out.push("{");
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    if (!first) out.push(",");
    first = false;
    out.push(JSON.stringify(key), ":");
    write(item, out);
  }
  out.push("}");
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** `sha256:<hex>` of the value's canonical JSON. */
export function contentHash(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}

/** `hr_` + the first 32 hex digits of the SHA-256 of the canonical revision body (without its id). */
export function revisionIdOf(body: Readonly<Record<string, unknown>>): string {
  const { revisionId: _ignored, ...rest } = body;
  return `hr_${sha256Hex(canonicalJson(rest)).slice(0, 32)}`;
}
