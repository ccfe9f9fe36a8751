// `harness forge capture` and `harness forge serve` as a user runs them: exit codes, files
// written whole or not at all, the serve line, a real Gitea client against the served
// forge, and SIGTERM ending it.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { giteaApi } from "gitea-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { forgeInfoSchema, type RunningForge, startForge } from "../../src/forge/index.js";
import { sampleSeed } from "../forge/support.js";
import { runHarness } from "../support/cli.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(REPO, "src", "cli", "bin.ts");

let dir: string;
let forge: RunningForge | undefined;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-forge-cli-"));
});
afterEach(async () => {
  await forge?.close();
  forge = undefined;
});
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await rm(dir, { recursive: true, force: true });
});

function harness(argv: string[], env: NodeJS.ProcessEnv = {}) {
  return runHarness(argv, dir, env);
}

/** `forge capture --kind gitea` argv for a repository of `url`, written to `out`. */
function captureGitea(url: string, repo: string, out: string, ...more: string[]): string[] {
  return [
    "forge",
    "capture",
    "--kind",
    "gitea",
    "--url",
    url,
    "--repo",
    repo,
    "--out",
    out,
    ...more,
  ];
}

describe("harness forge capture", () => {
  it("writes the state, which harness score accepts, and keeps the token out of every output", async () => {
    forge = await startForge({ seed: sampleSeed() });
    const run = await harness(
      captureGitea(forge.url, "harness/sandbox", "state.json", "--token-env", "T"),
      { T: forge.token },
    );
    expect(run).toMatchObject({ exitCode: 0, stderr: "" });
    expect(run.stdout).toContain(
      "captured harness/sandbox from gitea: 3 labels, 3 issues, 3 pull requests",
    );
    const state = await readFile(join(dir, "state.json"), "utf8");
    expect(state).not.toContain(forge.token);
    await writeFile(
      join(dir, "spec.json"),
      JSON.stringify({ kind: "mutation", expected: sampleSeed() }),
    );
    const scored = await harness(["score", "--spec", "spec.json", "--state", "state.json"]);
    expect(scored.exitCode).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(forge.token);
  });

  it("exits 1 and writes nothing when the capture fails, naming the variable to set", async () => {
    forge = await startForge({ seed: sampleSeed() });
    const run = await harness(captureGitea(forge.url, "harness/sandbox", "denied.json"), {
      GITEA_TOKEN: "not-the-token",
    });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain("set GITEA_TOKEN");
    expect(run.stderr).not.toContain("not-the-token");
    expect(existsSync(join(dir, "denied.json"))).toBe(false);
    expect((await readdir(dir)).filter((name) => name.includes("partial"))).toEqual([]);
    const json = await harness(captureGitea(forge.url, "harness/missing", "x.json", "--json"));
    expect(json.exitCode).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      error: { exitCode: 1, message: expect.stringContaining("harness/missing") },
    });
  });

  it.each([
    [
      ["--kind", "gitlab", "--url", "http://x", "--repo", "a/b", "--out", "o.json"],
      "--kind must be gitea or github",
    ],
    [["--kind", "gitea", "--repo", "a/b", "--out", "o.json"], "--url is required for --kind gitea"],
    [["--kind", "github", "--repo", "just-a-name", "--out", "o.json"], "--repo must be owner/name"],
    [
      ["--kind", "github", "--repo", "a/b", "--out", "no/such/dir/o.json"],
      "--out: the directory no/such/dir does not exist",
    ],
    [
      ["--kind", "github", "--repo", "a/b", "--out", "o.json", "--token-env", "A-B"],
      "--token-env must be a variable name",
    ],
    [
      ["--kind", "github", "--repo", "a/b", "--out", "o.json", "--page-size", "0"],
      "--page-size must be a whole number from 1 to 100",
    ],
    [
      ["--kind", "github", "--url", "ftp://x", "--repo", "a/b", "--out", "o.json"],
      "--url must be an http:// or https:// URL",
    ],
  ])("exits 2 on bad arguments: %j", async (args, message) => {
    const run = await harness(["forge", "capture", ...args]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(message);
  });
});

describe("harness forge serve", () => {
  function serve(
    args: string[],
  ): Promise<{ child: ChildProcess; info: Record<string, string>; stderr: () => string }> {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, "forge", "serve", ...args], {
      cwd: REPO,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(child);
    let stdout = "";
    let stderr = "";
    child.stderr!.on("data", (chunk) => {
      stderr += chunk;
    });
    return new Promise((resolve, reject) => {
      child.stdout!.on("data", (chunk) => {
        stdout += chunk;
        if (stdout.includes("\n"))
          resolve({ child, info: JSON.parse(stdout), stderr: () => stderr });
      });
      child.once("exit", (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
  }

  function exitOf(child: ChildProcess): Promise<number | null> {
    return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  it("prints one JSON line, serves a Gitea client, and stops with exit 0 on SIGTERM", async () => {
    await writeFile(join(dir, "seed.json"), JSON.stringify(sampleSeed()));
    const { child, info } = await serve([
      "--seed",
      join(dir, "seed.json"),
      "--repo",
      "acme/widgets",
      "--user",
      "kim",
    ]);
    expect(Object.keys(info).sort()).toEqual(["owner", "repo", "token", "url", "user"]);
    expect(forgeInfoSchema.safeParse(info).success).toBe(true);
    expect(info).toMatchObject({
      owner: "acme",
      repo: "widgets",
      user: "kim",
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
    });
    const api = giteaApi(info.url!, { token: info.token! });
    const comment = await api.repos.issueCreateComment("acme", "widgets", 1, {
      body: "from the CLI forge",
    });
    expect(comment.data.user?.login).toBe("kim");
    const exited = exitOf(child);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("exits 2 naming the file and the JSON path for a seed that is not a RepoState", async () => {
    await writeFile(
      join(dir, "bad-seed.json"),
      JSON.stringify({ issues: [{ number: 1, title: "x", state: "done" }] }),
    );
    const run = await harness(["forge", "serve", "--seed", "bad-seed.json"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("bad-seed.json");
    expect(run.stderr).toContain("issues[0].state");
    await writeFile(
      join(dir, "label-seed.json"),
      JSON.stringify({ issues: [{ number: 1, title: "x", state: "open", labels: ["nope"] }] }),
    );
    const run2 = await harness(["forge", "serve", "--seed", "label-seed.json"]);
    expect(run2.exitCode).toBe(2);
    expect(run2.stderr).toContain('issues[0].labels[0]: label "nope" is not defined in labels');
  });
});
