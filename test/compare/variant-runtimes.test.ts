// Variants that differ in model and host, in one experiment with one verdict: the shipped
// examples load as documented, and the real Claude Code and Codex clients, each against its
// loopback model server, get each variant's own model and turn limit (asserted on what the
// servers received and on where each host stopped).
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
  runtimeOf,
} from "../../src/compare/index.js";
import { ClaudeCodeExecutor } from "../../src/exec/claude-code/index.js";
import { locateCodexBinary } from "../../src/exec/codex/binary.js";
import { CodexExecutor } from "../../src/exec/codex/index.js";
import { type Executor, type HostId, runtimeReceiptSchema } from "../../src/exec/index.js";
import {
  type AnthropicScriptTurn,
  execCommand,
  startAnthropicLoopback,
  startResponsesLoopback,
} from "../../src/exec/loopback/index.js";
import {
  claudeCodeBinary,
  claudeCodeRuntime,
  realClientAvailable,
} from "../support/anthropic-real-clients.js";
import { runHarness } from "../support/cli.js";

const EXAMPLE = join(import.meta.dirname, "..", "..", "examples", "fix-the-bug");

describe("the shipped model and host comparisons", () => {
  it("experiment.models.json expands its matrix into the documented variants, each on its model", async () => {
    const loaded = await loadManifest(join(EXAMPLE, "experiment.models.json"), {
      loadCatalog: loadHarnessCatalog,
    });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const { experiment } = loaded;
    expect(
      experiment.variants.map((v) => [v.id, v.composition, runtimeOf(experiment, v).host]),
    ).toEqual([
      ["claude-sonnet-4-5_baseline-claude", "baseline-claude", "claude-code"],
      ["claude-sonnet-4-5_verified-claude", "verified-claude", "claude-code"],
      ["claude-haiku-4-5_baseline-claude", "baseline-claude", "claude-code"],
      ["claude-haiku-4-5_verified-claude", "verified-claude", "claude-code"],
    ]);
    expect(experiment.variants.map((v) => runtimeOf(experiment, v))).toMatchObject([
      { model: "claude-sonnet-4-5" },
      { model: "claude-sonnet-4-5" },
      { model: "claude-haiku-4-5" },
      { model: "claude-haiku-4-5" },
    ]);
    expect(experiment.baseline).toBe("claude-sonnet-4-5_baseline-claude");
    expect(experiment.variants.find((v) => v.isBaseline)?.id).toBe(experiment.baseline);
    expect(experiment.variants[3]?.compositionField).toBe(
      "matrix[claude-haiku-4-5_verified-claude].composition",
    );
    // What a run records is the manifest as written: the matrix, not its expansion.
    expect(loaded.manifest).toMatchObject({ matrix: { model: expect.any(Array) } });
    expect("variants" in loaded.manifest).toBe(false);
  });

  it("takes a matrix beside an empty or a short variants list, and records the manifest as written", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hl-matrix-"));
    try {
      await cp(EXAMPLE, dir, { recursive: true });
      const manifest = JSON.parse(await readFile(join(dir, "experiment.models.json"), "utf8"));
      for (const variants of [
        [],
        [{ id: "opus", composition: "verified-claude", model: "claude-opus-4-1" }],
      ]) {
        const path = join(dir, `with-${variants.length}.json`);
        await writeFile(path, JSON.stringify({ ...manifest, variants }));
        const loaded = await loadManifest(path, { loadCatalog: loadHarnessCatalog });
        if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
        expect(loaded.experiment.variants.map((v) => v.id)).toEqual([
          ...variants.map((v) => v.id),
          "claude-sonnet-4-5_baseline-claude",
          "claude-sonnet-4-5_verified-claude",
          "claude-haiku-4-5_baseline-claude",
          "claude-haiku-4-5_verified-claude",
        ]);
        expect(loaded.manifest).toMatchObject({ variants, matrix: manifest.matrix });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("experiment.hosts.json runs one variant on Claude Code and one on Codex, the tool policy shared", async () => {
    const loaded = await loadManifest(join(EXAMPLE, "experiment.hosts.json"), {
      loadCatalog: loadHarnessCatalog,
    });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const { experiment } = loaded;
    const [claude, codex] = experiment.variants.map((v) => runtimeOf(experiment, v));
    expect(claude).toMatchObject({ host: "claude-code", model: "claude-sonnet-4-5" });
    expect(codex).toMatchObject({ host: "codex", model: "gpt-5-codex", maxTurns: 30 });
    if (claude?.host === "scripted" || codex?.host === "scripted") throw new Error("real hosts");
    expect(codex?.tools).toEqual(claude?.tools);
    expect(codex?.validationCommands).toEqual(claude?.validationCommands);
  });
});

describe("a host a variant needs is checked before any trial, naming the variant", () => {
  it("compare validate and compare run refuse the Codex variant when this machine has no OpenAI key", async () => {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? "", ANTHROPIC_API_KEY: "sk-test" };
    const manifest = join(EXAMPLE, "experiment.hosts.json");
    const validate = await runHarness(["compare", "validate", manifest], process.cwd(), env);
    expect(validate.exitCode).toBe(1);
    expect(validate.stdout + validate.stderr).toContain(
      "variants[1].host (credentials): the codex host has no credentials: set OPENAI_API_KEY or CODEX_API_KEY",
    );
    expect(validate.stdout + validate.stderr).toContain("(needed by variant codex)");
    expect(validate.stdout + validate.stderr).not.toContain("claude-code host has no credentials");
    const out = join(base, "refused");
    const run = await runHarness(["compare", "run", manifest, "--out", out], process.cwd(), env);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("the codex host cannot start here");
    expect(run.stderr).toContain("(needed by variant codex)");
    expect(existsSync(out)).toBe(false);
  });
});

const ANTHROPIC_KEY = "sk-ant-loopback-fake-key-models-0123456789";
const OPENAI_KEY = "loopback-key-models-7d2e";
const claudeBinary = claudeCodeBinary();
const codexBinary = locateCodexBinary();
const runReal =
  realClientAvailable("the Claude Code native binary", claudeBinary !== null) &&
  realClientAvailable(
    `the Codex binary (${codexBinary.ok ? "" : codexBinary.error})`,
    codexBinary.ok,
  );

const HARNESS = `
component greet-loop {
  kind workflow
  description "Read the file, change it, run the check."
  input { task repository }
  output { patch }
  permissions { workspace read workspace write process allow network deny }
}

binding greet-loop for claude-code { mechanism prompt-preamble strength advisory }
binding greet-loop for codex { mechanism prompt-preamble strength advisory }

plugin greet-kit {
  version "1.0.0"
  provides [ component.greet-loop ]
}

composition greet-claude {
  target claude-code
  include [ plugin.greet-kit@^1 ]
}

composition greet-codex {
  target codex
  include [ plugin.greet-kit@^1 ]
}
`;

/** Three reads of the file, then a final answer: four model turns when nothing stops it. */
const CLAUDE_SCRIPT: AnthropicScriptTurn[] = [
  ...[1, 2, 3].map(
    (): AnthropicScriptTurn => ({
      content: [{ type: "tool_use", name: "Read", input: { file_path: "greeting.txt" } }],
    }),
  ),
  { content: [{ type: "text", text: "greeting.txt says hello." }] },
];

let base: string;
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "hl-variant-runtimes-")));
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

