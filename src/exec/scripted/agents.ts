import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { escapeRegExp, minimalEnv, runCommand } from "../../shared/index.js";
import { applyPatch } from "../../workspace/index.js";
import type { TraceEvent } from "../receipt.js";
import type { ScriptedAgent } from "./contract.js";

export type LoadedAgent =
  | { ok: true; agent: ScriptedAgent; version: string }
  /**
   * `config_invalid`: the variant names an agent that does not exist, does not load or exports
   * no function; the experiment is at fault, not the trial.
   */
  | { ok: false; status: "infra_error"; error: string };

const nop: ScriptedAgent = () => "nothing to do";

/**
 * `oracle:<patch>` applies a reference patch as the harness (with `git apply`), not through the
 * agent tools: it proves a task solvable and its graders satisfiable, so it must not depend on
 * the tool policy it is used to check. Its changes are therefore absent from the decisions log.
 */
function oracle(
  patchPath: string,
  patch: Buffer,
  scratchDir: string,
  trace: TraceEvent[],
): ScriptedAgent {
  return async ({ cwd }) => {
    const applied = await applyPatch(cwd, patch, { tempDir: scratchDir });
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
 * Resolves a variant's `agent` setting. Module agents run in the harness process: they are
 * offline test code written by the experiment's author, not the agent under test, and they reach
 * the trial only through the tools they are given (see docs/policy.md).
 */
export async function loadScriptedAgent(
  spec: string | undefined,
  scratchDir: string,
  trace: TraceEvent[],
): Promise<LoadedAgent> {
  if (spec === undefined || spec === "") {
    return {
      ok: false,
      status: "infra_error",
      error: "the scripted host needs an `agent` (nop, oracle:<patch>, or a module path)",
    };
  }
  if (spec === "nop") return { ok: true, agent: nop, version: "builtin:nop" };
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
    return { ok: true, agent: oracle(patchPath, patch, scratchDir, trace), version: sha256(patch) };
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
  const imported = await importAgentModule(spec);
  if (!imported.ok) return { ok: false, status: "infra_error", error: imported.error };
  return { ok: true, agent: imported.agent, version: sha256(source) };
}

/**
 * Imports an agent module and takes its default export. A module that does not load (a syntax
 * error, a throw at its top level, an import that fails) or exports no function is the
 * experiment's configuration at fault, not a trial's failure: counted as the agent's, a broken
 * module would make one variant fail every trial and another look better than it is.
 */
export async function importAgentModule(
  modulePath: string,
): Promise<{ ok: true; agent: ScriptedAgent } | { ok: false; error: string }> {
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(modulePath).href)) as Record<string, unknown>;
  } catch (error) {
    const where =
      locationIn(error, dirname(modulePath)) ??
      (error instanceof SyntaxError ? await syntaxErrorLine(modulePath) : null) ??
      basename(modulePath);
    return { ok: false, error: `agent module ${where} failed to load: ${errorLine(error)}` };
  }
  if (typeof loaded.default !== "function")
    return {
      ok: false,
      error: `agent module ${basename(modulePath)} has no default-exported function (write \`export default async function agent(ctx) { … }\`)`,
    };
  return { ok: true, agent: loaded.default as ScriptedAgent };
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

function errorLine(error: unknown): string {
  if (error instanceof Error)
    return `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`;
  return String(error);
}

/**
 * Where in the agent's own files an error arose (`shared.mjs:12:7`), from its stack: the first
 * frame in a file under the agent module's directory.
 */
export function locationIn(error: unknown, moduleDir: string): string | null {
  const stack = error instanceof Error ? (error.stack ?? "") : "";
  const dirUrl = pathToFileURL(moduleDir).href;
  for (const match of stack.matchAll(/(file:\/\/[^\s():]+):(\d+)(?::(\d+))?/g)) {
    const [, url, line, column] = match;
    if (url === undefined || !url.startsWith(`${dirUrl}/`)) continue;
    const file = decodeURIComponent(url.slice(dirUrl.length + 1));
    return column === undefined ? `${file}:${line}` : `${file}:${line}:${column}`;
  }
  return null;
}
