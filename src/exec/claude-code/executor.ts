import { dirname } from "node:path";
import type { RuntimeReceipt } from "../receipt.js";
import { secretValuesFromEnv } from "../redact.js";
import {
  protocolMismatch,
  type RunOutcome,
  type StopCause,
  stoppedOutcome,
} from "../sdk/classify.js";
import { consumeQuery, stderrRecorder } from "../sdk/claude-like.js";
import { tracePermissionDecisions } from "../sdk/claude-like-permissions.js";
import {
  buildAgentEnv,
  collectSecretValues,
  installedPackageDir,
  isolatedHome,
  loadHostSdk,
  policyRootMismatch,
  promptWithPreamble,
  ReceiptBuilder,
  runDeadline,
  type SdkSource,
  scratchTmpDir,
} from "../sdk/common.js";
import {
  type ContainedHost,
  CREDENTIAL_PLACEHOLDER,
  containHost,
  spawnContained,
  upstreamFailureNote,
} from "../sdk/contained.js";
import { type HostSetupReport, setupFailure } from "../setup/contract.js";
import { commandsReachForge, type Executor, type ExecutorRunInput } from "../types.js";
import { outcomeFromResult, outcomeFromThrown } from "./classify.js";
import {
  CLAUDE_AGENT_SDK_PACKAGE,
  CLAUDE_HOST_VARIABLES,
  claudeEndpoint,
  claudeEnvOverrides,
} from "./env.js";
import { buildQueryOptions, CLAUDE_PERMISSION_MODES, isClaudePermissionMode } from "./options.js";
import { createPermissionGate } from "./permissions.js";
import { type ClaudeSetupRun, prepareClaudeSetup } from "./setup.js";
import { ClaudeRun } from "./stream.js";

/**
 * The part of `@anthropic-ai/claude-agent-sdk` the executor uses. The real module fits it;
 * tests pass a fake that yields messages of the SDK's own types.
 */
export interface ClaudeAgentSdk {
  query(params: { prompt: string; options?: Record<string, unknown> }): AsyncIterable<unknown>;
}

export interface ClaudeCodeExecutorOptions extends SdkSource<ClaudeAgentSdk> {
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
 * isolated home, no user or project settings, no MCP server, skill or plugin but the variant's
 * own setup (see ./setup.ts), and an allowlisted environment.
 */
export class ClaudeCodeExecutor implements Executor {
  readonly host = "claude-code" as const;

  constructor(private readonly options: ClaudeCodeExecutorOptions = {}) {}

  async run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
    if (this.host !== "claude-code") throw new Error("ClaudeCodeExecutor runs only claude-code");
    const started = performance.now();
    const source = this.options.env ?? process.env;
    const home = await isolatedHome(input.scratchDir, ".claude");
    const tmpDir = await scratchTmpDir(input.scratchDir);
    const env = buildAgentEnv(
      CLAUDE_HOST_VARIABLES,
      claudeEnvOverrides(home, tmpDir, this.options.maxRetries ?? 3),
      source,
    );
    const secretValues = collectSecretValues(
      secretValuesFromEnv(source),
      secretValuesFromEnv(env),
      this.options.secretValues ?? [],
    );
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

    const rootMismatch = policyRootMismatch(input);
    if (rootMismatch !== null) {
      return builder.finish("infra_error", { infraReason: "config_invalid", error: rootMismatch });
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

    // The setup's hooks and servers stop with the run, whichever way it ends.
    const runEnded = new AbortController();
    let setup: ClaudeSetupRun | undefined;
    if ((input.setup ?? []).length > 0) {
      try {
        setup = await prepareClaudeSetup({
          setup: input.setup ?? [],
          sandbox: input.sandbox,
          cwd: input.cwd,
          scratchDir: input.scratchDir,
          signal: AbortSignal.any([runEnded.signal, ...(input.signal ? [input.signal] : [])]),
        });
      } catch (error) {
        return builder.finish("infra_error", {
          infraReason: "setup_failed",
          error: `cannot prepare the variant's setup for Claude Code: ${error instanceof Error ? error.message : String(error)}`,
        });
      }
      const ready = setup;
      builder.setupReports = () => ready.reports();
      const fatal = setup.fatalBeforeStart();
      if (fatal.length > 0) {
        await setup.close();
        return builder.finish("infra_error", {
          infraReason: "setup_failed",
          error: setupFailure(fatal),
        });
      }
    }
    try {
      return await this.runPrepared(input, { env, builder, home, tmpDir, setup });
    } finally {
      runEnded.abort();
      await setup?.close();
    }
  }

