// The real Pi SDK (in-process) against the loopback Anthropic server: an answer-only run with a
// fake key, offline. Pi runs inside the test process, so the harness's own process.env is
// seeded with decoy credentials to prove the executor never lets Pi read them.
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAnthropicLoopback } from "../../src/exec/loopback/index.js";
import { PiExecutor } from "../../src/exec/pi/index.js";
import { runtimeReceiptSchema } from "../../src/exec/receipt.js";
import type { SetupComponent } from "../../src/exec/setup/contract.js";
import type { ExecutorRunInput } from "../../src/exec/types.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { IN_CI, packageInstalled, realClientAvailable } from "../support/anthropic-real-clients.js";
import { testSandbox } from "../support/sandbox.js";

const KEY = "sk-ant-pi-loopback-key-0123456789";
const DECOYS = {
  ANTHROPIC_API_KEY: "decoy-harness-api-key-0123456789",
  ANTHROPIC_AUTH_TOKEN: "decoy-harness-auth-token-0123456789",
};
const installed = packageInstalled("@mariozechner/pi-coding-agent");
const run = realClientAvailable("@mariozechner/pi-coding-agent", installed);

let base: string;
const saved: Record<string, string | undefined> = {};
beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "hl-pi-real-")));
  for (const [name, value] of Object.entries(DECOYS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await rm(base, { recursive: true, force: true });
});

let counter = 0;
async function trial(): Promise<ExecutorRunInput> {
  counter += 1;
  const root = join(base, `t${counter}`, "root");
  const scratchDir = join(base, `t${counter}`, "scratch");
  await mkdir(root, { recursive: true });
  await mkdir(scratchDir);
  return {
    sandbox: await testSandbox(),
    prompt: "What is 6 * 7? Answer with the number.",
    preamble: "",
    cwd: root,
    policy: createToolPolicy({
      trialRoot: root,
      allowedWrites: [],
      allowedCommands: [],
      tools: [],
    }),
    timeoutMs: 30_000,
    scratchDir,
    runtime: { model: "claude-sonnet-4-5", tools: [], allowedTools: [], disallowedTools: [] },
    trialIndex: 1,
    variant: "pi",
    task: "arithmetic",
  };
}

describe.skipIf(!run)("the real Pi SDK against the loopback server (offline)", () => {
  it.runIf(IN_CI)("has the Pi SDK installed in CI", () => {
    expect(installed).toBe(true);
  });

  it("completes an answer with usage, sending only the executor's key", async () => {
    const server = await startAnthropicLoopback({
      apiKey: KEY,
      script: [
        { content: [{ type: "text", text: "42" }], usage: { input_tokens: 31, output_tokens: 2 } },
      ],
    });
    try {
      const receipt = await new PiExecutor({
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
      }).run(await trial());
      expect(runtimeReceiptSchema.parse(receipt)).toBeTruthy();
      expect(receipt).toMatchObject({
        executor: { host: "pi", packageVersion: expect.stringMatching(/^\d+\.\d+\.\d+/) },
        status: "completed",
        finalText: "42",
        turns: 1,
        toolCalls: 0,
        tokens: { uncachedInput: 31, cacheRead: 30, cacheWrite: 10, output: 2 },
        model: { effective: ["claude-sonnet-4-5"] },
      });
      expect(receipt.sessionId).not.toBeNull();
      // Pi's client would add the harness's ANTHROPIC_AUTH_TOKEN as a bearer header by itself.
      expect(
        server.requests.map((r) => [r.kind, r.status, r.credentialHeaders, r.toolNames]),
      ).toEqual([["turn", 200, ["x-api-key"], []]]);
      expect(JSON.stringify(receipt)).not.toContain(KEY);
    } finally {
      await server.close();
    }
  });

  it("reports no key as infra_error/auth_missing although the harness's environment has one", async () => {
    const receipt = await new PiExecutor({ env: {} }).run(await trial());
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
  });

  it("reports a closed local port as infra_error/network_unreachable", async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
      });
    });
    const receipt = await new PiExecutor({
      env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` },
    }).run(await trial());
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "network_unreachable" });
  });
});

describe.skipIf(!run)("the real Pi SDK given a variant's setup (offline)", () => {
  const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;
  async function withSetup(kind: "instructions" | "skill") {
    const input = await trial();
    const dir = join(input.scratchDir, "..", "setup", "rules");
    await mkdir(dir, { recursive: true });
    const text = "Answer with digits only, never words.\n";
    const file = join(dir, kind === "skill" ? "SKILL.md" : "RULES.md");
    await writeFile(file, text, { mode: 0o444 });
    const files = [{ path: kind === "skill" ? "SKILL.md" : "RULES.md", sha256: sha256(text) }];
    const setup: SetupComponent[] = [
      kind === "instructions"
        ? {
            id: "rules",
            kind: "instructions",
            mechanism: "system-instruction",
            strength: "wired",
            onDegrade: "fail",
            source: { path: file, type: "file", files },
          }
        : {
            id: "rules",
            kind: "skill",
            mechanism: "native-skill",
            strength: "wired",
            onDegrade: "fail",
            source: { path: dir, type: "directory", files },
          },
    ];
    return { ...input, setup };
  }

  it("appends instructions to the system prompt the model gets, loaded by what Pi's session built", async () => {
    const server = await startAnthropicLoopback({
      apiKey: KEY,
      script: [{ content: [{ type: "text", text: "42" }] }],
    });
    try {
      const receipt = await new PiExecutor({
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
      }).run(await withSetup("instructions"));
      expect(receipt.status, receipt.error ?? "").toBe("completed");
      expect(receipt.setup).toEqual([
        { component: "rules", mechanism: "system-instruction", status: "loaded" },
      ]);
      expect(server.requests[0]?.system).toContain("Answer with digits only, never words.");
      expect(server.requests[0]?.system).toMatch(/harnesslab-instructions-rules-[0-9a-f]{16}/);
    } finally {
      await server.close();
    }
  });

  it("cannot hand an answer-only Pi a skill: the trial is setup_failed before the model is asked (on-degrade fail)", async () => {
    const server = await startAnthropicLoopback({
      apiKey: KEY,
      script: [{ content: [{ type: "text", text: "42" }] }],
    });
    try {
      const receipt = await new PiExecutor({
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
      }).run(await withSetup("skill"));
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: "setup_failed" });
      expect(receipt.error).toMatch(/rules \(native-skill\): Pi runs answer-only/);
      expect(server.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
