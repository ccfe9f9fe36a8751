import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { allJsonSchemas, renderJsonSchema } from "../src/schema-registry.js";

const schemasDir = fileURLToPath(new URL("../schemas/", import.meta.url));

describe("checked-in JSON Schemas", () => {
  it("has no file under schemas/ that no schema in code produces", async () => {
    const { readdir } = await import("node:fs/promises");
    const files = await readdir(schemasDir).catch(() => [] as string[]);
    const produced = new Set([...allJsonSchemas().keys()].map((n) => `${n}.schema.json`));
    expect(files.filter((f) => f.endsWith(".json") && !produced.has(f))).toEqual([]);
  });

  for (const [name, schema] of allJsonSchemas()) {
    it(`schemas/${name}.schema.json matches the schema in code`, async () => {
      const onDisk = await readFile(`${schemasDir}${name}.schema.json`, "utf8").catch(
        () => "(missing)",
      );
      expect(onDisk, "run `npm run generate` and commit schemas/").toBe(
        renderJsonSchema(name, schema),
      );
    });
  }
});