describe.skipIf(!runReal)("variants on their own host and model (real clients, offline)", () => {
  it("sends each variant's model to its server, stops each host at the variant's turn limit, and gives one verdict", async () => {
    const dir = join(base, "experiment");
    await mkdir(join(dir, "fixture"), { recursive: true });
    await writeFile(join(dir, "fixture", "greeting.txt"), "hello\n");
    await writeFile(join(dir, "prompt.md"), "Tell me what greeting.txt says.\n");
    await writeFile(join(dir, "greet.harness"), HARNESS);
    const manifest = {
      schemaVersion: "harness-compare.v2",
      harness: "./greet.harness",
      tasks: [
        {
          id: "greet",
          fixture: "./fixture",
          prompt: "./prompt.md",
          expectedFiles: [],
          graders: [{ kind: "scope", mode: "subset" }],
        },
      ],
      matrix: {
        setup: [
          { id: "sonnet", model: "claude-sonnet-4-5", maxTurns: 2, composition: "greet-claude" },
          { id: "haiku", model: "claude-haiku-4-5", maxTurns: 8, composition: "greet-claude" },
          { id: "codex", host: "codex", model: "gpt-5.5", composition: "greet-codex" },
        ],
      },
      baseline: "sonnet",
      // A safety bound only, for a loaded machine.
      runtime: claudeCodeRuntime({
        maxTurns: 20,
        timeoutMs: 150_000,
        validationCommands: [["cat", "greeting.txt"]],
      }),
      trials: { count: 1, seed: 7, order: "sequential" },
      verdict: { policy: "paired-v1", minTrials: 1 },
    };
    const manifestPath = join(dir, "experiment.json");
    await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    const loaded = await loadManifest(manifestPath, { loadCatalog: loadHarnessCatalog });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));

    const anthropic = {
      sonnet: await startAnthropicLoopback({ apiKey: ANTHROPIC_KEY, script: CLAUDE_SCRIPT }),
      haiku: await startAnthropicLoopback({ apiKey: ANTHROPIC_KEY, script: CLAUDE_SCRIPT }),
    };
    const responses = await startResponsesLoopback({
      apiKey: OPENAI_KEY,
      script: [
        { output: [execCommand("cat greeting.txt")] },
        { output: [{ type: "message", text: "greeting.txt says hello." }] },
      ],
    });
    const asked: HostId[] = [];
    const executorFor = (host: HostId): Executor => {
      asked.push(host);
      if (host === "codex")
        return new CodexExecutor({
          env: { PATH: process.env.PATH ?? "" },
          endpoint: { baseUrl: responses.url, apiKey: OPENAI_KEY },
        });
      if (host !== "claude-code") throw new Error(`no ${host} variant here`);
      // Each Claude variant has its own server, so each one's requests can be told apart.
      return {
        host: "claude-code",
        run: (input) =>
          new ClaudeCodeExecutor({
            env: {
              PATH: process.env.PATH ?? "",
              ANTHROPIC_BASE_URL: anthropic[input.variant as keyof typeof anthropic].url,
              ANTHROPIC_API_KEY: ANTHROPIC_KEY,
            },
            maxRetries: 0,
          }).run(input),
      };
    };
    const outDir = join(dir, "out");
    try {
      await runExperiment(loaded.experiment, {
        outDir,
        manifestDocument: loaded.manifest,
        manifestHash: loaded.manifestHash,
        executorFor,
        tempParent: base,
        env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY },
      });
    } finally {
      await anthropic.sonnet.close();
      await anthropic.haiku.close();
      await responses.close();
    }

    // One executor per host, asked for once each.
    expect(asked.sort()).toEqual(["claude-code", "codex"]);
    const turns = (requests: { kind: string; model: string | null }[]) =>
      requests.filter((r) => r.kind === "turn");
    // Each server heard only its variant's model.
    const sonnetTurns = turns(anthropic.sonnet.requests);
    const haikuTurns = turns(anthropic.haiku.requests);
    const codexTurns = turns(responses.requests);
    expect(new Set(sonnetTurns.map((r) => r.model))).toEqual(new Set(["claude-sonnet-4-5"]));
    expect(new Set(haikuTurns.map((r) => r.model))).toEqual(new Set(["claude-haiku-4-5"]));
    expect(new Set(codexTurns.map((r) => r.model))).toEqual(new Set(["gpt-5.5"]));
    // Claude Code stopped the two-turn variant after its second turn; the other ran its script out.
    expect(sonnetTurns).toHaveLength(2);
    expect(haikuTurns).toHaveLength(4);
    expect(codexTurns).toHaveLength(2);

    const receipt = async (variant: string) =>
      runtimeReceiptSchema.parse(
        JSON.parse(
          await readFile(
            join(outDir, variant, "greet", "trial-001", "runtime-receipt.json"),
            "utf8",
          ),
        ),
      );
    const [sonnet, haiku, codex] = await Promise.all(["sonnet", "haiku", "codex"].map(receipt));
    expect(sonnet?.settings.maxTurns).toBe(2);
    expect(sonnet?.model.requested).toBe("claude-sonnet-4-5");
    expect(sonnet?.status, sonnet?.error ?? "").toBe("limit_reached");
    expect(haiku?.settings.maxTurns).toBe(8);
    expect(haiku?.status, haiku?.error ?? "").toBe("completed");
    expect(codex?.executor.host).toBe("codex");
    expect(codex?.settings.maxTurns).toBe(20);
    expect(codex?.status, codex?.error ?? "").toBe("completed");

    const verdict = JSON.parse(await readFile(join(outDir, "verdict.json"), "utf8"));
    expect(
      verdict.variants.map((v: { id: string; host: string; model: string; maxTurns: number }) => [
        v.id,
        v.host,
        v.model,
        v.maxTurns,
      ]),
    ).toEqual([
      ["sonnet", "claude-code", "claude-sonnet-4-5", 2],
      ["haiku", "claude-code", "claude-haiku-4-5", 8],
      ["codex", "codex", "gpt-5.5", 20],
    ]);
    expect(
      verdict.statistics.comparisons.map((c: { variant: string }) => c.variant).sort(),
    ).toEqual(["codex", "haiku"]);
    // Claude Code reports USD; Codex reports tokens only, and gpt-5.5 has no list price here, so
    // its cost is said to be not comparable rather than guessed.
    const trialOf = (variant: string) =>
      verdict.trials.find((t: { variant: string }) => t.variant === variant);
    expect(trialOf("haiku").costUsd).toBeGreaterThan(0);
    expect(trialOf("codex").costUsd).toBeNull();
    expect(trialOf("codex").costEquivalentTokens).toBeGreaterThan(0);
    const codexComparison = verdict.statistics.comparisons.find(
      (c: { variant: string }) => c.variant === "codex",
    );
    expect(codexComparison.costChecks.map((c: { currency: string }) => c.currency)).toEqual([
      "usd",
      "credits",
    ]);
    const report = await readFile(join(outDir, "verdict.md"), "utf8");
    expect(report).toContain("Hosts `claude-code`, `codex`");
    expect(report).toMatch(/\| codex \| codex · gpt-5\.5 \|/);
    expect(report).toContain("unbudgeted: its host reports no USD");
  }, 600_000);
});