  private async runPrepared(
    input: ExecutorRunInput,
    prepared: {
      env: Record<string, string>;
      builder: ReceiptBuilder;
      /** The run's isolated home and temporary folder. */
      home: string;
      tmpDir: string;
      setup: ClaudeSetupRun | undefined;
    },
  ): Promise<RuntimeReceipt> {
    const { env, builder, home, tmpDir, setup } = prepared;
    const loaded = await loadHostSdk(this.options, CLAUDE_AGENT_SDK_PACKAGE);
    if (!loaded.ok) {
      return builder.finish("infra_error", { infraReason: "runtime_missing", error: loaded.error });
    }
    const sdk = loaded.sdk;

    const endpoint = claudeEndpoint(env);
    if (!endpoint.ok && input.sandbox.kind !== "none")
      return builder.finish("infra_error", {
        infraReason: "config_invalid",
        error: endpoint.error,
      });
    let host: ContainedHost;
    try {
      host = await containHost({
        sandbox: input.sandbox,
        cwd: input.cwd,
        scratchDir: input.scratchDir,
        installPaths: [
          ...claudeInstallPaths(this.options.pathToClaudeCodeExecutable),
          ...(setup?.readOnlyPaths ?? []),
        ],
        ...(setup?.observeRequestBody ? { observeRequestBody: setup.observeRequestBody } : {}),
        ...(input.forge?.programDir === undefined ? {} : { programDirs: [input.forge.programDir] }),
        endpoint: endpoint.ok
          ? { upstream: endpoint.upstream, credentialHeaders: endpoint.credentialHeaders }
          : { upstream: "https://api.anthropic.com", credentialHeaders: {} },
        timeoutMs: input.timeoutMs,
        // Claude Code runs the agent's commands itself; in its own sandbox they could take over
        // its process and forge the result it reports (see containHost). A forge task's `cli`
        // agent's commands reach the forge's gateway; an `mcp` agent's MCP server is Claude
        // Code's own endpoint, which its commands do not reach.
        commandShell: {
          readOnly: [home],
          writable: [tmpDir],
          ...(commandsReachForge(input.forge) && input.forge?.endpoint.grant
            ? { grants: [input.forge.endpoint.grant] }
            : {}),
          ...(input.forge ? { env: input.forge.env } : {}),
          ...(input.forge?.programDir === undefined
            ? {}
            : { programDirs: [input.forge.programDir] }),
        },
        ...(input.forge?.access === "mcp" && input.forge.endpoint.grant
          ? { grants: [input.forge.endpoint.grant] }
          : {}),
      });
    } catch (error) {
      return builder.finish("infra_error", {
        infraReason: "spawn_failed",
        error: `cannot contain Claude Code: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    const runEnv = {
      ...(host.proxy !== null && endpoint.ok
        ? {
            ...endpoint.containedEnv(host.baseUrl, CREDENTIAL_PLACEHOLDER),
            ...(host.commandShell === null ? {} : { CLAUDE_CODE_SHELL_PREFIX: host.commandShell }),
          }
        : env),
      // A forge task's variables (the repository, and for cli the API's URL): no credential.
      ...input.forge?.env,
    };
    if (host.proxy !== null)
      builder.event("harness.contained", {
        sandbox: input.sandbox.description,
        endpoint: endpoint.ok ? endpoint.upstream : null,
        viaEndpointProxy: true,
        commandsInOwnSandbox: host.commandShell !== null,
      });

    const deadline = runDeadline(input);
    const gate = createPermissionGate(input.policy, tracePermissionDecisions(builder));
    const options = buildQueryOptions({
      input,
      env: runEnv,
      abortController: deadline.controller,
      gate,
      stderr: stderrRecorder(builder).write,
      ...(this.options.pathToClaudeCodeExecutable === undefined
        ? {}
        : { pathToClaudeCodeExecutable: this.options.pathToClaudeCodeExecutable }),
      ...(host.proxy === null
        ? {}
        : { spawnClaudeCodeProcess: (request) => spawnContained(host, request) }),
      ...(setup === undefined ? {} : { setup: setup.options }),
    });

    // A component whose requirement says `fail` and that Claude Code did not load ends the run
    // before the agent's first turn is used for anything.
    let setupFatal: HostSetupReport[] = [];
    const state = new ClaudeRun(builder, (init) => {
      if (setup === undefined) return;
      setupFatal = setup.confirm(init);
      if (setupFatal.length > 0) deadline.controller.abort(new Error(setupFailure(setupFatal)));
    });
    try {
      const thrown = await consumeQuery({
        query: () =>
          sdk.query({ prompt: promptWithPreamble(input.prompt, input.preamble), options }),
        run: state,
        deadline,
        abortGraceMs: this.options.abortGraceMs ?? 10_000,
        builder,
      });
      if (setupFatal.length > 0)
        return builder.finish("infra_error", {
          infraReason: "setup_failed",
          error: setupFailure(setupFatal),
        });
      const outcome = this.outcome(state, thrown, deadline.why(), input.timeoutMs);
      // A run that ended on its own without a component its requirement says it must have (the
      // instructions no model request carried) tested another setup than the one it names.
      const unloaded =
        outcome.status === "completed" || outcome.status === "agent_error"
          ? (setup?.fatalAfterRun() ?? [])
          : [];
      if (unloaded.length > 0)
        return builder.finish("infra_error", {
          infraReason: "setup_failed",
          error: setupFailure(unloaded),
        });
      const note =
        outcome.infraReason === "network_unreachable" && endpoint.ok
          ? upstreamFailureNote(host, endpoint.upstream)
          : null;
      return builder.finishWith(
        note === null ? outcome : { ...outcome, error: `${outcome.error ?? ""} (${note})`.trim() },
      );
    } finally {
      await host.close();
    }
  }

  private outcome(
    state: ClaudeRun,
    thrown: { error: unknown } | null,
    stopped: StopCause | null,
    timeoutMs: number,
  ): RunOutcome {
    if (state.result) {
      const outcome = outcomeFromResult(state.result, state.evidence);
      // Only a result the abort itself produced says less than the abort.
      if (
        stopped &&
        outcome.status !== "completed" &&
        (state.result.terminal_reason ?? "").startsWith("aborted")
      ) {
        return stoppedOutcome(stopped, timeoutMs);
      }
      return outcome;
    }
    if (stopped) return stoppedOutcome(stopped, timeoutMs);
    if (state.protocolProblem) return protocolMismatch(state.protocolProblem);
    if (thrown) return outcomeFromThrown(thrown.error, state.sawInit, state.evidence);
    return protocolMismatch("the SDK's message stream ended without a result message");
  }
}

/**
 * What of Claude Code's installation the contained process reads: the SDK's scope folder (its
 * platform package holds the native binary), or the binary given instead.
 */
function claudeInstallPaths(executable: string | undefined): string[] {
  if (executable !== undefined) return [dirname(executable)];
  const sdk = installedPackageDir(CLAUDE_AGENT_SDK_PACKAGE);
  return sdk === null ? [] : [dirname(sdk)];
}
