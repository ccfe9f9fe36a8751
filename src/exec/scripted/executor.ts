import {
  type InfraReason,
  type ReceiptStatus,
  RUNTIME_RECEIPT_VERSION,
  type RuntimeReceipt,
  type TraceEvent,
} from "../receipt.js";
import { maskSecretValues, redact, redactText, secretValuesFromEnv } from "../redact.js";
import { type HostSetupReport, setupFailure } from "../setup/contract.js";
import { blockedBy } from "../setup/hooks.js";
import type { Executor, ExecutorForgeAccess, ExecutorRunInput } from "../types.js";
import { type AgentEnding, loadScriptedAgent } from "./agents.js";
import type { ScriptedAgentContext, ScriptedForge } from "./contract.js";
import { type ScriptedSetupRun, startScriptedSetup, toolHookPayload } from "./setup.js";
import { commandEnvNames, createScriptedTools } from "./tools.js";

export interface ScriptedExecutorOptions {
  /** Upper bound for one Bash command; the run's deadline applies as well. Default 120 s. */
  commandTimeoutMs?: number;
  /** Wall-clock limit of one Glob or Grep call, whose pattern the agent chose (default 10 s). */
  searchTimeLimitMs?: number;
  /** Monotonic clock in milliseconds; defaults to `performance.now`. */
  now?: () => number;
  /**
   * Strings masked in the trace and the final text. Defaults to the values of the harness's
   * credential variables (`secretValuesFromEnv(process.env)`), read when a run starts.
   */
  secretValues?: readonly string[];
}

/** `ctx.forge`: the trial's repository, and how this variant's agent reaches it. */
function scriptedForge(forge: ExecutorForgeAccess): ScriptedForge {
  return {
    url: forge.direct.url,
    token: forge.direct.token,
    owner: forge.owner,
    repo: forge.repo,
    user: forge.user,
    access: forge.access,
    ...(forge.tool === undefined ? {} : { tool: { ...forge.tool } }),
    ...(forge.access === "cli" ? { commandUrl: forge.endpoint.url } : {}),
    ...(forge.mcp ? { mcpTools: [...forge.mcp.tools] } : {}),
  };
}

type Ending = AgentEnding | { kind: "timeout" } | { kind: "aborted" };

/**
 * The `scripted` host: runs a scripted agent (built-in or an ES module) against the trial with
 * tools bound by the same policy the real hosts use, and returns the same receipt shape. A
 * scripted run has no model, so tokens, cost, credits and turns are null rather than invented.
 */
export class ScriptedExecutor implements Executor {
  readonly host = "scripted" as const;
  private readonly commandTimeoutMs: number;
  private readonly searchTimeLimitMs: number | undefined;
  private readonly now: () => number;
  private readonly secretValues: readonly string[] | undefined;

  constructor(options: ScriptedExecutorOptions = {}) {
    this.commandTimeoutMs = options.commandTimeoutMs ?? 120_000;
    this.searchTimeLimitMs = options.searchTimeLimitMs;
    this.now = options.now ?? (() => performance.now());
    this.secretValues = options.secretValues;
  }

