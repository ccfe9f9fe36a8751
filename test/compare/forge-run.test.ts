// Forge tasks through `compare run` with scripted agents: a fresh local forge per trial, the agent
// reaching it by MCP or by curl through the gateway (in the sandbox), the state captured and
// graded, the evidence in the trial folder, regrade from the recorded state.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { regradeRun } from "../../src/compare/index.js";
import type { RepoState } from "../../src/scoring/index.js";
import {
  makeExperiment,
  readJson,
  runManifest,
  type TempExperiment,
} from "../support/experiment.js";
import {
  CLI_AGENT,
  FORGE_HARNESS,
  forgeManifest,
  forgeTask,
  MCP_AGENT,
  SMALL_SEED,
} from "../support/forge.js";

/** A cli agent that tries every way out of its repository, then does the task. */
const CLI_ATTACKER = `export default async function ({ tools, forge, trial }) {
  const base = forge.commandUrl;
  const attempts = {};
  const run = async (name, command) => {
    const r = await tools.bash(command);
    attempts[name] = r.ok ? { exitCode: r.exitCode, out: r.stdout.slice(0, 300) } : { denied: r.rule ?? r.error };
  };
  await run("otherRepo", "curl -sS -X POST -H 'Content-Type: application/json' -d '{\\"title\\":\\"x\\"}' " + base + "/api/v1/user/repos");
  await run("dotdot", "curl -sS --path-as-is " + base + "/api/v1/repos/" + forge.owner + "/" + forge.repo + "/../../x/y/issues");
  await run("deleteRepo", "curl -sS -X DELETE " + base + "/api/v1/repos/" + forge.owner + "/" + forge.repo);
  await run("internet", "curl -sS -m 5 http://example.com/");
  await run("modelPort", "curl -sS -m 5 http://127.0.0.1:40117/");
  await run("directForge", "curl -sS -m 5 " + forge.url + "/api/v1/version");
  await run("shell", "curl x; id");
  await run("wget", "wget " + base);
  return JSON.stringify(attempts);
}
`;

function manifest(variants: Array<Record<string, unknown>>): Record<string, unknown> {
  return forgeManifest({
    tasks: [
      forgeTask({ tier: "single-mutation", forge: { seed: "./seed.json", repo: "acme/widgets" } }),
      forgeTask({
        id: "count-open",
        tier: "read",
        graders: [
          {
            kind: "read-facts",
            facts: [{ description: "two open issues", anyOf: ["2 open issues"] }],
          },
        ],
      }),
    ],
    variants,
    top: { concurrency: 2 },
  });
}

let exp: TempExperiment;

async function forgeExperiment(variants: Array<Record<string, unknown>>): Promise<TempExperiment> {
  const made = await makeExperiment({
    harness: FORGE_HARNESS,
    fixture: { "README.md": "# widgets\n" },
    prompt: "Close issue #2 as a duplicate of #1.\n",
    agents: { "mcp.mjs": MCP_AGENT, "cli.mjs": CLI_AGENT, "attacker.mjs": CLI_ATTACKER },
    manifest: manifest(variants),
  });
  await made.writeManifest(SMALL_SEED, "seed.json");
  return made;
}

