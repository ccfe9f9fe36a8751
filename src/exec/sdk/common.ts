// What every SDK-backed executor shares: lazy loading of an optional SDK, the environment
// allowlist, the isolated home, deadlines, and a receipt builder. Each host adapter maps its
// SDK's options and messages onto these.
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
import type { ExecutorRunInput, HostId } from "../types.js";

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

/** The installed version of a package, or null when it cannot be found. */
export function installedVersion(packageName: string): string | null {
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

/** Creates `<scratch>/home` (and its config dirs) for a run that must not see the user's settings. */
export async function isolatedHome(scratchDir: string, ...subdirs: string[]): Promise<string> {
  const home = join(scratchDir, "home");
  await mkdir(home, { recursive: true });
  for (const sub of subdirs) await mkdir(join(home, sub), { recursive: true });
  return home;
}

/** Aborts when the run's own deadline passes or the caller's signal fires; says which. */
export function runDeadline(input: Pick<ExecutorRunInput, "timeoutMs" | "signal">): {
  controller: AbortController;
  why: () => "timeout" | "aborted" | null;
  dispose: () => void;
} {
  const controller = new AbortController();
  let reason: "timeout" | "aborted" | null = null;
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

export function emptyTokens(): TokenUsage {
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
      trace: this.trace,
    };
  }
}
