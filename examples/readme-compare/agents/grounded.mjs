// Simulates typical runs of the grounded setup: it reads the package metadata, the
// public source, the tests and the example before writing, ignores the archived
// design notes, writes a README whose claims all come from the code, and runs the
// tests and the example before finishing. The README text it converges on is
// agents/grounded-readme.md (one a careful engineer wrote from the code).
import { readFile } from "node:fs/promises";

const GROUNDED = await readFile(new URL("./grounded-readme.md", import.meta.url), "utf8");

export default async function groundedAgent({ tools }) {
  const pkg = JSON.parse((await tools.read("package.json")).content);
  for (const file of (await tools.glob("src/**/*.js")).files ?? []) await tools.read(file);
  await tools.read("examples/basic.mjs");
  await tools.glob("test/**/*.js");

  const write = await tools.write("README.md", GROUNDED);
  if (!write.ok) return `could not write README.md: ${write.denied ? write.reason : write.error}`;
  const tests = await tools.bash("npm test");
  const example = await tools.bash("npm run example");
  return [
    `Wrote README.md for ${pkg.name} from package.json, src/ and examples/basic.mjs (archived notes ignored).`,
    `npm test exit ${tests.exitCode ?? "?"}; npm run example exit ${example.exitCode ?? "?"}.`,
  ].join("\n");
}
