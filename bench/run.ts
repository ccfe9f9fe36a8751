// `npm run bench [-- name…]`: runs every bench/*.bench.ts (or those whose name contains a filter).
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const dir = fileURLToPath(new URL(".", import.meta.url));
const filters = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const files = (await readdir(dir)).filter((f) => f.endsWith(".bench.ts")).sort();
const selected = files.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (selected.length === 0) {
  console.error(`no benchmark matches ${filters.join(", ")}; available: ${files.join(", ")}`);
  process.exit(2);
}
for (const file of selected) {
  console.log(`\n## ${file.replace(/\.bench\.ts$/, "")}`);
  const mod = (await import(pathToFileURL(join(dir, file)).href)) as { run: () => Promise<void> };
  await mod.run();
}
