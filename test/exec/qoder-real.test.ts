// The real Qoder client (@qoder-ai/qoder-agent-sdk with @qoder-ai/qodercli's bundle as a child
// process) without credentials. Qoder accepts no local model endpoint, so there is no offline
// session to play: these tests prove that every way of running without a usable credential ends
// quickly as an infrastructure error, never as the agent's failure. Runs that start the CLI get a
// proxy on a closed loopback port and QODER_HTTPDNS=0, so even on a machine with network their
// requests die at 127.0.0.1; system DNS lookups are the only other traffic (measured with strace
// in a loopback-only network namespace: the missing-login run attempts no connection at all).
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
  trialMetricsSchema,
} from "../../src/compare/index.js";
import { QoderExecutor, type QoderExecutorOptions } from "../../src/exec/qoder/index.js";
import { type RuntimeReceipt, runtimeReceiptSchema } from "../../src/exec/receipt.js";
import type { ExecutorRunInput } from "../../src/exec/types.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { createUnsandboxed } from "../../src/sandbox/index.js";

function installedCli(): string | null {
  try {
    createRequire(import.meta.url).resolve("@qoder-ai/qoder-agent-sdk");
    return createRequire(import.meta.url).resolve("@qoder-ai/qodercli/bundle/qodercli.js");
  } catch {
    return null;
  }
}

const cli = installedCli();
if (cli === null) {
  if (process.env.CI) {
    throw new Error("@qoder-ai/qoder-agent-sdk and @qoder-ai/qodercli must be installed in CI");
  }
  console.log(
    "skipped: real Qoder client tests (@qoder-ai/qoder-agent-sdk or @qoder-ai/qodercli is not installed)",
  );
}
const describeReal = cli === null ? describe.skip : describe;

/** Only what a Node CLI needs to start; no credential of the machine running the tests. */
const BARE_ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
/**
 * Keeps the CLI's traffic on this machine: names through the system resolver instead of HTTPDNS,
 * and every request through a proxy on a loopback port nothing listens on.
 */
async function offline(): Promise<Pick<QoderExecutorOptions, "extraEnv" | "proxy">> {
  return { extraEnv: { QODER_HTTPDNS: "0" }, proxy: `http://127.0.0.1:${await closedPort()}` };
}
const FAKE_TOKEN = "pat_fake_qoder_token_for_offline_tests_7d1e";
const RUN_TIMEOUT_MS = 25_000;
const TEST_TIMEOUT_MS = 30_000;

/** The SDK hands the credential over in `<tmp>/qoder-sdk-auth-*`; it deletes the file, not the directory. */
async function sdkAuthDirs(): Promise<Set<string>> {
  return new Set((await readdir(tmpdir())).filter((name) => name.startsWith("qoder-sdk-auth-")));
}

let base: string;
let authDirsBefore: Set<string>;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-qoder-real-"));
  authDirsBefore = await sdkAuthDirs();
});
afterAll(async () => {
  await rm(base, { recursive: true, force: true });
  for (const name of await sdkAuthDirs()) {
    // rmdir removes only empty directories: a left-over credential file would stay and be seen.
    if (!authDirsBefore.has(name)) await rmdir(join(tmpdir(), name)).catch(() => {});
  }
});

