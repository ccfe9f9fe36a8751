// A scripted agent module runs in a worker thread of its own, so the harness can always stop it.
// In the harness's own thread, an agent in a busy loop (`while (true) {}`) or one that retries a
// refused tool call in a loop of resolved promises starves the event loop: no timer fires, no
// signal is handled, and only SIGKILL ends the run. A worker thread is terminated whatever it
// runs. The agent reaches the trial only through its tools, which stay in the harness's thread
// (the policy decides every call there) and are called over the thread's message port.
import { Worker } from "node:worker_threads";
import type { ScriptedAgentContext, ScriptedTools } from "./contract.js";

/** The tools a thread may call, by their method names on `ScriptedTools`. */
const TOOL_METHODS = ["read", "write", "edit", "glob", "grep", "bash", "call"] as const;
type ToolMethod = (typeof TOOL_METHODS)[number];

/** An error as it crosses the thread boundary. */
interface ThreadError {
  name: string;
  message: string;
  stack?: string;
  /** A SyntaxError while the module loaded. */
  syntax: boolean;
}

/** How a module's agent ended, as its thread reported it. */
export type ThreadEnding =
  | { kind: "returned"; value: string | undefined }
  /** It returned something other than a string: its `typeof` (or "null"). */
  | { kind: "returned-other"; type: string }
  | { kind: "threw"; error: ThreadError }
  /** The module did not load, or exports no function. */
  | { kind: "load-failed"; error: ThreadError; noDefault: boolean }
  /** The thread itself died (out of memory, `process.exit` in the module). */
  | { kind: "thread-died"; message: string };

type FromThread =
  | { type: "call"; id: number; method: ToolMethod; args: unknown[] }
  | { type: "loaded" }
  | { type: "ended"; ending: ThreadEnding };

type ToThread =
  | { type: "result"; id: number; value: unknown }
  | { type: "rejected"; id: number; message: string }
  | { type: "abort" };

/**
 * The thread's program, plain CommonJS given as source so the same code runs from the built
 * package and from the TypeScript sources under test. After `abort`, every tool call rejects,
 * so an agent that loops over its tools ends with an error instead of spinning.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const METHODS = ${JSON.stringify(TOOL_METHODS)};
const ENDED = "the trial has ended; tool calls are no longer carried out";
const controller = new AbortController();
const pending = new Map();
let nextId = 0;
function describe(error) {
  if (error instanceof Error)
    return { name: error.name, message: error.message, stack: error.stack, syntax: error instanceof SyntaxError };
  return { name: "Error", message: typeof error === "string" ? error : String(error), syntax: false };
}
parentPort.on("message", (message) => {
  if (message.type === "abort") {
    controller.abort();
    for (const { reject } of pending.values()) reject(new Error(ENDED));
    pending.clear();
    return;
  }
  const waiting = pending.get(message.id);
  if (waiting === undefined) return;
  pending.delete(message.id);
  if (message.type === "result") waiting.resolve(message.value);
  else waiting.reject(new Error(message.message));
});
const tools = {};
for (const method of METHODS)
  tools[method] = (...args) => new Promise((resolve, reject) => {
    if (controller.signal.aborted) return reject(new Error(ENDED));
    const id = ++nextId;
    pending.set(id, { resolve, reject });
    parentPort.postMessage({ type: "call", id, method, args });
  });
const end = (ending) => parentPort.postMessage({ type: "ended", ending });
(async () => {
  let agent;
  try {
    const loaded = await import(workerData.moduleUrl);
    agent = loaded.default;
  } catch (error) {
    return end({ kind: "load-failed", error: describe(error), noDefault: false });
  }
  if (typeof agent !== "function")
    return end({ kind: "load-failed", error: { name: "Error", message: "no default export", syntax: false }, noDefault: true });
  parentPort.postMessage({ type: "loaded" });
  if (workerData.context === null) return;
  const context = Object.freeze({ ...workerData.context, tools: Object.freeze(tools), signal: controller.signal });
  try {
    const value = await agent(context);
    if (value === undefined || typeof value === "string") end({ kind: "returned", value });
    else end({ kind: "returned-other", type: value === null ? "null" : typeof value });
  } catch (error) {
    end({ kind: "threw", error: describe(error) });
  }
})();
`;

/** The parts of the agent's context that travel to its thread (everything but tools and signal). */
export type ThreadContext = Omit<ScriptedAgentContext, "tools" | "signal">;

export interface AgentThread {
  /** How the agent ended, once it has (never rejects). */
  ending: Promise<ThreadEnding>;
  /** Tool calls now reject in the thread; the agent may still be running. */
  abort(): void;
  /** Ends the thread, whatever it is doing. */
  terminate(): Promise<void>;
}

/**
 * Starts `moduleUrl`'s default export in a thread with `context`, its tool calls carried out by
 * `tools` here. With `context` null the thread only loads the module (the pre-run check).
 */
export function startAgentThread(
  moduleUrl: string,
  context: ThreadContext | null,
  tools: ScriptedTools | null,
): AgentThread {
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { moduleUrl, context },
    // The agent's own output goes where the harness's goes, as it did in the harness's thread.
    stdout: false,
    stderr: false,
  });
  let aborted = false;
  const send = (message: ToThread) => {
    try {
      worker.postMessage(message);
    } catch {
      // The thread is gone, or the value cannot be cloned (answered below).
    }
  };
  const ending = new Promise<ThreadEnding>((resolve) => {
    worker.on("message", (message: FromThread) => {
      if (message.type === "ended") resolve(message.ending);
      else if (message.type === "loaded" && context === null)
        resolve({ kind: "returned", value: undefined });
      else if (message.type === "call") void answer(message);
    });
    worker.on("error", (error) =>
      resolve({ kind: "thread-died", message: `the agent's thread failed: ${error.message}` }),
    );
    worker.on("exit", (code) =>
      resolve({ kind: "thread-died", message: `the agent's thread exited with code ${code}` }),
    );
  });

  async function answer(message: Extract<FromThread, { type: "call" }>): Promise<void> {
    if (aborted) return;
    const method = TOOL_METHODS.includes(message.method) ? message.method : undefined;
    if (tools === null || method === undefined) {
      send({ type: "rejected", id: message.id, message: `no tool ${String(message.method)}` });
      return;
    }
    try {
      const tool = tools[method] as (...args: unknown[]) => Promise<unknown>;
      const value = await tool(...message.args);
      if (aborted) return;
      try {
        worker.postMessage({ type: "result", id: message.id, value } satisfies ToThread);
      } catch (error) {
        send({ type: "rejected", id: message.id, message: (error as Error).message });
      }
    } catch (error) {
      if (!aborted) send({ type: "rejected", id: message.id, message: (error as Error).message });
    }
  }

  return {
    ending,
    abort() {
      if (aborted) return;
      aborted = true;
      send({ type: "abort" });
    },
    async terminate() {
      aborted = true;
      await worker.terminate().catch(() => {});
    },
  };
}
