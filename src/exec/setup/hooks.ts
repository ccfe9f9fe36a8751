// A variant's hooks, run by a host that has no hook system of its own (the scripted host): each
// hook's command in the trial's sandbox, with the event's JSON on stdin as Claude Code gives it,
// its exit status read as Claude Code reads it (2 blocks where the event can be blocked).
import { join } from "node:path";
import type { HookEvent } from "../../ir/index.js";
import { type CommandSandbox, commandEnvironment } from "../../sandbox/index.js";
import type { HookRun, SetupComponent } from "./contract.js";

/** The events whose hook can refuse what is about to happen by exiting with status 2. */
const BLOCKING_EVENTS: readonly HookEvent[] = ["PreToolUse", "UserPromptSubmit", "Stop"];

/** How long one hook may run (Claude Code's default); the trial's deadline still applies. */
const HOOK_TIMEOUT_MS = 60_000;
const MAX_RECORDED_RUNS = 100;
const MAX_RUN_OUTPUT = 4 * 1024;

export interface HookOutcome {
  component: string;
  run: HookRun;
}

export interface HookRunner {
  /** Runs every hook of `event`, in the setup's order; their outcomes in the same order. */
  run(event: HookEvent, payload: Record<string, unknown>): Promise<HookOutcome[]>;
  /** The recorded runs of one hook component and how many there were in all. */
  runsOf(component: string): { runs: HookRun[]; count: number };
}

export interface HookRunnerOptions {
  hooks: readonly SetupComponent[];
  sandbox: CommandSandbox;
  /** The trial root: the hooks' working directory, writable (its `.git` read-only). */
  cwd: string;
  scratchDir: string;
  sessionId: string;
  signal: AbortSignal;
}

function tail(text: string): string {
  return text.length > MAX_RUN_OUTPUT ? `… ${text.slice(-MAX_RUN_OUTPUT)}` : text;
}

export function createHookRunner(options: HookRunnerOptions): HookRunner {
  const recorded = new Map<string, { runs: HookRun[]; count: number }>();
  const runOne = async (
    component: SetupComponent,
    event: HookEvent,
    payload: Record<string, unknown>,
  ): Promise<HookRun> => {
    const hook = component.hook!;
    const started = performance.now();
    const input = JSON.stringify({
      session_id: options.sessionId,
      cwd: options.cwd,
      hook_event_name: event,
      ...payload,
    });
    const result = await options.sandbox.run(hook.command, {
      cwd: options.cwd,
      writable: [options.cwd],
      readOnly: component.source === undefined ? [] : [component.source.path],
      protect: [join(options.cwd, ".git")],
      env: commandEnvironment(
        component.source === undefined ? {} : { HARNESSLAB_SOURCE: component.source.path },
      ),
      input,
      timeoutMs: HOOK_TIMEOUT_MS,
      signal: options.signal,
      maxOutputBytes: 64 * 1024,
      privateDir: options.scratchDir,
    });
    const error =
      result.spawnError !== undefined
        ? `could not start ${hook.command[0]}: ${result.spawnError}`
        : result.timedOut
          ? `it did not finish within ${HOOK_TIMEOUT_MS} ms`
          : result.aborted
            ? "the trial ended while it ran"
            : undefined;
    return {
      event,
      exitCode: result.exitCode,
      blocked: result.exitCode === 2 && BLOCKING_EVENTS.includes(event),
      durationMs: Math.round(performance.now() - started),
      stdout: tail(result.stdout),
      stderr: tail(result.stderr),
      ...(error === undefined ? {} : { error }),
    };
  };
  return {
    async run(event, payload) {
      const outcomes: HookOutcome[] = [];
      for (const component of options.hooks) {
        if (component.hook?.event !== event) continue;
        const run = await runOne(component, event, payload);
        const entry = recorded.get(component.id) ?? { runs: [], count: 0 };
        entry.count++;
        if (entry.runs.length < MAX_RECORDED_RUNS) entry.runs.push(run);
        recorded.set(component.id, entry);
        outcomes.push({ component: component.id, run });
      }
      return outcomes;
    },
    runsOf: (component) => {
      const entry = recorded.get(component);
      return entry === undefined
        ? { runs: [], count: 0 }
        : { runs: [...entry.runs], count: entry.count };
    },
  };
}

/** The first blocking outcome's feedback (its stderr, as Claude Code hands it to the model). */
export function blockedBy(outcomes: readonly HookOutcome[]): string | undefined {
  const blocking = outcomes.find((o) => o.run.blocked);
  if (blocking === undefined) return undefined;
  const why = blocking.run.stderr.trim() || blocking.run.stdout.trim() || "no reason given";
  return `the ${blocking.run.event} hook ${blocking.component} blocked it: ${why}`;
}