  async run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
    const started = this.now();
    const secretValues = this.secretValues ?? secretValuesFromEnv(process.env);
    const trace: TraceEvent[] = [];
    const controller = new AbortController();
    // The setup's hooks and servers stop with the run: when it ends, at its deadline, or when
    // it is aborted.
    const runEnded = new AbortController();
    const setupSignal = AbortSignal.any([
      runEnded.signal,
      AbortSignal.timeout(Math.min(input.timeoutMs, 2_147_483_647)),
      ...(input.signal ? [input.signal] : []),
    ]);
    let setupRun: ScriptedSetupRun | undefined;
    const toolbox = createScriptedTools({
      policy: input.policy,
      cwd: input.cwd,
      scratchDir: input.scratchDir,
      sandbox: input.sandbox,
      signal: controller.signal,
      commandTimeoutMs: Math.min(this.commandTimeoutMs, input.timeoutMs),
      ...(input.forge === undefined ? {} : { forge: input.forge }),
      ...(this.searchTimeLimitMs === undefined
        ? {}
        : { searchTimeLimitMs: this.searchTimeLimitMs }),
      trace,
      setup: {
        callMcp: (toolName, toolInput, signal) => setupRun?.callMcp(toolName, toolInput, signal),
        beforeTool: async (toolName, toolInput) => {
          if (setupRun === undefined) return undefined;
          const outcomes = await setupRun.hooks.run(
            "PreToolUse",
            toolHookPayload(toolName, toolInput),
          );
          return blockedBy(outcomes);
        },
        afterTool: async (toolName, toolInput, result) => {
          await setupRun?.hooks.run("PostToolUse", toolHookPayload(toolName, toolInput, result));
        },
      },
    });
    const receipt = (
      status: ReceiptStatus,
      fields: {
        error?: string | null;
        finalText?: string;
        infraReason?: InfraReason;
        agentVersion?: string | null;
        agentMs?: number | null;
      },
    ): RuntimeReceipt => ({
      schemaVersion: RUNTIME_RECEIPT_VERSION,
      executor: {
        host: "scripted",
        kind: "scripted",
        package: null,
        packageVersion: null,
        agentVersion: fields.agentVersion ?? null,
      },
      trial: { task: input.task, variant: input.variant, index: input.trialIndex },
      model: { requested: input.runtime.model ?? null, effective: [] },
      settings: {
        tools: [...input.runtime.tools],
        allowedTools: [...input.runtime.allowedTools],
        disallowedTools: [...input.runtime.disallowedTools],
        permissionMode: input.runtime.permissionMode ?? null,
        maxTurns: input.runtime.maxTurns ?? null,
        timeoutMs: input.timeoutMs,
        envVarNames: commandEnvNames(),
        agent: input.agent ?? null,
      },
      sessionId: null,
      wallTimeMs: Math.max(0, Math.round(this.now() - started)),
      durations: { agentMs: fields.agentMs ?? null, apiMs: null },
      status,
      infraReason: status === "infra_error" ? (fields.infraReason ?? "config_invalid") : null,
      error:
        fields.error === undefined || fields.error === null
          ? null
          : redactText(fields.error, secretValues),
      // Only exact secret values: credential-shaped patterns could be legitimate report text.
      finalText: maskSecretValues(fields.finalText ?? "", secretValues),
      tokens: null,
      costUsd: null,
      credits: null,
      turns: null,
      toolCalls: toolbox.calls(),
      permissionDenials: toolbox.denials(),
      trace: redact(trace, { secretValues }) as TraceEvent[],
      ...(setupRun === undefined
        ? {}
        : { setup: redact(setupRun.reports(), { secretValues }) as HostSetupReport[] }),
    });

    if (input.policy.config.trialRoot !== input.cwd) {
      const error = "the policy was created for a different trial root than the run's cwd";
      return receipt("infra_error", { error, infraReason: "config_invalid" });
    }
    if (input.signal?.aborted)
      return receipt("aborted", { error: "aborted before the agent started" });
    const loaded = await loadScriptedAgent(input.agent, trace);
    if (!loaded.ok) {
      trace.push({ type: "agent_load_failed", error: loaded.error });
      return receipt(loaded.status, { error: loaded.error, infraReason: "config_invalid" });
    }

