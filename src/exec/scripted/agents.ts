import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { escapeRegExp, minimalEnv, runCommand } from "../../shared/index.js";
import { applyPatch } from "../../workspace/index.js";
import type { TraceEvent } from "../receipt.js";
import { startAgentThread, type ThreadEnding } from "./agent-thread.js";
import type { ScriptedAgent, ScriptedAgentContext } from "./contract.js";

/** How an agent's run ended, as far as the agent itself goes (the deadline is the executor's). */
export type AgentEnding =
  | { kind: "returned"; value: string | undefined }
  /** It returned something other than a string: its `typeof` (or "null"). */
  | { kind: "returned-other"; type: string }
  /** It threw: `text` is the message with where in the agent's files it arose, when known. */
  | { kind: "threw"; text: string }
  /** A module that did not load or exports no function: the experiment is at fault. */
  | { kind: "load-failed"; error: string }
  /** The module's thread ended under it (`process.exit`, out of memory). */
  | { kind: "died"; error: string };

/** An agent started on a trial. */
interface RunningAgent {
  ending: Promise<AgentEnding>;
  /** Tool calls reject from now on, and whatever the agent still runs is ended. */
  stop(): Promise<void>;
}

export type LoadedAgent =
  | { ok: true; start: (context: ScriptedAgentContext) => RunningAgent; version: string }
  /**
   * `config_invalid`: the variant names an agent that does not exist, does not load or exports
   * no function; the experiment is at fault, not the trial.
   */
  | { ok: false; status: "infra_error"; error: string };

/** A built-in agent (harness code, which always returns) runs in the harness's own thread. */
function inProcess(agent: ScriptedAgent): LoadedAgent & { ok: true } {
  return {
    ok: true,
    version: "",
    start: (context) => ({
      ending: Promise.resolve()
        .then(() => agent(context))
        .then(
          (value): AgentEnding =>
            value === undefined || typeof value === "string"
              ? { kind: "returned", value }
              : { kind: "returned-other", type: value === null ? "null" : typeof value },
          (error: unknown): AgentEnding => ({ kind: "threw", text: errorMessage(error) }),
        ),
      stop: async () => {},
    }),
  };
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === "string" ? error : String(error);
}

const nop: ScriptedAgent = () => "nothing to do";

/**
 * `oracle:<patch>` applies a reference patch as the harness (with `git apply`), not through the
 * agent tools: it proves a task solvable and its graders satisfiable, so it must not depend on
 * the tool policy it is used to check. Its changes are therefore absent from the decisions log.
 */
function oracle(patchPath: string, patch: Buffer, trace: TraceEvent[]): ScriptedAgent {
  return async ({ cwd }) => {
    const applied = await applyPatch(cwd, patch);
    trace.push({ type: "oracle_apply", patch: basename(patchPath), ok: applied.ok });
    if (!applied.ok)
      throw new Error(`the oracle patch ${basename(patchPath)} does not apply: ${applied.message}`);
    return `applied ${basename(patchPath)}`;
  };
}

function sha256(content: Buffer): string {
  return `sha256:${createHash("sha256").update(content).digest("hex")}`;
}

async function readIfFile(path: string): Promise<Buffer | null> {
  try {
    if (!(await stat(path)).isFile()) return null;
    return await readFile(path);
  } catch {
    return null;
  }
}

/**
 * Resolves a variant's `agent` setting. Module agents run in a worker thread of the harness
 * process: they are offline test code written by the experiment's author, not the agent under
 * test, and they reach the trial only through the tools they are given (see docs/policy.md).
 * The module is loaded when it starts, in its thread (`checkAgentModule` checks it before a run).
 */
export async function loadScriptedAgent(
  spec: string | undefined,
  trace: TraceEvent[],
): Promise<LoadedAgent> {
  if (spec === undefined || spec === "") {
    return {
      ok: false,
      status: "infra_error",
      error: "the scripted host needs an `agent` (nop, oracle:<patch>, or a module path)",
    };
  }
  if (spec === "nop") return { ...inProcess(nop), version: "builtin:nop" };
  if (spec.startsWith("oracle:")) {
    const patchPath = spec.slice("oracle:".length);
    if (!isAbsolute(patchPath)) {
      return {
        ok: false,
        status: "infra_error",
        error: `oracle patch path must be absolute, got ${patchPath}`,
      };
    }
    const patch = await readIfFile(patchPath);
    if (patch === null)
      return { ok: false, status: "infra_error", error: `oracle patch not found: ${patchPath}` };
    return { ...inProcess(oracle(patchPath, patch, trace)), version: sha256(patch) };
  }
  if (!isAbsolute(spec)) {
    return {
      ok: false,
      status: "infra_error",
      error: `agent module path must be absolute (resolve it against the manifest), got ${spec}`,
    };
  }
  const source = await readIfFile(spec);
  if (source === null)
    return { ok: false, status: "infra_error", error: `agent module not found: ${spec}` };
  return { ok: true, start: (context) => moduleInThread(spec, context), version: sha256(source) };
}

