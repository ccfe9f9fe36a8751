// `npm run smoke:native -- --host <claude-code|codex|qoder|pi> [--trials n] [--out dir] [--model m]`
//
// Runs the shipped fix-the-bug example against the real agent service when credentials for the
// host exist, and prints `skipped: no credentials for <host>` (exit 0) otherwise. Not part of CI:
// it spends real tokens. Claude Code runs examples/fix-the-bug/experiment.claude.json as shipped;
// the other hosts get a copy of the example with compositions for their host written next to it.
//
// Credentials, per host (read from this process's environment; each executor passes on only
// what it needs):
// - claude-code: ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN
// - codex: OPENAI_API_KEY or CODEX_API_KEY, or a `codex login` (its auth.json is copied in)
// - qoder: QODER_PERSONAL_ACCESS_TOKEN or QODER_SERVICE_ACCOUNT_KEY, or a `qodercli login`
//   (the run reuses the qodercli config directory, ~/.qoder or $QODER_CONFIG_DIR)
// - pi: ANTHROPIC_API_KEY (Pi runs answer-only: it cannot edit files, so its trial fails the task)
import { existsSync, readdirSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  loadHarnessCatalog,
  loadManifest,
  runExperiment,
  trialArtifactDir,
} from "../src/compare/index.js";
import { CodexExecutor } from "../src/exec/codex/index.js";
import {
  createExecutor,
  type Executor,
  type HostId,
  runtimeReceiptSchema,
} from "../src/exec/index.js";
import { QoderExecutor } from "../src/exec/qoder/index.js";
import { runCommand } from "../src/shared/process.js";

const REAL_HOSTS = ["claude-code", "codex", "qoder", "pi"] as const;
type RealHost = (typeof REAL_HOSTS)[number];

const EXAMPLE_DIR = resolve(import.meta.dirname, "..", "examples", "fix-the-bug");

/** Models used when `--model` is not given (Claude Code's comes from its shipped manifest). */
const DEFAULT_MODELS: Record<Exclude<RealHost, "claude-code">, string> = {
  codex: "gpt-5.5",
  qoder: "performance",
  pi: "claude-sonnet-4-5",
};

function usage(message: string): never {
  process.stderr.write(
    `smoke-native: ${message}\nusage: npm run smoke:native -- --host <${REAL_HOSTS.join("|")}> [--trials n] [--out dir] [--model name]\n`,
  );
  process.exit(2);
}

const { values } = parseArgs({
  options: {
    host: { type: "string" },
    trials: { type: "string", default: "1" },
    out: { type: "string" },
    model: { type: "string" },
  },
  strict: true,
});
const host = values.host as RealHost | undefined;
if (host === undefined || !(REAL_HOSTS as readonly string[]).includes(host)) {
  usage(`--host must be one of ${REAL_HOSTS.join(", ")}`);
}
const trials = Number(values.trials);
if (!Number.isInteger(trials) || trials < 1 || trials > 5) usage("--trials must be 1..5");

const has = (name: string) => (process.env[name] ?? "").trim() !== "";

/** A directory that holds more than the logs every qodercli start writes. */
function qodercliLoginDir(): string | null {
  const dir = process.env.QODER_CONFIG_DIR ?? join(homedir(), ".qoder");
  if (!existsSync(dir)) return null;
  return readdirSync(dir).some((entry) => entry !== "logs") ? dir : null;
}

async function codexLoginDir(): Promise<string | null> {
  const codexHome = process.env.CODEX_HOME ?? join(homedir(), ".codex");
  if (!existsSync(join(codexHome, "auth.json"))) return null;
  const { locateCodexBinary } = await import("../src/exec/codex/binary.js");
  const binary = locateCodexBinary();
  if (!binary.ok) return null;
  const status = await runCommand([binary.path, "login", "status"], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? "", HOME: homedir(), CODEX_HOME: codexHome },
    timeoutMs: 15_000,
  });
  return status.exitCode === 0 ? codexHome : null;
}

/**
 * The executor to use, or null when there are no credentials for the host. `guessed` marks a
 * login found only by its directory: whether it is a real login shows when the CLI runs.
 */
async function executorFor(
  target: RealHost,
): Promise<{ executor: Executor; guessed: boolean } | null> {
  const found = await credentialedExecutor(target);
  if (found === null) return null;
  return found instanceof QoderExecutor &&
    !has("QODER_PERSONAL_ACCESS_TOKEN") &&
    !has("QODER_SERVICE_ACCOUNT_KEY")
    ? { executor: found, guessed: true }
    : { executor: found, guessed: false };
}

async function credentialedExecutor(target: RealHost): Promise<Executor | null> {
  switch (target) {
    case "claude-code":
      return has("ANTHROPIC_API_KEY") ||
        has("ANTHROPIC_AUTH_TOKEN") ||
        has("CLAUDE_CODE_OAUTH_TOKEN")
        ? createExecutor("claude-code")
        : null;
    case "pi":
      return has("ANTHROPIC_API_KEY") ? createExecutor("pi") : null;
    case "codex": {
      if (has("OPENAI_API_KEY") || has("CODEX_API_KEY")) return createExecutor("codex");
      const loginFrom = await codexLoginDir();
      return loginFrom === null ? null : new CodexExecutor({ loginFrom });
    }
    case "qoder": {
      if (has("QODER_PERSONAL_ACCESS_TOKEN") || has("QODER_SERVICE_ACCOUNT_KEY")) {
        return createExecutor("qoder");
      }
      const configDir = qodercliLoginDir();
      return configDir === null
        ? null
        : new QoderExecutor({ auth: "qodercli-login", qodercliConfigDir: configDir });
    }
  }
}

