// Live mode against the local forge, which serves the Gitea API a real Gitea does: per trial a
// throwaway repository is created, seeded through the API (authors through Sudo), used by the
// agent through MCP or curl, captured, and deleted (or kept with keepForgeRepos).
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ForgeApi, type RunningForge, startForge } from "../../src/forge/index.js";
import {
  filesContaining,
  makeExperiment,
  readJson,
  runManifest,
  type TempExperiment,
} from "../support/experiment.js";
import {
  CLI_AGENT,
  FORGE_HARNESS,
  forgeManifest,
  MCP_AGENT,
  SMALL_SEED,
} from "../support/forge.js";

let gitea: RunningForge;
let exp: TempExperiment;

function liveManifest(forge: Record<string, unknown>) {
  return forgeManifest({
    variants: [
      { id: "mcp", composition: "by-mcp", agent: "./agents/mcp.mjs" },
      { id: "cli", composition: "by-cli", agent: "./agents/cli.mjs" },
    ],
    top: { forge },
  });
}

const live = () => ({
  kind: "gitea",
  url: gitea.url,
  tokenEnv: "LIVE_GITEA_TOKEN",
  owner: "ci-bot",
  user: "ci-bot",
  author: "maintainer",
});

async function repositories(): Promise<string[]> {
  const api = new ForgeApi({ apiUrl: gitea.apiUrl, token: gitea.token });
  const found = await api.get<{ data: Array<{ full_name: string }> }>("/repos/search?limit=50");
  return found.body.data.map((r) => r.full_name).sort();
}

beforeAll(async () => {
  // The "real Gitea": a site administrator's token, users who author the seed's content.
  gitea = await startForge({
    repo: "ci-bot/placeholder",
    user: "ci-bot",
    admin: true,
    users: ["alice", "maintainer"],
  });
});
afterAll(() => gitea.close());

beforeEach(async () => {
  exp = await makeExperiment({
    harness: FORGE_HARNESS,
    fixture: { "README.md": "# widgets\n" },
    prompt: "Close issue #2 as a duplicate of #1.\n",
    agents: { "mcp.mjs": MCP_AGENT, "cli.mjs": CLI_AGENT },
    manifest: liveManifest(live()),
  });
  await exp.writeManifest(SMALL_SEED, "seed.json");
});
afterEach(() => exp.cleanup());

describe("live mode (a Gitea's API, here the local forge's)", () => {
  it("runs every trial in its own throwaway repository, graded, then deleted; the token stays out of the evidence", async () => {
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      env: { ...process.env, LIVE_GITEA_TOKEN: gitea.token },
    });
    expect(verdict.trials.map((t) => [t.variant, t.outcome, t.explanation])).toEqual([
      ["mcp", "passed", "all graders passed"],
      ["cli", "passed", "all graders passed"],
    ]);
    expect(await repositories()).toEqual(["ci-bot/placeholder"]);
    const dir = join(exp.outDir, "mcp", "close-duplicate", "trial-001");
    const log = (await readJson(dir, "forge-write-log.json")) as Array<{
      method: string;
      path: string;
      actor: string;
    }>;
    expect(log.map((e) => e.method)).toEqual(["POST", "POST", "PATCH"]);
    expect(log[0]?.path).toMatch(
      /^\/api\/v1\/repos\/ci-bot\/hl-close-duplicate-mcp-1-[0-9a-f]{8}\/issues\/2\/comments$/,
    );
    expect(await filesContaining(exp.outDir, gitea.token)).toEqual([]);
  });

  it("keeps the repositories with keepForgeRepos, seeded as the seed says", async () => {
    await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      env: { ...process.env, LIVE_GITEA_TOKEN: gitea.token },
      keepForgeRepos: true,
    });
    const kept = (await repositories()).filter((name) => name !== "ci-bot/placeholder");
    expect(kept).toHaveLength(2);
    const before = gitea.snapshot(kept[0]);
    expect(before?.issues?.find((i) => i.number === 2)?.comments?.[0]).toMatchObject({
      author: "alice",
      body: "Same here",
    });
    const api = new ForgeApi({ apiUrl: gitea.apiUrl, token: gitea.token });
    for (const name of kept) await api.request("DELETE", `/repos/${name}`);
  });

  it("is an infrastructure error, saying what to set, without the token", async () => {
    const { verdict } = await runManifest(exp.manifestPath, {
      outDir: exp.outDir,
      tempParent: exp.trialsDir,
      env: { PATH: process.env.PATH ?? "" },
    });
    expect(verdict.trials.map((t) => [t.outcome, t.infraReason])).toEqual([
      ["infrastructure_error", "forge_failed"],
      ["infrastructure_error", "forge_failed"],
    ]);
    expect(verdict.trials[0]?.explanation).toContain("set LIVE_GITEA_TOKEN to a token of ci-bot");
  });

  it("refuses a token of another user than forge.user, and one that cannot act as the seed's authors", async () => {
    await exp.writeManifest(
      liveManifest({ ...live(), user: "someone-else", owner: "someone-else" }),
    );
    const wrongUser = await runManifest(exp.manifestPath, {
      outDir: exp.freshOut("wrong-user"),
      tempParent: exp.trialsDir,
      env: { ...process.env, LIVE_GITEA_TOKEN: gitea.token },
    });
    expect(wrongUser.verdict.trials[0]?.explanation).toContain(
      "authenticates as ci-bot, but forge.user is someone-else",
    );
    const plain = await startForge({
      repo: "ci-bot/placeholder",
      user: "ci-bot",
      users: ["alice", "maintainer"],
    });
    try {
      await exp.writeManifest(liveManifest({ ...live(), url: plain.url }));
      const noSudo = await runManifest(exp.manifestPath, {
        outDir: exp.freshOut("no-sudo"),
        tempParent: exp.trialsDir,
        env: { ...process.env, LIVE_GITEA_TOKEN: plain.token },
      });
      expect(noSudo.verdict.trials[0]?.infraReason).toBe("forge_failed");
      expect(noSudo.verdict.trials[0]?.explanation).toMatch(/Only administrators allowed to sudo/);
      // The half-seeded repository was removed.
      const api = new ForgeApi({ apiUrl: plain.apiUrl, token: plain.token });
      const left = await api.get<{ data: unknown[] }>("/repos/search");
      expect(left.body.data).toHaveLength(1);
    } finally {
      await plain.close();
    }
  });
});
