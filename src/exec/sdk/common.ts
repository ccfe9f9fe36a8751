// What every SDK-backed executor shares: lazy loading of an optional SDK, the environment
// allowlist, the isolated home, the prompt, deadlines, and a receipt builder. Each host adapter
// maps its SDK's options and messages onto these.
import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import {
  type InfraReason,
  type ReceiptStatus,
  RUNTIME_RECEIPT_VERSION,
  type RuntimeReceipt,
  type TokenUsage,
  type TraceEvent,
} from "../receipt.js";
import { redact, redactText } from "../redact.js";
import type { HostSetupReport } from "../setup/contract.js";
import type { ExecutorRunInput, HostId } from "../types.js";
import { errorMessage, type RunOutcome, type StopCause } from "./classify.js";

/** Thrown when an optional SDK is not installed; the executor turns it into `infra_error`. */
export class SdkMissingError extends Error {
  constructor(
    readonly packageName: string,
    cause: unknown,
  ) {
    super(
      `the ${packageName} package is not installed; install it next to harnesslab (npm install ${packageName}) to run this host (${cause instanceof Error ? cause.message : String(cause)})`,
    );
    this.name = "SdkMissingError";
  }
}

/** Imports an optional peer dependency on first use. */
export async function loadOptionalSdk<T>(packageName: string): Promise<T> {
  try {
    return (await import(packageName)) as T;
  } catch (error) {
    throw new SdkMissingError(packageName, error);
  }
}

/**
 * The directory of an installed package, found along Node's lookup paths. Works for packages
 * whose `exports` offer no `require` entry or hide `package.json` (e.g. ESM-only SDKs).
 */
export function installedPackageDir(packageName: string): string | null {
  const require = createRequire(import.meta.url);
  for (const dir of require.resolve.paths(packageName) ?? []) {
    const candidate = join(dir, packageName);
    if (existsSync(join(candidate, "package.json"))) return candidate;
  }
  return null;
}

const versionCache = new Map<string, string | null>();

/**
 * The installed version of a package, or null when it cannot be found. Looked up once per
 * process: every receipt names it, and the installation does not change during a run.
 */
function installedVersion(packageName: string): string | null {
  if (!versionCache.has(packageName)) versionCache.set(packageName, lookUpVersion(packageName));
  return versionCache.get(packageName) ?? null;
}

function lookUpVersion(packageName: string): string | null {
  const dir = installedPackageDir(packageName);
  if (dir !== null) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === packageName && pkg.version) return pkg.version;
    } catch {
      // fall back to resolving the entry point
    }
  }
  try {
    const require = createRequire(import.meta.url);
    const entry = require.resolve(packageName);
    let dir = entry;
    for (let i = 0; i < 6; i += 1) {
      dir = join(dir, "..");
      try {
        const pkg = require(join(dir, "package.json")) as { name?: string; version?: string };
        if (pkg.name === packageName) return pkg.version ?? null;
      } catch {
        // keep walking up
      }
    }
  } catch {
    // not installed
  }
  return null;
}

/** Variables every agent process may see: enough to find programs and behave, nothing secret. */
const BASE_ENV = ["PATH", "LANG", "LC_ALL", "TZ", "TERM", "SystemRoot", "ComSpec", "PATHEXT"];

/**
 * The agent's whole environment: the base allowlist, the host's credential and endpoint
 * variables that are set in `source`, and explicit overrides (isolated HOME, quiet flags).
 * Never the harness's whole environment.
 */
export function buildAgentEnv(
  hostVariables: readonly string[],
  overrides: Record<string, string>,
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of [...BASE_ENV, ...hostVariables]) {
    const value = source[name];
    if (value !== undefined && value !== "") env[name] = value;
  }
  return { ...env, ...overrides };
}

export { QUIET_NPM_ENV } from "../../shared/index.js";

/**
 * The strings a receipt masks, each once, longest first so that a secret containing another is
 * masked whole rather than around the shorter one.
 */
export function collectSecretValues(...lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())].sort((a, b) => b.length - a.length);
}

