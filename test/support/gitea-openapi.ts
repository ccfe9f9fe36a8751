// Gitea's own contract as a test oracle: every JSON response a forge test sees is checked against
// the schema Gitea 1.27.1's OpenAPI document gives for its path, method and status. Go writes a
// nil pointer, slice or map as null, so null is accepted wherever the document names a type.
import { readFileSync } from "node:fs";
import { Ajv, type ValidateFunction } from "ajv";

const DOCUMENT = new URL("../fixtures/gitea-openapi/swagger.v1-1.27.1.json", import.meta.url);
const BASE = "gitea.json";

interface Operation {
  responses: Record<string, { $ref?: string; schema?: unknown }>;
}
interface SwaggerDocument {
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  responses: Record<string, { schema?: unknown }>;
  definitions: Record<string, unknown>;
}

/** Every typed schema also accepts null, as Go's encoder writes nil values. */
function nullable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullable);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema))
    out[key] =
      key === "properties" || key === "definitions"
        ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, nullable(v)]))
        : nullable(value);
  if (typeof out.$ref === "string") {
    const ref = (out.$ref as string).replace(/^#\//, `${BASE}#/`);
    return { anyOf: [{ $ref: ref }, { type: "null" }] };
  }
  if (typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}

const document = JSON.parse(readFileSync(DOCUMENT, "utf8")) as SwaggerDocument;
export const GITEA_OPENAPI_VERSION = document.info.version;

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: BASE, definitions: nullable(document.definitions) });

/** Path templates, the most literal first, each with the pattern its paths match. */
const templates = Object.keys(document.paths)
  .map((template) => ({
    template,
    pattern: new RegExp(
      `^${template
        .split(/(\{[^}]+\})/)
        .map((part) =>
          /^\{.+\}$/.test(part) ? "[^/]+?" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
        )
        .join("")}$`,
    ),
    literal: template.replace(/\{[^}]+\}/g, "").length,
  }))
  .sort((a, b) => b.literal - a.literal);

const compiled = new Map<string, ValidateFunction | null>();

/** The validator of one documented response, or null when the document gives no body schema. */
function validatorFor(template: string, method: string, status: number): ValidateFunction | null {
  const key = `${method} ${template} ${status}`;
  if (compiled.has(key)) return compiled.get(key)!;
  const operation = document.paths[template]?.[method];
  let response = operation?.responses[String(status)] ?? operation?.responses.default;
  if (response?.$ref !== undefined)
    response = document.responses[response.$ref.replace("#/responses/", "")];
  const schema = response?.schema;
  const validate = schema === undefined ? null : ajv.compile(nullable(schema) as object);
  compiled.set(key, validate);
  return validate;
}

/** What the document says of one response: problems found, or why it could not be checked. */
export function checkResponse(
  method: string,
  url: string,
  status: number,
  body: unknown,
): { checked: boolean; problems: string[] } {
  const path = new URL(url).pathname.replace(/^\/api\/v1/, "");
  const found = templates.find((t) => t.pattern.test(path));
  // An error answer to a request Gitea's API does not have (404, 405) has nothing to check.
  if (found === undefined)
    return { checked: false, problems: status >= 400 ? [] : [`${path} is not in Gitea's API`] };
  const operation = document.paths[found.template]?.[method.toLowerCase()];
  if (operation === undefined)
    return {
      checked: false,
      problems: status >= 400 ? [] : [`${method} ${found.template} is not in Gitea's API`],
    };
  const documented = operation.responses[String(status)] ?? operation.responses.default;
  // Gitea documents its error answers only in part; a successful one must be documented.
  if (documented === undefined && status >= 400) return { checked: false, problems: [] };
  if (documented === undefined)
    return {
      checked: false,
      problems: [`${method} ${found.template} has no documented ${status} response`],
    };
  const validate = validatorFor(found.template, method.toLowerCase(), status);
  if (validate === null) return { checked: true, problems: [] };
  if (validate(body)) return { checked: true, problems: [] };
  return {
    checked: true,
    problems: (validate.errors ?? []).map(
      (e) => `${method} ${found.template} ${status}: ${e.instancePath || "(body)"} ${e.message}`,
    ),
  };
}

/**
 * A fetch for a client under test that checks every JSON answer against the document; the
 * problems gather in `problems` (a test asserts it empty) and `checked` counts the answers.
 */
export function conformingFetch(): {
  fetch: typeof fetch;
  problems: string[];
  checked: () => number;
} {
  const problems: string[] = [];
  let checked = 0;
  const wrapped: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const response = await fetch(request);
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("application/json") && response.status !== 204) {
      const body = (await response.clone().json()) as unknown;
      const result = checkResponse(request.method, request.url, response.status, body);
      if (result.checked) checked += 1;
      problems.push(...result.problems);
    }
    return response;
  };
  return { fetch: wrapped, problems, checked: () => checked };
}

/**
 * The method and URL of an operation the document names by id, its path parameters filled in
 * from `params` and the rest of `params` sent as the query: a client made from the document
 * itself, independent of how the forge spells its routes.
 */
export function operationRequest(
  apiUrl: string,
  operationId: string,
  params: Record<string, string | number>,
  _body?: unknown,
): { method: string; url: string } {
  for (const [template, operations] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(operations)) {
      if ((operation as { operationId?: string }).operationId !== operationId) continue;
      const rest = { ...params };
      const path = template.replace(/\{([^}]+)\}/g, (_, name: string) => {
        const value = rest[name];
        if (value === undefined) throw new Error(`${operationId} needs ${name}`);
        delete rest[name];
        return encodeURIComponent(String(value));
      });
      const query = new URLSearchParams(
        Object.entries(rest).map(([key, value]): [string, string] => [key, String(value)]),
      ).toString();
      return { method: method.toUpperCase(), url: `${apiUrl}${path}${query ? `?${query}` : ""}` };
    }
  throw new Error(`Gitea's API has no operation ${operationId}`);
}
