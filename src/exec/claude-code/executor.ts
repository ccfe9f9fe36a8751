import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { RuntimeReceipt } from "../receipt.js";
import { secretValuesFromEnv } from "../redact.js";
import {
  buildAgentEnv,
  isolatedHome,
  loadOptionalSdk,
  ReceiptBuilder,
  runDeadline,
} from "../sdk/common.js";
import type { Executor, ExecutorRunInput } from "../types.js";
import { type Outcome, outcomeFromResult, outcomeFromThrown } from "./classify.js";
import { CLAUDE_AGENT_SDK_PACKAGE, CLAUDE_HOST_VARIABLES, claudeEnvOverrides } from "./env.js";
import {
  buildQueryOptions,
  CLAUDE_PERMISSION_MODES,
  isClaudePermissionMode,
  promptWithPreamble,
} from "./options.js";
import { createPermissionGate } from "./permissions.js";
import { ClaudeRun, nextOrAbandon } from "./stream.js";

/**
 * The part of `@anthropic-ai/claude-agent-sdk` the executor uses. The real module fits it;
 * tests pass a fake that yields messages of the SDK's own types.
 */
export interface ClaudeAgentSdk {
  query(params: { prompt: string; options?: Record<string, unknown> }): AsyncIterable<unknown>;
}

const STDERR_EVENT_LIMIT = 200;

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export interface ClaudeCodeExecutorOptions {
  /** The SDK module; loaded lazily from the optional peer dependency when absent. */
  sdk?: ClaudeAgentSdk;
  /** How the SDK is loaded when `sdk` is absent (default: import the optional peer dependency). */
  loadSdk?: () => Promise<ClaudeAgentSdk>;
  /** Where credential and endpoint variables are read from (default: `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** A Claude Code binary to run instead of the one bundled with the SDK. */
  pathToClaudeCodeExecutable?: string;
  /** `CLAUDE_CODE_MAX_RETRIES` for the model API (default 3; Claude Code's own default is 10). */
  maxRetries?: number;
  /** How long to wait for the SDK to wind down after an abort before giving up on it (default 10 s). */
  abortGraceMs?: number;
  /** Extra strings to mask in the receipt (the credential variables' values always are). */
  secretValues?: readonly string[];
}

/**
 * The `claude-code` host: the real Claude Code agent through `@anthropic-ai/claude-agent-sdk`
 * (`query()`, which runs the SDK's bundled native binary). Every tool call goes through the
 * trial's policy (a PreToolUse hook, with `canUseTool` as a second line); the run sees an
 * isolated home, no user or project settings, no MCP servers and an allowlisted environment.
 */
export class ClaudeCodeExecutor implements Executor {
  readonly host = "claude-code" as const;

  constructor(private readonly options: ClaudeCodeExecutorOptions = {}) {}

  async run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
    if (this.host !== "claude-code") throw new Error("ClaudeCodeExecutor runs only claude-code");
    const started = performance.now();
    const source = this.options.env ?? process.env;
    const home = await isolatedHome(input.scratchDir, ".claude");
    const tmpDir = join(input.scratchDir, "tmp");
    await mkdir(tmpDir, { recursive: true });
    const env = buildAgentEnv(
      CLAUDE_HOST_VARIABLES,
      claudeEnvOverrides(home, tmpDir, this.options.maxRetries ?? 3),
      source,
    );
    const secretValues = [
      ...new Set([
        ...secretValuesFromEnv(source),
        ...secretValuesFromEnv(env),
        ...(this.options.secretValues ?? []),
      ]),
    ].sort((a, b) => b.length - a.length);
    const builder = new ReceiptBuilder({
      host: "claude-code",
      kind: "claude-agent-sdk",
      packageName: CLAUDE_AGENT_SDK_PACKAGE,
      agentVersion: null,
      input,
      envVarNames: Object.keys(env),
      startedMs: started,
      secretValues,
    });