/** Creates `<scratch>/home` (and its config dirs) for a run that must not see the user's settings. */
export async function isolatedHome(scratchDir: string, ...subdirs: string[]): Promise<string> {
  const home = join(scratchDir, "home");
  await mkdir(home, { recursive: true });
  for (const sub of subdirs) await mkdir(join(home, sub), { recursive: true });
  return home;
}

/** Creates `<scratch>/tmp`, the run's TMPDIR, so temporary files stay out of the shared one. */
export async function scratchTmpDir(scratchDir: string): Promise<string> {
  const tmpDir = join(scratchDir, "tmp");
  await mkdir(tmpDir, { recursive: true });
  return tmpDir;
}

/**
 * Why a run cannot start when its policy was built for another trial root, or null. Every path
 * check of the policy is relative to that root, so a mismatch would judge the wrong files.
 */
export function policyRootMismatch(input: Pick<ExecutorRunInput, "policy" | "cwd">): string | null {
  return input.policy.config.trialRoot === input.cwd
    ? null
    : "the policy was created for a different trial root than the run's cwd";
}

/**
 * The task text an agent receives. The runner already puts the composition's preamble at the top
 * of the prompt (what prompt.txt records); a caller that passes the preamble separately gets it
 * prepended the same way, never twice.
 */
export function promptWithPreamble(prompt: string, preamble: string): string {
  const head = preamble.trimEnd();
  if (head.trim() === "" || prompt.startsWith(head)) return prompt;
  return `${head}\n\n---\n\n${prompt}`;
}

/** An executor's `sdk`/`loadSdk` options, as the SDK-backed hosts with a single module take them. */
export interface SdkSource<T> {
  /** The SDK module; loaded lazily from the optional peer dependency when absent. */
  sdk?: T;
  /** How the SDK is loaded when `sdk` is absent (default: import the optional peer dependency). */
  loadSdk?: () => Promise<T>;
}

/**
 * The host's SDK module: the one given, else the loader's, else the optional peer dependency.
 * A failure is a value so the executor can end the run as `runtime_missing`.
 */
export async function loadHostSdk<T>(
  source: SdkSource<T>,
  packageName: string,
): Promise<{ ok: true; sdk: T } | { ok: false; error: string }> {
  try {
    const sdk = source.sdk ?? (await (source.loadSdk ?? (() => loadOptionalSdk<T>(packageName)))());
    return { ok: true, sdk };
  } catch (error) {
    return { ok: false, error: errorMessage(error) };
  }
}

export interface RunDeadline {
  controller: AbortController;
  why: () => StopCause | null;
  dispose: () => void;
}