/** Bindings and compositions of the example for a host the shipped .harness file does not target. */
function hostHarness(target: RealHost): string {
  return `// Written by scripts/smoke-native.ts: the fix-the-bug compositions for ${target}.
binding coding-loop for ${target} { mechanism prompt-preamble strength advisory }
binding verify-before-finishing for ${target} { mechanism prompt-preamble strength advisory }
binding fix-code-not-tests for ${target} { mechanism permission-callback strength enforced }
composition baseline-${target} extends baseline { target ${target} }
composition verified-${target} extends verified { target ${target} }
`;
}

/** The manifest to run: the shipped one for Claude Code, a copy of the example for the others. */
async function prepareManifest(target: RealHost, workDir: string): Promise<string> {
  if (target === "claude-code" && values.model === undefined) {
    return join(EXAMPLE_DIR, "experiment.claude.json");
  }
  const dir = join(workDir, "example");
  await cp(EXAMPLE_DIR, dir, { recursive: true });
  const shipped = JSON.parse(await readFile(join(EXAMPLE_DIR, "experiment.claude.json"), "utf8"));
  const harness = ["./fix-the-bug.harness"];
  if (target !== "claude-code") {
    await writeFile(join(dir, "hosts.harness"), hostHarness(target));
    harness.push("./hosts.harness");
  }
  const manifest = {
    ...shipped,
    harness,
    variants: [
      { id: "baseline", composition: `baseline-${target === "claude-code" ? "claude" : target}` },
      { id: "verified", composition: `verified-${target === "claude-code" ? "claude" : target}` },
    ],
    runtime: {
      ...shipped.runtime,
      host: target,
      model:
        values.model ?? (target === "claude-code" ? shipped.runtime.model : DEFAULT_MODELS[target]),
    },
  };
  const path = join(dir, `experiment.${target}.json`);
  await writeFile(path, `${JSON.stringify(manifest, null, 2)}\n`);
  return path;
}

async function main(target: RealHost): Promise<number> {
  const found = await executorFor(target);
  if (found === null) {
    process.stdout.write(`skipped: no credentials for ${target}\n`);
    return 0;
  }
  const { executor, guessed } = found;
  const workDir = await mkdtemp(join(tmpdir(), `harnesslab-smoke-${target}-`));
  const manifestPath = await prepareManifest(target, workDir);
  const outDir = values.out === undefined ? join(workDir, "out") : resolve(values.out);
  await mkdir(join(outDir, ".."), { recursive: true });

  const loaded = await loadManifest(manifestPath, {
    trialsOverride: trials,
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok) {
    process.stderr.write(
      `smoke-native: ${manifestPath}: ${JSON.stringify(loaded.problems, null, 2)}\n`,
    );
    return 1;
  }
  process.stdout.write(
    `smoke: ${target}, ${trials} trial(s) per variant, manifest ${manifestPath}\n`,
  );
  const { verdict } = await runExperiment(loaded.experiment, {
    outDir,
    manifestDocument: loaded.manifest,
    manifestHash: loaded.manifestHash,
    executorFor: (_host: HostId) => executor,
    onProgress: (p) => {
      if (p.last) {
        process.stdout.write(
          `  ${p.last.variant}/${p.last.task} trial ${p.last.trial}: ${p.last.outcome}${p.last.infraReason ? ` (${p.last.infraReason})` : ""}\n`,
        );
      }
    },
  });

  let infraErrors = 0;
  let authMissing = 0;
  let receipts = 0;
  for (const variant of loaded.experiment.variants) {
    for (const task of loaded.experiment.tasks) {
      for (let trial = 1; trial <= trials; trial += 1) {
        const dir = join(outDir, trialArtifactDir(loaded.experiment, variant.id, task.id, trial));
        const path = join(dir, "runtime-receipt.json");
        if (!existsSync(path)) continue;
        const receipt = runtimeReceiptSchema.parse(JSON.parse(await readFile(path, "utf8")));
        receipts += 1;
        if (receipt.status === "infra_error") infraErrors += 1;
        if (receipt.infraReason === "auth_missing") authMissing += 1;
        process.stdout.write(
          `  ${variant.id} trial ${trial}: ${receipt.status}${receipt.infraReason ? `/${receipt.infraReason}` : ""}, ` +
            `agent ${receipt.executor.agentVersion ?? "?"}, models ${receipt.model.effective.join(",") || "-"}, ` +
            `turns ${receipt.turns ?? "-"}, tool calls ${receipt.toolCalls}, denials ${receipt.permissionDenials.length}, ` +
            `tokens ${JSON.stringify(receipt.tokens)}, cost ${receipt.costUsd ?? "-"} USD, credits ${receipt.credits ?? "-"}` +
            `${receipt.error ? `\n    error: ${receipt.error}` : ""}\n`,
        );
      }
    }
  }
  process.stdout.write(`verdict: ${verdict.status}\nartifacts: ${outDir}\n`);
  if (guessed && receipts > 0 && authMissing === receipts) {
    // The guess was wrong: nothing worth keeping was produced.
    if (values.out === undefined) await rm(workDir, { recursive: true, force: true });
    process.stdout.write(
      `skipped: no credentials for ${target} (the qodercli config directory holds no login)\n`,
    );
    return 0;
  }
  // Credentials that exist but do not work (expired, no quota) are worth a red exit code.
  return infraErrors > 0 ? 1 : 0;
}

main(host).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `smoke-native: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