let trialCounter = 0;
async function run(options: QoderExecutorOptions): Promise<RuntimeReceipt> {
  const dir = join(base, `trial-${++trialCounter}`);
  const root = join(dir, "root");
  const scratch = join(dir, "scratch");
  await mkdir(root, { recursive: true });
  await mkdir(scratch);
  await writeFile(join(root, "notes.md"), "# notes\n");
  const tools = ["Read", "Write", "Edit", "Bash"];
  const input: ExecutorRunInput = {
    prompt: "Add a line to notes.md.",
    preamble: "",
    cwd: root,
    policy: createToolPolicy({
      trialRoot: root,
      allowedWrites: ["notes.md"],
      allowedCommands: [],
      tools,
    }),
    timeoutMs: RUN_TIMEOUT_MS,
    scratchDir: scratch,
    // Qoder runs only without the OS sandbox (it refuses one; see QODER_NOT_CONTAINABLE).
    sandbox: createUnsandboxed(),
    runtime: {
      tools,
      allowedTools: [],
      disallowedTools: ["WebFetch", "WebSearch"],
      permissionMode: "default",
      maxTurns: 4,
      profile: "qoder-minimal-v1",
    },
    trialIndex: 1,
    variant: "v",
    task: "t",
  };
  return runtimeReceiptSchema.parse(await new QoderExecutor(options).run(input));
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

describeReal("the real Qoder client without credentials", () => {
  it("ends as auth_missing before starting anything when no credential is configured", async () => {
    const receipt = await run({ env: BARE_ENV });
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
    expect(receipt.error).toMatch(/QODER_PERSONAL_ACCESS_TOKEN/);
    expect(receipt.trace.some((e) => e.type === "harness_options")).toBe(false);
  });

  it("ends as auth_missing when the personal access token variable is not set", async () => {
    const receipt = await run({ env: BARE_ENV, auth: "personal-access-token" });
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "auth_missing" });
    expect(receipt.error).toContain("QODER_PERSONAL_ACCESS_TOKEN is not set");
  });

  it(
    "ends as auth_missing when the CLI finds no qodercli login in the isolated home",
    async () => {
      const receipt = await run({ env: BARE_ENV, auth: "qodercli-login", ...(await offline()) });
      expect(receipt).toMatchObject({
        status: "infra_error",
        infraReason: "auth_missing",
        error: expect.stringContaining("No qodercli login found"),
        executor: { agentVersion: expect.stringMatching(/^\d+\.\d+\.\d+/) },
      });
      // The CLI really ran: its options went out, and it answered with an error result.
      expect(receipt.trace.map((e) => e.type)).toEqual(
        expect.arrayContaining(["harness_options", "result:error_during_execution"]),
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "ends as network_unreachable with a fake token and no way out, and never records the token",
    async () => {
      const receipt = await run({
        env: { ...BARE_ENV, QODER_PERSONAL_ACCESS_TOKEN: FAKE_TOKEN },
        ...(await offline()),
      });
      expect(receipt).toMatchObject({ status: "infra_error", infraReason: "network_unreachable" });
      expect(receipt.error).toMatch(/Network attempt failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/);
      expect(JSON.stringify(receipt)).not.toContain(FAKE_TOKEN);
    },
    TEST_TIMEOUT_MS,
  );
});

const HARNESS = `
component notes-loop {
  kind workflow
  description "Read notes.md and add the line the task asks for."
  permissions { workspace read workspace write network deny }
}
component notes-only {
  kind policy
  description "Only change notes.md."
  permissions { workspace write network deny }
}
binding notes-loop for qoder { mechanism prompt-preamble strength advisory }
binding notes-only for qoder { mechanism permission-callback strength enforced }
plugin notes-kit { version "1.0.0" provides [ component.notes-loop, component.notes-only ] }
composition plain {
  target qoder
  include [ plugin.notes-kit@^1 ]
  require notes-loop { minimum advisory }
}
composition scoped {
  target qoder
  include [ plugin.notes-kit@^1 ]
  require notes-loop { minimum advisory }
  require notes-only { preferred enforced minimum advisory }
}
`;

describeReal("a whole experiment on the real Qoder client without a login", () => {
  it(
    "records every trial as an infrastructure error (auth_missing), separately from the agent's outcome",
    async () => {
      const dir = join(base, "experiment");
      const fixture = join(dir, "fixture");
      await mkdir(fixture, { recursive: true });
      await writeFile(join(fixture, "notes.md"), "# notes\n");
      await writeFile(join(dir, "prompt.md"), "Add the line `done` to notes.md.\n");
      await writeFile(join(dir, "notes.harness"), HARNESS);
      const manifest = {
        schemaVersion: "harness-compare.v2",
        harness: "./notes.harness",
        tasks: [
          {
            id: "notes",
            fixture: "./fixture",
            prompt: "./prompt.md",
            expectedFiles: ["notes.md"],
            graders: [{ kind: "scope", mode: "subset" }],
          },
        ],
        variants: [
          { id: "plain", composition: "plain" },
          { id: "scoped", composition: "scoped", runtimeProfile: "qoder-minimal-v1" },
        ],
        baseline: "plain",
        runtime: {
          host: "qoder",
          model: "performance",
          tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
          allowedTools: [],
          disallowedTools: ["WebFetch", "WebSearch", "Task"],
          permissionMode: "default",
          maxTurns: 4,
          timeoutMs: RUN_TIMEOUT_MS,
          network: "deny",
          validationCommands: [["git", "status", "--short"]],
        },
        trials: { count: 1, seed: 11, order: "sequential" },
        verdict: { policy: "heuristic-v1" },
        concurrency: 2,
      };
      const manifestPath = join(dir, "experiment.json");
      await writeFile(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
      const loaded = await loadManifest(manifestPath, { loadCatalog: loadHarnessCatalog });
      if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));

      const outDir = join(dir, "out");
      const quiet = await offline();
      const { verdict } = await runExperiment(loaded.experiment, {
        outDir,
        manifestDocument: loaded.manifest,
        manifestHash: loaded.manifestHash,
        executorFor: () => new QoderExecutor({ env: BARE_ENV, auth: "qodercli-login", ...quiet }),
        tempParent: base,
        env: BARE_ENV,
        // The qoder host cannot run contained (QODER_NOT_CONTAINABLE).
        unsafeNoSandbox: true,
      });
      expect(verdict).toBeDefined();
      for (const variant of ["plain", "scoped"]) {
        const trialDir = join(outDir, variant, "notes", "trial-001");
        const metrics = trialMetricsSchema.parse(
          JSON.parse(await readFile(join(trialDir, "metrics.json"), "utf8")),
        );
        expect(metrics).toMatchObject({
          outcome: "infrastructure_error",
          infraReason: "auth_missing",
        });
        const receipt = runtimeReceiptSchema.parse(
          JSON.parse(await readFile(join(trialDir, "runtime-receipt.json"), "utf8")),
        );
        expect(receipt.executor).toMatchObject({
          host: "qoder",
          package: "@qoder-ai/qoder-agent-sdk",
        });
        expect(receipt.settings.tools).toEqual(
          variant === "scoped"
            ? ["Read", "Write", "Edit", "Bash"]
            : ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
        );
        expect(await readdir(trialDir)).toContain("permission-decisions.json");
      }
    },
    TEST_TIMEOUT_MS * 2,
  );
});