describe("forge tasks through compare run (scripted agents, local forge)", () => {
  let result: Awaited<ReturnType<typeof runManifest>>;
  beforeAll(async () => {
    exp = await forgeExperiment([
      { id: "mcp", composition: "by-mcp", agent: "./agents/mcp.mjs" },
      { id: "cli", composition: "by-cli", agent: "./agents/cli.mjs" },
    ]);
    result = await runManifest(exp.manifestPath, { outDir: exp.outDir, tempParent: exp.trialsDir });
  });
  afterAll(() => exp.cleanup());

  it("passes every trial on both arms, with a verdict", () => {
    expect(result.verdict.trials.map((t) => [t.variant, t.task, t.outcome, t.explanation])).toEqual(
      expect.arrayContaining([
        ["mcp", "close-duplicate", "passed", "all graders passed"],
        ["mcp", "count-open", "passed", "all graders passed"],
        ["cli", "close-duplicate", "passed", "all graders passed"],
        ["cli", "count-open", "passed", "all graders passed"],
      ]),
    );
    expect(result.verdict.variants.map((v) => [v.id, v.forgeAccess])).toEqual([
      ["mcp", "mcp"],
      ["cli", "cli"],
    ]);
    expect(result.verdict.taskTiers).toEqual({
      "close-duplicate": "single-mutation",
      "count-open": "read",
    });
  });

  it("keeps the state before and after and the write log as the trial's evidence", async () => {
    const dir = join(exp.outDir, "cli", "close-duplicate", "trial-001");
    const before = (await readJson(dir, "forge-before.json")) as RepoState;
    const after = (await readJson(dir, "forge-after.json")) as RepoState;
    expect(before.issues?.find((i) => i.number === 2)?.state).toBe("open");
    expect(after.issues?.find((i) => i.number === 2)).toMatchObject({
      state: "closed",
      labels: ["duplicate"],
    });
    const log = (await readJson(dir, "forge-write-log.json")) as Array<{
      method: string;
      path: string;
      actor: string;
      status: number;
    }>;
    expect(log.map((e) => [e.method, e.path, e.actor, e.status])).toEqual([
      ["POST", "/api/v1/repos/acme/widgets/issues/2/comments", "agent", 201],
      ["POST", "/api/v1/repos/acme/widgets/issues/2/labels", "agent", 200],
      ["PATCH", "/api/v1/repos/acme/widgets/issues/2", "agent", 201],
    ]);
  });

  it("records the tool use by kind: shell commands for cli, MCP tools for mcp", async () => {
    const cli = (await readJson(
      join(exp.outDir, "cli", "close-duplicate", "trial-001"),
      "tool-use.json",
    )) as { counts: Record<string, number>; calls: Array<{ kind: string; command?: string }> };
    expect(cli.counts).toEqual({ shell: 3, mcp: 0, other: 0 });
    expect(cli.calls[0]?.command).toMatch(/^curl -sS -f -X POST/);
    const mcp = (await readJson(
      join(exp.outDir, "mcp", "close-duplicate", "trial-001"),
      "tool-use.json",
    )) as { counts: Record<string, number>; calls: Array<{ server?: string; mcpTool?: string }> };
    expect(mcp.counts).toEqual({ shell: 0, mcp: 3, other: 0 });
    expect(mcp.calls.map((c) => `${c.server}/${c.mcpTool}`)).toEqual([
      "forge/add_comment",
      "forge/add_labels",
      "forge/close",
    ]);
    const metrics = (await readJson(
      join(exp.outDir, "mcp", "close-duplicate", "trial-001"),
      "metrics.json",
    )) as { toolUse: unknown; costEquivalentTokens: unknown };
    expect(metrics).toMatchObject({
      toolUse: { shell: 0, mcp: 3, other: 0 },
      costEquivalentTokens: null,
    });
  });

  it("tells the agent where the repository is and how to reach it, and no token", async () => {
    const cli = await readFile(
      join(exp.outDir, "cli", "close-duplicate", "trial-001", "prompt.txt"),
      "utf8",
    );
    expect(cli).toContain("the repository acme/widgets on a Gitea-compatible forge");
    expect(cli).toContain("http://127.0.0.1:40118/api/v1");
    const mcp = await readFile(
      join(exp.outDir, "mcp", "close-duplicate", "trial-001", "prompt.txt"),
      "utf8",
    );
    expect(mcp).toContain('the tools of the MCP server "forge"');
    expect(mcp).not.toContain("127.0.0.1");
  });

  it("regrades from the recorded state, without a forge", async () => {
    const regraded = await regradeRun(exp.outDir, { tempParent: exp.trialsDir });
    expect(regraded.changes).toEqual([]);
    expect(regraded.verdict.trials.every((t) => t.outcome === "passed")).toBe(true);
  });

  it("refuses to regrade a forge state edited in --out (the record is sealed)", async () => {
    const path = join(exp.outDir, "mcp", "close-duplicate", "trial-001", "forge-after.json");
    const original = await readFile(path, "utf8");
    const forged = JSON.parse(original) as RepoState;
    forged.issues = forged.issues?.map((i) => (i.number === 2 ? { ...i, state: "open" } : i));
    await writeFile(path, JSON.stringify(forged));
    try {
      await expect(regradeRun(exp.outDir, { tempParent: exp.trialsDir })).rejects.toThrow(
        /not the ones this run wrote/,
      );
    } finally {
      await writeFile(path, original);
    }
  });
});

describe("attacks on the cli arm", () => {
  let attack: TempExperiment;
  let attempts: Record<string, { exitCode?: number; out?: string; denied?: string }>;
  beforeAll(async () => {
    attack = await forgeExperiment([
      { id: "mcp", composition: "by-mcp", agent: "./agents/mcp.mjs" },
      { id: "cli", composition: "by-cli", agent: "./agents/attacker.mjs" },
    ]);
    await runManifest(attack.manifestPath, { outDir: attack.outDir, tempParent: attack.trialsDir });
    attempts = JSON.parse(
      await readFile(join(attack.outDir, "cli", "count-open", "trial-001", "response.txt"), "utf8"),
    );
  });
  afterAll(() => attack.cleanup());

  it("reaches nothing but its own repository through the gateway", () => {
    expect(attempts.otherRepo?.out).toMatch(/this gateway reaches acme\/widgets only/);
    expect(attempts.dotdot?.out).toMatch(/dot segment/);
    expect(attempts.deleteRepo?.out).toMatch(/DELETE \/api\/v1\/repos\/acme\/widgets is refused/);
  });

  it("reaches neither the network, nor other ports, nor the forge's own address", () => {
    for (const name of ["internet", "modelPort", "directForge"])
      expect(attempts[name]?.exitCode, name).not.toBe(0);
  });

  it("is still bound by the policy: shell syntax and other programs are denied", () => {
    expect(attempts.shell?.denied).toBe("shell-metacharacter");
    expect(attempts.wget?.denied).toBe("command-not-allowed");
  });

  it("leaves the repository as seeded", async () => {
    const after = (await readJson(
      join(attack.outDir, "cli", "count-open", "trial-001"),
      "forge-after.json",
    )) as RepoState;
    expect(after.issues?.length).toBe(2);
    expect(after.issues?.every((i) => i.state === "open")).toBe(true);
  });
});
