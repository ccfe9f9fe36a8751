// A queued run whose variants run on different hosts: a worker that cannot start one of them
// hands that host's trial back, naming the host, and stops; a worker that can runs the rest. The
// Claude Code variant runs the real Claude Code client against a loopback model server, the
// other variant a scripted agent, all through the CLI as a user starts them. Nothing leaves
// 127.0.0.1.
import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VerdictDocument } from "../../src/artifacts/index.js";
import { type AnthropicLoopback, startAnthropicLoopback } from "../../src/exec/loopback/index.js";
import {
  claudeCodeBinary,
  claudeCodeRuntime,
  realClientAvailable,
} from "../support/anthropic-real-clients.js";
import { type SpawnedHarness, spawnHarness } from "../support/cli.js";
import { type RedisServer, redisSkipReason, startRedis } from "../support/redis.js";

const KEY = "sk-ant-loopback-fake-key-queue-hosts-0123";
const redisSkip = redisSkipReason();
if (redisSkip !== undefined) console.log(redisSkip);
const runs =
  redisSkip === undefined &&
  realClientAvailable("the Claude Code native binary", claudeCodeBinary() !== null);

const HARNESS = `
component greet-loop {
  kind workflow
  description "Read the file and say what it says."
  input { task repository }
  output { patch }
  permissions { workspace read network deny }
}

binding greet-loop for claude-code { mechanism prompt-preamble strength advisory }
binding greet-loop for scripted { mechanism prompt-preamble strength advisory }

plugin greet-kit {
  version "1.0.0"
  provides [ component.greet-loop ]
}

composition greet-claude {
  target claude-code
  include [ plugin.greet-kit@^1 ]
}

composition greet-scripted {
  target scripted
  include [ plugin.greet-kit@^1 ]
}
`;

let base: string;
let redis: RedisServer;
let loop: AnthropicLoopback;
const children = new Set<ChildProcess>();

function cli(args: string[], env: Record<string, string>): SpawnedHarness {
  const spawned = spawnHarness(args, { TMPDIR: base, ...env });
  children.add(spawned.child);
  void spawned.exited.then(() => children.delete(spawned.child));
  return spawned;
}

describe.skipIf(!runs)("a queued run with variants on two hosts", () => {
  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "hl-queue-hosts-")));
    redis = await startRedis();
    loop = await startAnthropicLoopback({
      apiKey: KEY,
      script: [{ content: [{ type: "text", text: "greeting.txt says hello." }] }],
    });
  }, 60_000);

  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await loop?.close();
    await redis?.stop();
    await rm(base, { recursive: true, force: true });
  });

  it("a worker without the Claude Code credentials hands that host's trial back and says so; one with them finishes the run", async () => {
    const dir = join(base, "experiment");
    await mkdir(join(dir, "fixture"), { recursive: true });
    await writeFile(join(dir, "fixture", "greeting.txt"), "hello\n");
    await writeFile(join(dir, "prompt.md"), "Tell me what greeting.txt says.\n");
    await writeFile(join(dir, "greet.harness"), HARNESS);
    const manifestPath = join(dir, "experiment.json");
    await writeFile(
      manifestPath,
      JSON.stringify({
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
        variants: [
          { id: "scripted", host: "scripted", composition: "greet-scripted", agent: "nop" },
          { id: "claude", composition: "greet-claude" },
        ],
        baseline: "scripted",
        // A safety bound only, for a loaded machine.
        runtime: claudeCodeRuntime({ timeoutMs: 150_000 }),
        trials: { count: 2, seed: 3, order: "sequential" },
        verdict: { policy: "heuristic-v1" },
      }),
    );
    const endpoint = { ANTHROPIC_BASE_URL: loop.url };
    const out = join(dir, "out");
    const run = cli(["compare", "run", manifestPath, "--out", out, "--queue", redis.url], {
      ...endpoint,
      ANTHROPIC_API_KEY: KEY,
    });

    // Without the key it may run scripted trials, but the first Claude Code trial goes back.
    const lacking = cli(
      ["worker", "--queue", redis.url, "--name", "no-claude", "--lock-ms", "1000"],
      { ...endpoint, ANTHROPIC_API_KEY: "" },
    );
    expect(await lacking.exited).toBe(1);
    expect(lacking.output()).toMatch(
      /worker no-claude cannot run the trials of run \S+: the claude-code host cannot start here: runtime\.host \(credentials\): the claude-code host has no credentials: .* \(needed by variant claude\); fix this machine and start the worker again/,
    );
    expect(loop.requests.filter((r) => r.kind === "turn")).toHaveLength(0);

    const able = cli(["worker", "--queue", redis.url, "--name", "able", "--lock-ms", "1000"], {
      ...endpoint,
      ANTHROPIC_API_KEY: KEY,
    });
    const code = await run.exited;
    expect(code, run.output()).not.toBeNull();
    expect([0, 1]).toContain(code);
    able.child.kill("SIGTERM");
    expect(await able.exited).toBe(0);

    const verdict = JSON.parse(
      await readFile(join(out, "verdict.json"), "utf8"),
    ) as VerdictDocument;
    expect(verdict.variants.map((v) => [v.id, v.host])).toEqual([
      ["scripted", "scripted"],
      ["claude", "claude-code"],
    ]);
    expect(verdict.trials.map((t) => [t.variant, t.outcome]).sort()).toEqual([
      ["claude", "passed"],
      ["claude", "passed"],
      ["scripted", "passed"],
      ["scripted", "passed"],
    ]);
    // Both Claude Code trials reached the model server, with the experiment's model.
    const turns = loop.requests.filter((r) => r.kind === "turn");
    expect(turns.length).toBeGreaterThanOrEqual(2);
    expect(new Set(turns.map((r) => r.model))).toEqual(new Set(["claude-sonnet-4-5"]));
  }, 300_000);
});