    if (input.policy.config.trialRoot !== input.cwd) {
      return builder.finish("infra_error", {
        infraReason: "config_invalid",
        error: "the policy was created for a different trial root than the run's cwd",
      });
    }
    const mode = input.runtime.permissionMode ?? "default";
    if (!isClaudePermissionMode(mode)) {
      return builder.finish("infra_error", {
        infraReason: "config_invalid",
        error: `permission mode ${JSON.stringify(mode)} is not one Claude Code knows (${CLAUDE_PERMISSION_MODES.join(", ")})`,
      });
    }
    if (input.signal?.aborted) {
      return builder.finish("aborted", { error: "aborted before the agent started" });
    }

    let sdk: ClaudeAgentSdk;
    try {
      sdk =
        this.options.sdk ??
        (await (
          this.options.loadSdk ?? (() => loadOptionalSdk<ClaudeAgentSdk>(CLAUDE_AGENT_SDK_PACKAGE))
        )());
    } catch (error) {
      return builder.finish("infra_error", {
        infraReason: "runtime_missing",
        error: errorMessage(error),
      });
    }

    const deadline = runDeadline(input);
    const gate = createPermissionGate(input.policy, (event) =>
      builder.event("harness_permission", {
        via: event.via,
        tool: event.toolName,
        toolUseId: event.toolUseId,
        seq: event.decision.seq,
        decision: event.decision.decision,
        rule: event.decision.rule,
        reason: event.decision.reason,
        reused: event.reused,
      }),
    );
    let stderrEvents = 0;
    const options = buildQueryOptions({
      input,
      env,
      abortController: deadline.controller,
      gate,
      stderr: (data) => {
        stderrEvents += 1;
        if (stderrEvents <= STDERR_EVENT_LIMIT) builder.event("stderr", { text: data });
      },
      ...(this.options.pathToClaudeCodeExecutable === undefined
        ? {}
        : { pathToClaudeCodeExecutable: this.options.pathToClaudeCodeExecutable }),
    });

    const state = new ClaudeRun(builder);
    let thrown: { error: unknown } | null = null;
    let abandoned = false;
    let iterator: AsyncIterator<unknown> | undefined;
    try {
      const stream = sdk.query({
        prompt: promptWithPreamble(input.prompt, input.preamble),
        options,
      });
      iterator = stream[Symbol.asyncIterator]();
      for (;;) {
        const next = await nextOrAbandon(
          iterator,
          deadline.controller.signal,
          this.options.abortGraceMs ?? 10_000,
        );
        if (next === "abandoned") {
          abandoned = true;
          break;
        }
        if (next.done) break;
        state.handle(next.value);
      }
    } catch (error) {
      thrown = { error };
    } finally {
      deadline.dispose();
    }
    if (abandoned) {
      builder.event("harness_abandoned", {
        reason: "the SDK did not stop within the grace period after the abort",
      });
      iterator?.return?.().catch(() => {});
    }
    if (thrown && state.result) {
      // Claude Code throws after yielding an error result; the result is the better evidence.
      builder.event("sdk_error_after_result", { message: errorMessage(thrown.error) });
    }

    const outcome = this.outcome(state, thrown, deadline.why(), input.timeoutMs);
    return builder.finish(outcome.status, {
      ...(outcome.infraReason ? { infraReason: outcome.infraReason } : {}),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
    });
  }

  private outcome(
    state: ClaudeRun,
    thrown: { error: unknown } | null,
    stopped: "timeout" | "aborted" | null,
    timeoutMs: number,
  ): Outcome {
    const stoppedOutcome = (): Outcome =>
      stopped === "timeout"
        ? { status: "timeout", error: `the agent did not finish within ${timeoutMs} ms` }
        : { status: "aborted", error: "the run was aborted" };
    if (state.result) {
      const outcome = outcomeFromResult(state.result, state.evidence);
      if (
        stopped &&
        outcome.status !== "completed" &&
        (state.result.terminal_reason ?? "").startsWith("aborted")
      ) {
        return stoppedOutcome();
      }
      return outcome;
    }
    if (stopped) return stoppedOutcome();
    if (state.protocolProblem) {
      return {
        status: "infra_error",
        infraReason: "protocol_mismatch",
        error: state.protocolProblem,
      };
    }
    if (thrown) return outcomeFromThrown(thrown.error, state.sawInit, state.evidence);
    return {
      status: "infra_error",
      infraReason: "protocol_mismatch",
      error: "the SDK's message stream ended without a result message",
    };
  }
}
