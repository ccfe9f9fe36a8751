import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { basename, isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { applyPatch } from "../../workspace/index.js";
import type { TraceEvent } from "../receipt.js";
import type { ScriptedAgent } from "./contract.js";

export type LoadedAgent =
  | { ok: true; agent: ScriptedAgent; version: string }
  /** `config_invalid`: the variant names an agent that does not exist; the environment is at fault. */
  | { ok: false; status: "infra_error"; error: string }
  /** The module exists but failed while loading: that is the agent's own failure. */
  | { ok: false; status: "agent_error"; error: string };

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
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(spec).href)) as Record<string, unknown>;
  } catch (error) {
    return {
      ok: false,
      status: "agent_error",
      error: `agent module failed to load: ${(error as Error)?.message ?? String(error)}`,
    };
  }
  if (typeof loaded.default !== "function") {
    return {
      ok: false,
      status: "infra_error",
      error: `agent module ${basename(spec)} has no default-exported function`,
    };
  }
  return { ok: true, agent: loaded.default as ScriptedAgent, version: sha256(source) };
}
