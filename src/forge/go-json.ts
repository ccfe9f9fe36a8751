// How Gitea reads a JSON body, which is how Go's encoding/json decodes into its option structs:
// a key matches a field by its exact name or, failing that, case-insensitively (so `do` and `Do`
// are the same field), and `null` sets nothing (a nil pointer or slice: "not set"). Clients built
// on Gitea's Go SDK rely on both: they send every field of a struct, `null` for the ones the
// caller left unset. Applied before a body's schema, guided by the schema's own field names.
import { z } from "zod";

/** The object schema inside optional/nullable/default wrappers, or undefined. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  let current: z.ZodType = schema;
  for (let depth = 0; depth < 8; depth += 1) {
    if (current instanceof z.ZodObject) return current.shape as Record<string, z.ZodType>;
    if (
      current instanceof z.ZodOptional ||
      current instanceof z.ZodNullable ||
      current instanceof z.ZodDefault
    )
      current = current.unwrap() as z.ZodType;
    else return undefined;
  }
  return undefined;
}

/** The element schema of an array schema inside wrappers, or undefined. */
function arrayElement(schema: z.ZodType): z.ZodType | undefined {
  let current: z.ZodType = schema;
  for (let depth = 0; depth < 8; depth += 1) {
    if (current instanceof z.ZodArray) return current.element as z.ZodType;
    if (current instanceof z.ZodOptional || current instanceof z.ZodNullable)
      current = current.unwrap() as z.ZodType;
    else return undefined;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * The body as Go would have decoded it into the struct `schema` describes: object keys renamed
 * to the field they match (exact first, then case-insensitive; a key matching no field is
 * dropped; of two keys for one field the later wins), `null` members removed, nested objects and
 * lists of objects likewise.
 */
export function asGoDecodes(value: unknown, schema: z.ZodType): unknown {
  const shape = objectShape(schema);
  if (shape !== undefined && isRecord(value)) {
    const fields = Object.keys(shape);
    // A key that matches no field is dropped, as Go drops it (and as zod would): never copied,
    // so "__proto__" cannot become the object's prototype and smuggle fields past the log.
    const out: Record<string, unknown> = {};
    // In the body's order: a later key for the same field wins, as in Go.
    for (const [key, member] of Object.entries(value)) {
      const field = fields.includes(key)
        ? key
        : fields.find((name) => name.toLowerCase() === key.toLowerCase());
      if (field === undefined || member === null) continue;
      const fieldSchema = shape[field];
      out[field] = fieldSchema === undefined ? member : asGoDecodes(member, fieldSchema);
    }
    return out;
  }
  const element = arrayElement(schema);
  if (element !== undefined && Array.isArray(value))
    return value.map((item) => asGoDecodes(item, element));
  return value;
}
