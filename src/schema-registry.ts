import { z } from "zod";
import { jsonSchemas as artifactSchemas } from "./artifacts/schemas.js";
import { jsonSchemas as compareSchemas } from "./compare/schemas.js";
import { jsonSchemas as execSchemas } from "./exec/schemas.js";
import { jsonSchemas as forgeSchemas } from "./forge/schemas.js";
import { jsonSchemas as graderSchemas } from "./graders/schemas.js";
import { jsonSchemas as irSchemas } from "./ir/schemas.js";
import { jsonSchemas as scoringSchemas } from "./scoring/schemas.js";
import { jsonSchemas as statsSchemas } from "./stats/schemas.js";

/** Every external format's schema, by the file stem it is published under in `schemas/`. */
export function allJsonSchemas(): Map<string, z.ZodType> {
  const all = new Map<string, z.ZodType>();
  for (const group of [
    scoringSchemas,
    irSchemas,
    compareSchemas,
    artifactSchemas,
    execSchemas,
    graderSchemas,
    statsSchemas,
    forgeSchemas,
  ]) {
    for (const [name, schema] of Object.entries(group)) {
      if (all.has(name)) throw new Error(`schema name ${name} is published twice`);
      all.set(name, schema);
    }
  }
  return all;
}

/** The JSON Schema document for one published schema, as written to `schemas/<name>.schema.json`. */
export function renderJsonSchema(name: string, schema: z.ZodType): string {
  const document = z.toJSONSchema(schema, { target: "draft-2020-12", unrepresentable: "any" });
  const withId = {
    $id: `https://harnesslab.dev/schemas/${name}.schema.json`,
    title: name,
    ...document,
  };
  return `${JSON.stringify(withId, null, 2)}\n`;
}
