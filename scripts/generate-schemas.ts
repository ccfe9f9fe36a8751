// Writes (or with --check, verifies) the JSON Schemas under schemas/ from the zod schemas in code.
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { allJsonSchemas, renderJsonSchema } from "../src/schema-registry.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const dir = join(root, "schemas");
const check = process.argv.includes("--check");

const wanted = new Map<string, string>();
for (const [name, schema] of allJsonSchemas())
  wanted.set(`${name}.schema.json`, renderJsonSchema(name, schema));

await mkdir(dir, { recursive: true });
const present = (await readdir(dir)).filter((f) => f.endsWith(".json"));
const problems: string[] = [];
for (const [file, text] of wanted) {
  let current: string | undefined;
  try {
    current = await readFile(join(dir, file), "utf8");
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) problems.push(`schemas/${file} is ${current === undefined ? "missing" : "stale"}`);
  else await writeFile(join(dir, file), text);
}
for (const file of present) {
  if (wanted.has(file)) continue;
  if (check) problems.push(`schemas/${file} is not produced by any schema in code`);
  else await rm(join(dir, file));
}
if (problems.length > 0) {
  console.error(`${problems.join("\n")}\nRun \`npm run generate\` and commit the result.`);
  process.exit(1);
}
console.log(
  check
    ? `schemas/: ${wanted.size} schema files up to date`
    : `schemas/: wrote ${wanted.size} schema files`,
);
