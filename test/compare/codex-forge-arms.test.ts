// The real Codex client (the SDK's native binary) reaching a forge task's repository, offline
// against the loopback Responses server, through a component of its setup (the forge suite's
// stand-in MCP server, relayed from the trial's sandbox and granted the gateway; its CLI, run by
// name from Codex's shell, its folder first on the PATH Codex's commands inherit) and through
// curl against the gateway: Codex's own sandbox lets those commands reach the loopback.
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  assembleExperiment,
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
} from "../../src/compare/index.js";
import { locateCodexBinary } from "../../src/exec/codex/binary.js";
import { CodexExecutor } from "../../src/exec/codex/index.js";
import {
  execCommand,
  type ResponsesLoopback,
  type ResponsesScriptTurn,
  startResponsesLoopback,
} from "../../src/exec/loopback/index.js";
import type { RepoState } from "../../src/scoring/index.js";
import { claudeCodeRuntime, realClientAvailable } from "../support/anthropic-real-clients.js";
import {
  copyForgeSuiteTools,
  DUPLICATE_CHANGES,
  FORGE_HARNESS,
  FORGE_TOOL_COMPONENTS,
  SMALL_SEED,
} from "../support/forge.js";

const KEY = "loopback-key-forge-arms-5c1a";
// A model Codex has no catalog entry for: it offers MCP tools directly.
const MODEL = "loopback-model";
const binary = locateCodexBinary();
const run = realClientAvailable(`the Codex binary (${binary.ok ? "" : binary.error})`, binary.ok);

const HARNESS = `${FORGE_HARNESS}
binding forge-work for codex { mechanism prompt-preamble strength advisory }
${FORGE_TOOL_COMPONENTS}
binding widgets-mcp for codex { mechanism mcp-server strength wired }
binding forge-cli for codex { mechanism prompt-preamble strength advisory }
plugin mcp-arm {
  version "1.0.0"
  provides [ component.widgets-mcp ]
}
plugin cli-arm {
  version "1.0.0"
  provides [ component.forge-cli ]
}
composition codex-tool-mcp {
  target codex
  include [ plugin.forge-core@^1, plugin.mcp-arm@^1 ]
  configure { forge.tool = "widgets-mcp" forge.only = true }
}
composition codex-harnesslab-mcp {
  target codex
  include [ plugin.forge-core@^1 ]
  configure { forge.access = "mcp" forge.only = true }
}
composition codex-rest {
  target codex
  include [ plugin.forge-core@^1 ]
  configure { forge.access = "cli" forge.only = true }
}
composition codex-tool-cli {
  target codex
  include [ plugin.forge-core@^1, plugin.cli-arm@^1 ]
  configure { forge.tool = "forge-cli" forge.only = true }
}
`;

const repo = { owner: "acme", repo: "widgets" };
const SCRIPTS: Record<string, ResponsesScriptTurn[]> = {
  harnesslab: [
    ...[
      ["add_comment", { number: 2, body: "Duplicate of #1" }],
      ["add_labels", { number: 2, labels: ["duplicate"] }],
      ["close", { number: 2 }],
    ].map(([name, args]) => ({
      output: [
        {
          type: "function_call" as const,
          namespace: "mcp__forge",
          name: name as string,
          arguments: args as Record<string, unknown>,
        },
      ],
    })),
    { output: [{ type: "message", text: "Closed #2 as a duplicate of #1." }] },
  ],
  mcp: [
    ...[
      ["create_issue_comment", { index: 2, body: "Duplicate of #1" }],
      ["add_issue_labels", { index: 2, labels: ["duplicate"] }],
      ["edit_issue", { index: 2, state: "closed" }],
    ].map(([name, args]) => ({
      output: [
        {
          type: "function_call" as const,
          namespace: "mcp__widgets_mcp",
          name: name as string,
          arguments: { ...repo, ...(args as object) },
        },
      ],
    })),
    { output: [{ type: "message", text: "Closed #2 as a duplicate of #1." }] },
  ],
};

let base: string;
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "hl-codex-forge-")));
});
afterAll(() => rm(base, { recursive: true, force: true }));

/**
 * Writes the close-duplicate experiment on Codex in `dir` (the harness, the seed, the forge
 * suite's tools) with `variants`, the first the baseline, and loads it as `compare run` does.
 */
