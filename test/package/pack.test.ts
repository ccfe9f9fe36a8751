// Release readiness: the tarball packed from an unbuilt copy of the checkout (as a fresh clone
// is) has the right files and a build of the sources it was packed from, installs into a clean
// consumer project from the npm cache (no network), and its `harness` bin works there.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { minimalEnv, npmArgv, runCommand } from "../../src/shared/index.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
let work: string;
let tarball: string;
let files: string[];
let consumer: string;
/** Why the consumer could not be installed offline (an npm cache without registry documents). */
let notInstallable: string | undefined;

async function run(argv: string[], cwd: string, timeoutMs = 180_000) {
  const result = await runCommand(argv, {
    cwd,
    // HOME stays the real one so npm finds its cache; nothing secret is needed.
    env: minimalEnv({
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
    }),
    timeoutMs,
  });
  if (result.exitCode !== 0)
    throw new Error(
      `${argv.join(" ")} exited ${result.exitCode}\n${result.stdout}\n${result.stderr}`,
    );
  return result;
}

/**
 * The checkout as a fresh clone has it: its tracked and unignored files (as they are in the work
 * tree, so an edit not yet committed is what is packed), no `dist/`, and the checkout's
 * installed dependencies (linked: the build needs TypeScript).
 */
async function unbuiltClone(into: string): Promise<string> {
  const listed = await run(
    ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    repo,
  );
  const clone = join(into, "clone");
  for (const path of listed.stdout.split("\0").filter((p) => p !== "")) {
    const source = join(repo, path);
    if (!existsSync(source)) continue; // deleted in the work tree, not yet in the index
    await mkdir(dirname(join(clone, path)), { recursive: true });
    await cp(source, join(clone, path), { verbatimSymlinks: true });
  }
  await symlink(join(repo, "node_modules"), join(clone, "node_modules"));
  return clone;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "hl-pack-"));
  const clone = await unbuiltClone(work);
  expect(existsSync(join(clone, "dist"))).toBe(false);
  // As a maintainer packs: no flag, so the package's own prepack builds dist/ first.
  const packed = await run(npmArgv(["pack", "--json", "--pack-destination", work]), clone);
  const [info] = JSON.parse(packed.stdout) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarball = join(work, info!.filename);
  files = info!.files.map((f) => f.path).sort();
  consumer = join(work, "consumer");
  await run(["mkdir", "-p", consumer], work);
  await writeFile(
    join(consumer, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  // --offline: every dependency must come from the npm cache. `npm ci` caches tarballs but not
  // the registry documents an install resolves ranges with; .ci/run puts those there with one
  // online install of the tarball. Where they are missing (a fresh clone's first `npm test`),
  // the tests of the installed package skip, saying why, since a test may not use the network.
  try {
    await run(
      npmArgv(["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball]),
      consumer,
    );
  } catch (error) {
    if (!(error as Error).message.includes("ENOTCACHED")) throw error;
    notInstallable =
      "the npm cache lacks registry documents the offline install of the packed tarball needs (run .ci/run, or `npm install <tarball>` once online): the tests of the installed package are skipped";
    console.log(notInstallable);
  }
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the packed package", () => {
  it("ships dist, schemas, examples, docs, README and LICENSE", () => {
    for (const prefix of [
      "dist/api/index.js",
      "dist/cli/bin.js",
      "schemas/",
      "examples/fix-the-bug/",
      "docs/",
      "README.md",
      "LICENSE",
      "package.json",
    ]) {
      expect(
        files.some((f) => f.startsWith(prefix)),
        prefix,
      ).toBe(true);
    }
  });

  it("ships a build of every source module it was packed from", async () => {
    const sources = (await readdir(join(repo, "src"), { recursive: true }))
      .filter((path) => path.endsWith(".ts") && !path.endsWith(".d.ts"))
      .map((path) => `dist/${path.replace(/\\/g, "/").replace(/\.ts$/, ".js")}`);
    expect(sources.length).toBeGreaterThan(50);
    expect(sources.filter((path) => !files.includes(path))).toEqual([]);
  });

  it("ships no tests (other than the example fixtures' own), caches or local state", () => {
    const unwanted = files.filter(
      (f) =>
        /^(test|bench|scripts|src|scratch|coverage|node_modules)\//.test(f) ||
        /(^|\/)(\.cache|node_modules|\.git)\//.test(f) ||
        (/\.test\.[jt]s$/.test(f) && !/^examples\/[^/]+\/fixture\//.test(f)),
    );
    expect(unwanted).toEqual([]);
  });

  it("runs `harness --version` from a clean consumer project", (ctx) => {
    if (notInstallable) ctx.skip(notInstallable);
    const bin = join(consumer, "node_modules", ".bin", "harness");
    const out = execFileSync(bin, ["--version"], { cwd: consumer, encoding: "utf8" });
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("compiles the shipped full-surface example", (ctx) => {
    if (notInstallable) ctx.skip(notInstallable);
    const bin = join(consumer, "node_modules", ".bin", "harness");
    const out = execFileSync(
      bin,
      ["compile", "node_modules/harnesslab/examples/full-surface.harness", "--json"],
      {
        cwd: consumer,
        encoding: "utf8",
      },
    );
    expect(JSON.parse(out).kind).toBe("harness-ir-bundle");
  });

  it("validates every shipped manifest, through both bins: the offline ones start, the others say what this machine lacks", async (ctx) => {
    if (notInstallable) ctx.skip(notInstallable);
    const examples = join(consumer, "node_modules", "harnesslab", "examples");
    const manifests: string[] = [];
    for (const dir of await readdir(examples, { withFileTypes: true })) {
      if (!dir.isDirectory()) continue;
      for (const name of await readdir(join(examples, dir.name)))
        if (/^experiment.*\.json$/.test(name)) manifests.push(join(examples, dir.name, name));
    }
    expect(manifests.length).toBeGreaterThanOrEqual(4);
    const offline: string[] = [];
    for (const manifest of manifests) {
      const validated = spawnSync(
        join(consumer, "node_modules", ".bin", "harness"),
        ["compare", "validate", manifest],
        // No credential of the developer's: a real host's manifest then cannot start here.
        { cwd: consumer, encoding: "utf8", env: minimalEnv() },
      );
      if (validated.status === 0) {
        expect(validated.stdout).toContain("valid harness-compare");
        offline.push(manifest);
        continue;
      }
      // A real host's manifest: valid as written, but this consumer has neither the host's SDK
      // (an optional install) nor its credentials, and validate names exactly that.
      expect(validated.status, validated.stdout + validated.stderr).toBe(1);
      const problems = `${validated.stdout}${validated.stderr}`
        .split("\n")
        .filter((line) => line.startsWith("  ") && line.trim() !== "");
      expect(problems.length, manifest).toBeGreaterThan(0);
      for (const problem of problems)
        expect(problem, manifest).toMatch(
          /^ {2}(runtime|variants\[\d+\])\.host( \((sdk|credentials)\): .*(npm install|set [A-Z_]+)|: the qoder host cannot run inside the OS sandbox)/,
        );
    }
    expect(offline.length).toBeGreaterThanOrEqual(3);
    const alias = execFileSync(
      join(consumer, "node_modules", ".bin", "harness-compare"),
      ["validate", offline[0]!],
      {
        cwd: consumer,
        encoding: "utf8",
      },
    );
    expect(alias).toContain("valid harness-compare");
    // Thirteen starts of the packed CLI, each loading the library and its scripted agents in
    // worker threads: 1.5 to 3.4 s apiece alone on a 2-core machine, about 5 s beside the suite.
  }, 300_000);

  it("exposes the library entry and its sub-paths to a consumer", async (ctx) => {
    if (notInstallable) ctx.skip(notInstallable);
    const script = [
      'import { compileHarness, resolveComposition, loadManifest, runExperiment, checkMutation, score } from "harnesslab";',
      'import * as ir from "harnesslab/ir"; import * as exec from "harnesslab/exec"; import * as compare from "harnesslab/compare"; import * as scoring from "harnesslab/scoring"; import * as forge from "harnesslab/forge";',
      "for (const f of [compileHarness, resolveComposition, loadManifest, runExperiment, checkMutation, score]) if (typeof f !== 'function') throw new Error('missing export');",
      "if (!ir.canonicalJson || !exec.createExecutor || !compare.runExperiment || !scoring.checkMutation || !forge.startForge || !forge.captureRepoState) throw new Error('missing sub-path export');",
      "console.log('ok');",
    ].join("\n");
    await writeFile(join(consumer, "probe.mjs"), script);
    const out = execFileSync(process.execPath, ["probe.mjs"], { cwd: consumer, encoding: "utf8" });
    expect(out.trim()).toBe("ok");
  });
});