/** A module's agent, started in a thread of its own (see agent-thread.ts). */
function moduleInThread(modulePath: string, context: ScriptedAgentContext): RunningAgent {
  const { tools, signal: _signal, ...rest } = context;
  const thread = startAgentThread(pathToFileURL(modulePath).href, rest, tools);
  return {
    ending: thread.ending.then((ending) => agentEnding(modulePath, ending)),
    stop: async () => {
      thread.abort();
      await thread.terminate();
    },
  };
}

async function agentEnding(modulePath: string, ending: ThreadEnding): Promise<AgentEnding> {
  switch (ending.kind) {
    case "returned":
    case "returned-other":
      return ending;
    case "threw": {
      const where = locationIn(ending.error.stack, dirname(modulePath));
      return {
        kind: "threw",
        text: `${ending.error.message}${where === null ? "" : ` (at ${where})`}`,
      };
    }
    case "load-failed":
      return { kind: "load-failed", error: await loadFailure(modulePath, ending) };
    case "thread-died":
      return { kind: "died", error: ending.message };
  }
}

/** How long the pre-run check waits for a module to load before it calls the module stuck. */
const CHECK_LOAD_MS = 30_000;

/**
 * Loads an agent module in a thread, as every trial will, and says why it cannot be used: a
 * module that does not load (a syntax error, a throw at its top level, an import that fails),
 * never finishes loading, or exports no function is the experiment's configuration at fault, not
 * a trial's failure. Counted as the agent's, a broken module would make one variant fail every
 * trial and another look better than it is.
 */
export async function checkAgentModule(
  modulePath: string,
  timeoutMs = CHECK_LOAD_MS,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const thread = startAgentThread(pathToFileURL(modulePath).href, null, null);
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<"stuck">((resolve) => {
    timer = setTimeout(() => resolve("stuck"), timeoutMs);
  });
  try {
    const ending = await Promise.race([thread.ending, stuck]);
    if (ending === "stuck")
      return {
        ok: false,
        error: `agent module ${basename(modulePath)} did not finish loading within ${timeoutMs / 1000} s (its top-level code never returns)`,
      };
    if (ending.kind === "load-failed")
      return { ok: false, error: await loadFailure(modulePath, ending) };
    if (ending.kind === "thread-died")
      return {
        ok: false,
        error: `agent module ${basename(modulePath)} failed to load: ${ending.message}`,
      };
    return { ok: true };
  } finally {
    clearTimeout(timer);
    await thread.terminate();
  }
}

async function loadFailure(
  modulePath: string,
  failure: Extract<ThreadEnding, { kind: "load-failed" }>,
): Promise<string> {
  if (failure.noDefault)
    return `agent module ${basename(modulePath)} has no default-exported function (write \`export default async function agent(ctx) { … }\`)`;
  const { error } = failure;
  const where =
    locationIn(error.stack, dirname(modulePath)) ??
    (error.syntax ? await syntaxErrorLine(modulePath) : null) ??
    basename(modulePath);
  const line = `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`;
  return `agent module ${where} failed to load: ${line}`;
}

/**
 * `file:line` of a syntax error in the module itself. Node's import error carries no location
 * for it, but `node --check` prints one (a syntax error in a module it imports stays unplaced).
 */
async function syntaxErrorLine(modulePath: string): Promise<string | null> {
  const checked = await runCommand([process.execPath, "--check", modulePath], {
    cwd: dirname(modulePath),
    env: minimalEnv(),
    timeoutMs: 10_000,
  });
  const line = new RegExp(`^${escapeRegExp(modulePath)}:(\\d+)`, "m").exec(checked.stderr)?.[1];
  return line === undefined ? null : `${basename(modulePath)}:${line}`;
}

/**
 * Where in the agent's own files an error arose (`shared.mjs:12:7`), from its stack: the first
 * frame in a file under the agent module's directory.
 */
function locationIn(stack: string | undefined, moduleDir: string): string | null {
  if (stack === undefined) return null;
  const dirUrl = pathToFileURL(moduleDir).href;
  for (const match of stack.matchAll(/(file:\/\/[^\s():]+):(\d+)(?::(\d+))?/g)) {
    const [, url, line, column] = match;
    if (url === undefined || !url.startsWith(`${dirUrl}/`)) continue;
    const file = decodeURIComponent(url.slice(dirUrl.length + 1));
    return column === undefined ? `${file}:${line}` : `${file}:${line}:${column}`;
  }
  return null;
}