async function codexExperiment(dir: string, variants: { id: string; composition: string }[]) {
  await mkdir(join(dir, "fixture"), { recursive: true });
  await writeFile(join(dir, "fixture", "README.md"), "# widgets\n");
  await writeFile(join(dir, "prompt.md"), "Close #2 as a duplicate of #1.\n");
  await writeFile(join(dir, "forge.harness"), HARNESS);
  await writeFile(join(dir, "seed.json"), JSON.stringify(SMALL_SEED));
  await copyForgeSuiteTools(dir);
  const manifest = {
    schemaVersion: "harness-compare.v2",
    harness: "./forge.harness",
    tasks: [
      {
        id: "close-duplicate",
        fixture: "./fixture",
        prompt: "./prompt.md",
        forge: { seed: "./seed.json", repo: "acme/widgets" },
        graders: [{ kind: "forge-state", changes: DUPLICATE_CHANGES }],
      },
    ],
    variants,
    baseline: variants[0]?.id,
    // A safety bound only, for a loaded machine.
    runtime: claudeCodeRuntime({ host: "codex", model: MODEL, timeoutMs: 150_000 }),
    trials: { count: 1, seed: 1, order: "sequential" },
    verdict: { policy: "heuristic-v1" },
    concurrency: 1,
  };
  await writeFile(join(dir, "experiment.json"), JSON.stringify(manifest, null, 2));
  const loaded = await loadManifest(join(dir, "experiment.json"), {
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return loaded;
}

describe.skipIf(!run)("the real Codex client on a forge task's arms (offline)", () => {
  it("closes the duplicate through harnesslab's forge MCP server and through a third-party one", async () => {
    const dir = join(base, "exp");
    const loaded = await codexExperiment(dir, [
      { id: "harnesslab", composition: "codex-harnesslab-mcp" },
      { id: "mcp", composition: "codex-tool-mcp" },
    ]);
    const servers: Record<string, ResponsesLoopback> = {
      harnesslab: await startResponsesLoopback({ apiKey: KEY, script: SCRIPTS.harnesslab! }),
      mcp: await startResponsesLoopback({ apiKey: KEY, script: SCRIPTS.mcp! }),
    };
    const outDir = join(dir, "out");
    let verdict: Awaited<ReturnType<typeof runExperiment>>["verdict"];
    try {
      ({ verdict } = await runExperiment(loaded.experiment, {
        outDir,
        manifestDocument: loaded.manifest,
        manifestHash: loaded.manifestHash,
        executorFor: () => ({
          host: "codex",
          run: (input) =>
            new CodexExecutor({
              env: { PATH: process.env.PATH ?? "" },
              endpoint: { baseUrl: servers[input.variant]!.url, apiKey: KEY },
            }).run(input),
        }),
        tempParent: base,
        env: { ...process.env, OPENAI_API_KEY: KEY },
      }));
    } finally {
      await servers.harnesslab!.close();
      await servers.mcp!.close();
    }
    expect(verdict.trials.map((t) => [t.variant, t.outcome, t.explanation])).toEqual([
      ["harnesslab", "passed", "all graders passed"],
      ["mcp", "passed", "all graders passed"],
    ]);
    // The MCP arm: Codex offered the server's namespace; its answers came back through the relay.
    const offered = servers.mcp!.requests.find((r) => r.kind === "turn")?.toolNames ?? [];
    expect(offered).toContain("mcp__widgets_mcp");
    expect(servers.harnesslab!.requests.find((r) => r.kind === "turn")?.toolNames).toContain(
      "mcp__forge",
    );
    for (const trial of verdict.trials) {
      const after = JSON.parse(
        await readFile(join(outDir, trial.artifactDir, "forge-after.json"), "utf8"),
      ) as RepoState;
      expect(after.issues?.find((i) => i.number === 2)).toMatchObject({ state: "closed" });
    }
  }, 600_000);
});

describe("arms Codex cannot run", () => {
  it("refuses, before any trial, an arm whose commands would reach the forge", async () => {
    const loaded = await codexExperiment(join(base, "refused"), [
      { id: "rest", composition: "codex-rest" },
      { id: "cli", composition: "codex-tool-cli" },
    ]);
    const assembled = await assembleExperiment(loaded.experiment);
    expect(assembled.ok ? [] : assembled.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      expect.stringMatching(
        /^variants\[0\]\.composition: composition "codex-rest" sets forge\.access = "cli": Codex runs its commands in its own sandbox beside its model endpoint/,
      ),
      expect.stringMatching(
        /^variants\[1\]\.composition: composition "codex-tool-cli" sets forge\.tool = "forge-cli", a program: Codex runs its commands/,
      ),
    ]);
  });
});