    if ((input.setup ?? []).length > 0) {
      setupRun = await startScriptedSetup({
        setup: input.setup ?? [],
        sandbox: input.sandbox,
        cwd: input.cwd,
        scratchDir: input.scratchDir,
        sessionId: `scripted-${input.task}-${input.variant}-${input.trialIndex}`,
        signal: setupSignal,
      });
      const fatal = setupRun.fatal();
      if (fatal.length > 0) {
        await setupRun.close();
        const error = setupFailure(fatal);
        trace.push({ type: "setup_failed", error });
        return receipt("infra_error", { error, infraReason: "setup_failed" });
      }
    }
    const setup = setupRun?.setup ?? { components: [], context: [] };
    // A UserPromptSubmit or SessionStart hook adds what it prints to the agent's context, as
    // Claude Code does; a UserPromptSubmit hook that exits 2 blocks the prompt.
    for (const event of ["SessionStart", "UserPromptSubmit"] as const) {
      const outcomes =
        (await setupRun?.hooks.run(
          event,
          event === "UserPromptSubmit" ? { prompt: input.prompt } : { source: "startup" },
        )) ?? [];
      for (const outcome of outcomes)
        if (outcome.run.exitCode === 0 && outcome.run.stdout.trim() !== "")
          setup.context.push(outcome.run.stdout.trim());
      const blocked = blockedBy(outcomes);
      if (blocked !== undefined) {
        trace.push({ type: "prompt_blocked", reason: blocked });
        await setupRun?.close();
        return receipt("completed", { finalText: "", agentVersion: loaded.version, agentMs: 0 });
      }
    }

    const context: ScriptedAgentContext = {
      prompt: input.prompt,
      preamble: input.preamble,
      cwd: input.cwd,
      tools: toolbox.tools,
      signal: controller.signal,
      trial: { index: input.trialIndex, variant: input.variant, task: input.task },
      ...(input.forge === undefined ? {} : { forge: scriptedForge(input.forge) }),
      setup,
    };
    const agentStarted = this.now();
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const running = loaded.start(context);
    const ending = await new Promise<Ending>((resolve) => {
      // setTimeout fires at once for delays past 2^31-1 ms; clamp rather than end the run early.
      timer = setTimeout(
        () => resolve({ kind: "timeout" }),
        Math.min(input.timeoutMs, 2_147_483_647),
      );
      onAbort = () => resolve({ kind: "aborted" });
      if (input.signal?.aborted) onAbort();
      else input.signal?.addEventListener("abort", onAbort, { once: true });
      running.ending.then(resolve);
    });
    const agentMs = Math.max(0, Math.round(this.now() - agentStarted));
    clearTimeout(timer);
    if (onAbort) input.signal?.removeEventListener("abort", onAbort);
    // Past the deadline every tool call is refused and the agent's thread is ended, whatever it
    // is doing; nothing the harness started on its behalf may still touch the trial afterwards.
    controller.abort();
    await running.stop();
    await toolbox.settled();
    // An agent that finished its turn meets the Stop hooks (a scripted agent cannot be sent
    // back to work as Claude Code's would be: a blocking Stop hook is recorded, no more).
    if (ending.kind === "returned") await setupRun?.hooks.run("Stop", { stop_hook_active: false });
    runEnded.abort();
    await setupRun?.close();
    await toolbox.close();

    const agentVersion = loaded.version;
    switch (ending.kind) {
      case "timeout":
        trace.push({ type: "timeout", afterMs: input.timeoutMs });
        return receipt("timeout", {
          error: `the agent did not finish within ${input.timeoutMs} ms`,
          agentVersion,
          agentMs,
        });
      case "aborted":
        trace.push({ type: "aborted" });
        return receipt("aborted", { error: "the run was aborted", agentVersion, agentMs });
      case "load-failed":
        trace.push({ type: "agent_load_failed", error: ending.error });
        return receipt("infra_error", {
          error: ending.error,
          infraReason: "config_invalid",
          agentVersion,
        });
      // A scripted agent is the experimenter's code: when it breaks, the experiment is at
      // fault, not the setup it stands in for, and the trial is no agent failure.
      case "threw":
      case "died":
      case "returned-other": {
        const error =
          ending.kind === "threw"
            ? `the scripted agent threw: ${ending.text}`
            : ending.kind === "died"
              ? ending.error
              : `the scripted agent returned ${ending.type}; expected a string (its final report)`;
        trace.push({ type: "agent_error", error: ending.kind === "threw" ? ending.text : error });
        return receipt("infra_error", {
          error,
          infraReason: "scripted_agent_failed",
          agentVersion,
          agentMs,
        });
      }
      case "returned": {
        const finalText = ending.value ?? "";
        trace.push({ type: "final", text: finalText });
        return receipt("completed", { finalText, agentVersion, agentMs });
      }
    }
  }
}
