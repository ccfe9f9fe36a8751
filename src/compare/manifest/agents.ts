// The `agent` field of a scripted variant: a built-in or a module path.
import { portablePathProblem } from "./paths.js";

export type AgentReference =
  | { kind: "nop" }
  | { kind: "oracle"; patch: string }
  | { kind: "module"; module: string };

const ORACLE_PREFIX = "oracle:";

/**
 * `"nop"` (does nothing), `"oracle:<patch path>"` (applies the patch, proving the task is
 * solvable) or a module path; both paths relative to the manifest's directory. A module
 * literally named `nop` is written `./nop`.
 */
export function parseAgentReference(
  value: string,
): { ok: true; agent: AgentReference } | { ok: false; problem: string } {
  if (value === "nop") return { ok: true, agent: { kind: "nop" } };
  if (value.startsWith(ORACLE_PREFIX)) {
    const patch = value.slice(ORACLE_PREFIX.length);
    const problem = portablePathProblem(patch);
    if (problem !== undefined) return { ok: false, problem: `oracle patch path ${problem}` };
    return { ok: true, agent: { kind: "oracle", patch } };
  }
  const problem = portablePathProblem(value);
  if (problem !== undefined)
    return {
      ok: false,
      problem: `expected "nop", "oracle:<patch path>" or an agent module path; the module path ${problem}`,
    };
  return { ok: true, agent: { kind: "module", module: value } };
}

/** The same agent written two ways (`./a.mjs`, `a.mjs`) compares equal. */
export function agentIdentity(agent: AgentReference): string {
  const clean = (path: string) =>
    path
      .split("/")
      .filter((segment) => segment !== ".")
      .join("/");
  switch (agent.kind) {
    case "nop":
      return "nop";
    case "oracle":
      return `oracle:${clean(agent.patch)}`;
    case "module":
      return `module:${clean(agent.module)}`;
  }
}
