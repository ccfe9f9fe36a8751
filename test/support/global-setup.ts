// Runs once before the suite. The tests run agent-written code the way a run does, contained by
// bubblewrap, so a machine where it cannot start fails here with what to install, instead of
// every such test failing on its own. And some tests run the built CLI as a user would (the
// commands `harness init` prints, the packed package): dist/ is built here when it is missing or
// older than the sources, so the README's test command works on a fresh clone.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { detectSandbox } from "../../src/sandbox/index.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** tsc writes every output on each build: this file's time is the last build's. */
const BUILT = join(REPO, "dist", "cli", "bin.js");

function newestSourceMs(): number {
  let newest = 0;
  const visit = (path: string) => {
    const info = statSync(path);
    if (info.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, info.mtimeMs);
  };
  for (const path of ["src", "package.json", "tsconfig.json", "tsconfig.build.json"])
    visit(join(REPO, path));
  return newest;
}

function ensureBuilt(): void {
  if (existsSync(BUILT) && statSync(BUILT).mtimeMs >= newestSourceMs()) return;
  const built = spawnSync("npm", ["run", "build"], { cwd: REPO, encoding: "utf8" });
  if (built.status !== 0)
    throw new Error(`npm run build failed before the tests:\n${built.stdout}\n${built.stderr}`);
}

export default async function setup(): Promise<void> {
  const support = await detectSandbox();
  if (!support.available)
    throw new Error(
      `harnesslab's tests need the OS sandbox: ${support.reason}. To fix: ${support.fix}`,
    );
  ensureBuilt();
}