/** Aborts when the run's own deadline passes or the caller's signal fires; says which. */
export function runDeadline(input: Pick<ExecutorRunInput, "timeoutMs" | "signal">): RunDeadline {
  const controller = new AbortController();
  let reason: StopCause | null = null;
  // setTimeout fires at once for delays above 2^31-1 ms.
  const timer = setTimeout(
    () => {
      reason ??= "timeout";
      controller.abort(new Error(`the run exceeded its ${input.timeoutMs} ms budget`));
    },
    Math.min(input.timeoutMs, 2_147_483_647),
  );
  const onAbort = () => {
    reason ??= "aborted";
    controller.abort(input.signal?.reason ?? new Error("aborted"));
  };
  if (input.signal?.aborted) onAbort();
  else input.signal?.addEventListener("abort", onAbort, { once: true });
  return {
    controller,
    why: () => reason,
    dispose: () => {
      clearTimeout(timer);
      input.signal?.removeEventListener("abort", onAbort);
    },
  };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function emptyTokens(): TokenUsage {
  return { uncachedInput: null, cacheRead: null, cacheWrite: null, output: null, reasoning: null };
}

/** Adds a reported count to a token field (null stays null until something is reported). */
export function addTokens(tokens: TokenUsage, field: keyof TokenUsage, value: unknown): void {
  if (typeof value !== "number" || !Number.isFinite(value)) return;
  tokens[field] = (tokens[field] ?? 0) + value;
}

export interface ReceiptParts {
  host: HostId;
  kind: string;
  packageName: string | null;
  agentVersion: string | null;
  input: ExecutorRunInput;
  envVarNames: string[];
  startedMs: number;
  secretValues: readonly string[];
}

/**
 * Accumulates what a run reports and produces the receipt. Every string that reaches it is
 * redacted; the trial root is replaced later by the runner.
 */
export class ReceiptBuilder {
  sessionId: string | null = null;
  effectiveModels = new Set<string>();
  tokens: TokenUsage = emptyTokens();
  costUsd: number | null = null;
  credits: number | null = null;
  turns: number | null = null;
  toolCalls = 0;
  agentMs: number | null = null;
  apiMs: number | null = null;
  finalText = "";
  agentVersion: string | null;
  /** What the host reported of the variant's setup, read when the receipt is made. */
  setupReports: (() => HostSetupReport[]) | undefined;
  readonly trace: TraceEvent[] = [];

  constructor(private readonly parts: ReceiptParts) {
    this.agentVersion = parts.agentVersion;
  }

  /** Records one SDK event (redacted) in the trace. */
  event(type: string, payload: unknown): void {
    const redacted = redact(payload, { secretValues: this.parts.secretValues });
    const body =
      redacted !== null && typeof redacted === "object" && !Array.isArray(redacted)
        ? redacted
        : { value: redacted };
    this.trace.push({ ...(body as Record<string, unknown>), type });
  }

  /** The receipt for an outcome a host's classification produced. */
  finishWith(outcome: RunOutcome): RuntimeReceipt {
    return this.finish(outcome.status, {
      ...(outcome.infraReason ? { infraReason: outcome.infraReason } : {}),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    });
  }

  finish(
    status: ReceiptStatus,
    extra: { infraReason?: InfraReason; error?: string } = {},
  ): RuntimeReceipt {
    const { input } = this.parts;
    const tokensReported = Object.values(this.tokens).some((v) => v !== null);
    const infraReason = status === "infra_error" ? (extra.infraReason ?? "spawn_failed") : null;
    return {
      schemaVersion: RUNTIME_RECEIPT_VERSION,
      executor: {
        host: this.parts.host,
        kind: this.parts.kind,
        package: this.parts.packageName,
        packageVersion: this.parts.packageName ? installedVersion(this.parts.packageName) : null,
        agentVersion: this.agentVersion,
      },
      trial: { task: input.task, variant: input.variant, index: input.trialIndex },
      model: {
        requested: input.runtime.model ?? null,
        effective: [...this.effectiveModels].sort(),
      },
      settings: {
        tools: [...input.runtime.tools],
        allowedTools: [...input.runtime.allowedTools],
        disallowedTools: [...input.runtime.disallowedTools],
        permissionMode: input.runtime.permissionMode ?? null,
        maxTurns: input.runtime.maxTurns ?? null,
        timeoutMs: input.timeoutMs,
        envVarNames: [...this.parts.envVarNames].sort(),
        agent: null,
      },
      sessionId: this.sessionId,
      wallTimeMs: Math.max(0, performance.now() - this.parts.startedMs),
      durations: { agentMs: this.agentMs, apiMs: this.apiMs },
      status,
      infraReason,
      error: extra.error === undefined ? null : redactText(extra.error, this.parts.secretValues),
      finalText: redactText(this.finalText, this.parts.secretValues),
      tokens: tokensReported ? this.tokens : null,
      costUsd: this.costUsd,
      credits: this.credits,
      turns: this.turns,
      toolCalls: this.toolCalls,
      permissionDenials: input.policy.decisions().filter((d) => d.decision === "deny"),
      ...(this.setupReports === undefined
        ? {}
        : {
            setup: redact(this.setupReports(), {
              secretValues: this.parts.secretValues,
            }) as HostSetupReport[],
          }),
      trace: this.trace,
    };
  }
}
