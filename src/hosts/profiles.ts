import {
  type ComponentContract,
  type ComponentKind,
  compareStrength,
  HOOK_EVENTS,
  type HookEvent,
  type PermissionAccess,
  type PermissionDomain,
  weakerStrength,
} from "../ir/index.js";
import {
  type ComponentCarries,
  HOST_IDS,
  type HostId,
  type HostProfile,
  type Materialization,
  type MaterializationRequest,
  type MechanismCapability,
  type PermissionCondition,
} from "./types.js";

/** The mechanism every v0.1 executor uses: a bullet of guidance in the run's prompt preamble. */
export const PROMPT_PREAMBLE_MECHANISM = "prompt-preamble";

const promptGuidance: MechanismCapability = {
  mechanism: PROMPT_PREAMBLE_MECHANISM,
  strength: "advisory",
  description:
    "the component's description is written into the run's prompt preamble; nothing checks that the agent follows it",
};

/** The mechanism a `.harness` binding names when a host's permission callback should enforce a policy. */
export const PERMISSION_CALLBACK_MECHANISM = "permission-callback";

/**
 * What the harness's tool policy (`src/policy`) guarantees for every tool call it decides:
 * writes only to the task's expected files (reads inside the trial root), Bash only the
 * manifest's validation commands, and no tool that reaches the network. A policy component is
 * enforced when it restricts writes or denies the network and asks for nothing looser than that.
 */
const TOOL_POLICY_BOUNDS: PermissionCondition = {
  restricts: [
    { domain: "workspace", access: "write" },
    { domain: "network", access: "deny" },
  ],
  honoured: {
    workspace: [["write"], ["read", "write"]],
    process: [["allow"]],
    network: [["deny"]],
  },
};

const permissionCallback: MechanismCapability = {
  mechanism: PERMISSION_CALLBACK_MECHANISM,
  strength: "enforced",
  componentKinds: ["policy"],
  declaredMechanisms: [PERMISSION_CALLBACK_MECHANISM],
  permissions: TOOL_POLICY_BOUNDS,
  description:
    "every tool call is decided by the harness's tool policy before it runs and recorded in permission-decisions.json: writes only to the task's files, Bash only the validation commands, no network tool",
};

/**
 * The mechanisms that hand a component itself to the host (its files, its server, its command)
 * rather than a line about it. A binding names one to ask for it; the executor materializes it
 * before the agent starts, and the trial's setup.json records what the host reported.
 */
export const SETUP_MECHANISMS = [
  "native-skill",
  "system-instruction",
  "mcp-server",
  "native-hook",
  "subagent",
] as const;
export type SetupMechanism = (typeof SETUP_MECHANISMS)[number];

export function isSetupMechanism(mechanism: string | null): mechanism is SetupMechanism {
  return (SETUP_MECHANISMS as readonly (string | null)[]).includes(mechanism);
}

/** One setup capability: the mechanism, for the component kind that carries what it needs. */
function setupCapability(
  mechanism: SetupMechanism,
  description: string,
  verifiedBy: string,
  extra: Pick<MechanismCapability, "hookEvents"> = {},
): MechanismCapability {
  const shape: Record<SetupMechanism, [ComponentKind, ComponentCarries]> = {
    "native-skill": ["skill", "skill-folder"],
    "system-instruction": ["instructions", "markdown-file"],
    "mcp-server": ["tool", "mcp-server"],
    "native-hook": ["hook", "hook"],
    subagent: ["subagent", "markdown-file"],
  };
  const [kind, carried] = shape[mechanism];
  return {
    mechanism,
    strength: "wired",
    componentKinds: [kind],
    declaredMechanisms: [mechanism],
    carries: carried,
    ...extra,
    description,
    verifiedBy,
  };
}

/** The hook events the scripted host runs hooks on (the rest have no moment in a scripted run). */
const SCRIPTED_HOOK_EVENTS: readonly HookEvent[] = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "Stop",
];

const SCRIPTED_SETUP: readonly MechanismCapability[] = [
  setupCapability(
    "native-skill",
    "the skill's folder is copied read-only outside the trial and handed to the agent in ctx.setup (name, description, SKILL.md, files)",
    "every file copied matches its hash in the IR, before the run and after it",
  ),
  setupCapability(
    "system-instruction",
    "the Markdown file is copied read-only outside the trial and handed to the agent in ctx.setup as instructions",
    "the file copied matches its hash in the IR, before the run and after it",
  ),
  setupCapability(
    "mcp-server",
    "the stdio MCP server is started in the trial's sandbox; its tools are callable through ctx.tools.call as mcp__<component>__<tool>, each call decided by the tool policy",
    "the server answered MCP's initialize and tools/list; setup.json keeps the tool list",
  ),
  setupCapability(
    "native-hook",
    "the hook's command runs in the trial's sandbox at its event, with the event's JSON on stdin (exit 2 in PreToolUse blocks the call)",
    "the command's program exists; every run of it is recorded in setup.json",
    { hookEvents: SCRIPTED_HOOK_EVENTS },
  ),
  setupCapability(
    "subagent",
    "the subagent's name, description, prompt and tools are handed to the agent in ctx.setup",
    "the prompt file copied matches its hash in the IR",
  ),
];

const CLAUDE_CODE_SETUP: readonly MechanismCapability[] = [
  setupCapability(
    "native-skill",
    "the skill's folder, materialized read-only outside the trial, is linked into one harness-owned local plugin (harnesslab-setup) and enabled by the `skills` option; the Skill tool may load only the variant's skills",
    "Claude Code's init message lists the skill as harnesslab-setup:<name>",
  ),
  setupCapability(
    "system-instruction",
    "the Markdown file is appended to Claude Code's system prompt (systemPrompt.append), under a marker fresh for the run",
    "the endpoint proxy saw the marker in a model request Claude Code sent (unconfirmed without the sandbox, where no proxy runs)",
  ),
  setupCapability(
    "mcp-server",
    "the stdio MCP server is started by harnesslab in the trial's sandbox and relayed to Claude Code as an in-process SDK server; its tools are mcp__<component>__<tool>, each call decided by the tool policy",
    "Claude Code's init message lists the server as connected, with its tools",
  ),
  setupCapability(
    "native-hook",
    "an SDK hook callback at the event runs the hook's command in the trial's sandbox, its JSON on stdin, its exit read as Claude Code reads a command hook's (2 blocks PreToolUse, UserPromptSubmit and Stop)",
    "Claude Code called the hook (setup.json records every run); a hook whose event never came is unconfirmed",
    { hookEvents: HOOK_EVENTS },
  ),
  setupCapability(
    "subagent",
    "the subagent is passed as an `agents` entry (description, prompt file, tools); the Agent tool may start only the variant's subagents",
    "Claude Code's init message lists the agent",
  ),
];

const CODEX_SETUP: readonly MechanismCapability[] = [
  setupCapability(
    "native-skill",
    "the skill's folder, materialized read-only outside the trial, is linked into the run's isolated CODEX_HOME as skills/<name>-<fresh marker>",
    "the endpoint proxy saw Codex list the skill to the model, under its folder named afresh for the run",
  ),
  setupCapability(
    "system-instruction",
    "the Markdown file becomes the global AGENTS.md of the run's isolated CODEX_HOME, under a marker fresh for the run",
    "the endpoint proxy saw the marker in a model request Codex sent",
  ),
  setupCapability(
    "mcp-server",
    "the stdio MCP server is started by harnesslab in the trial's sandbox; Codex's [mcp_servers.<component>] runs a small client joined to a relay of it (Codex never starts the server itself)",
    "Codex connected and listed the server's tools",
  ),
];

const PI_SETUP: readonly MechanismCapability[] = [
  setupCapability(
    "system-instruction",
    "the Markdown file is appended to Pi's system prompt (its resource loader's appendSystemPrompt), under a marker fresh for the run",
    "the system prompt Pi's session built carries the marker",
  ),
];

const NOTHING: Materialization = { strength: "unsupported", mechanism: null };

function sameAccessSet(
  declared: ReadonlySet<PermissionAccess>,
  honoured: readonly PermissionAccess[],
): boolean {
  return declared.size === honoured.length && honoured.every((access) => declared.has(access));
}

function permissionsFit(condition: PermissionCondition, component: ComponentContract): boolean {
  const byDomain = new Map<PermissionDomain, Set<PermissionAccess>>();
  for (const { domain, access } of component.permissions) {
    const accesses = byDomain.get(domain) ?? new Set<PermissionAccess>();
    accesses.add(access);
    byDomain.set(domain, accesses);
  }
  const restricts = condition.restricts.some(
    ({ domain, access }) => byDomain.get(domain)?.has(access) === true,
  );
  if (!restricts) return false;
  for (const [domain, accesses] of byDomain) {
    const sets = condition.honoured[domain];
    if (sets === undefined || !sets.some((set) => sameAccessSet(accesses, set))) return false;
  }
  return true;
}

function applies(capability: MechanismCapability, request: MaterializationRequest): boolean {
  if (capability.componentKinds !== undefined) {
    const kind = request.component?.componentKind;
    if (kind === undefined || !capability.componentKinds.includes(kind)) return false;
  }
  if (capability.declaredMechanisms !== undefined) {
    const declared = request.binding?.mechanism;
    if (declared === undefined || !capability.declaredMechanisms.includes(declared)) return false;
  }
  if (capability.permissions !== undefined) {
    if (request.component === undefined) return false;
    if (!permissionsFit(capability.permissions, request.component)) return false;
  }
  if (capability.carries !== undefined) {
    if (request.component === undefined) return false;
    if (!carries(request.component, capability.carries)) return false;
  }
  if (capability.hookEvents !== undefined) {
    const event = request.component?.hook?.event;
    if (event === undefined || !capability.hookEvents.includes(event)) return false;
  }
  return true;
}

function carries(component: ComponentContract, what: ComponentCarries): boolean {
  switch (what) {
    case "skill-folder":
      return component.source?.type === "directory" && component.source.skill !== undefined;
    case "markdown-file":
      return component.source?.type === "file";
    case "mcp-server":
      return component.mcp !== undefined;
    case "hook":
      return component.hook !== undefined;
  }
}

/**
 * The realization rule shared by every profile: nothing is materialized without a binding or
 * when the binding itself says `unsupported`; otherwise the strongest applicable capability is
 * used, capped at the strength the binding declares (a host never realizes more than was asked).
 */
export function realizeWithCapabilities(
  capabilities: readonly MechanismCapability[],
  request: MaterializationRequest,
): Materialization {
  const binding = request.binding;
  if (binding === undefined || binding.strength === "unsupported") return NOTHING;
  let best: MechanismCapability | undefined;
  for (const capability of capabilities) {
    if (!applies(capability, request)) continue;
    if (best === undefined || compareStrength(capability.strength, best.strength) > 0)
      best = capability;
  }
  if (best === undefined || best.strength === "unsupported") return NOTHING;
  return { strength: weakerStrength(binding.strength, best.strength), mechanism: best.mechanism };
}

function profile(
  id: string,
  known: boolean,
  title: string,
  stronger: readonly MechanismCapability[] = [],
): HostProfile {
  const capabilities = [...stronger, promptGuidance];
  return {
    id,
    known,
    title,
    capabilities,
    realize: (request) => realizeWithCapabilities(capabilities, request),
  };
}

// A strength is raised only where the executor enforces it, and only for bindings that declare
// the mechanism the executor implements, so every other binding (and every composition written
// for the v0.1 reference) still resolves to advisory prompt guidance:
// - claude-code decides every call in a PreToolUse hook (canUseTool as a second line), qoder in
//   its canUseTool callback and PreToolUse hook, scripted inside each of its tools; all three
//   put the call to the trial's tool policy, which records the decision.
// - codex has no permission callback: its sandbox confines writes to the workspace and turns
//   the network off, but the per-file write surface is only audited after the fact, when the
//   write has already happened, so a policy stays advisory there.
// - pi runs answer-only without tools: there is nothing to enforce a policy on.
// - a component that carries its content (a skill folder, an instructions file, an MCP server,
//   a hook, a subagent) and whose binding asks for a setup mechanism is `wired` on the hosts
//   whose executor hands it to the host; the trial confirms it by what the host reports.
const PROFILES: Readonly<Record<HostId, HostProfile>> = {
  qoder: profile("qoder", true, "Qoder (Qoder agent SDK)", [permissionCallback]),
  pi: profile("pi", true, "Pi (Pi coding-agent SDK)", [...PI_SETUP]),
  "claude-code": profile("claude-code", true, "Claude Code (Claude Agent SDK)", [
    permissionCallback,
    ...CLAUDE_CODE_SETUP,
  ]),
  codex: profile("codex", true, "Codex (Codex SDK)", [...CODEX_SETUP]),
  scripted: profile("scripted", true, "Scripted agent (offline runs and tests)", [
    permissionCallback,
    ...SCRIPTED_SETUP,
  ]),
};

export function isHostId(value: string): value is HostId {
  return (HOST_IDS as readonly string[]).includes(value);
}

export function hostProfile(id: HostId): HostProfile {
  return PROFILES[id];
}

/**
 * The profile used to resolve a composition whose target is `host`. Names that are not a known
 * host (the language allows any identifier, e.g. `qoder-cli`) get the generic v0.1 profile, which
 * realizes bindings as advisory prompt guidance like the reference's executors did: no executor
 * runs such a host, so nothing can be enforced there.
 */
export function profileForHost(host: string): HostProfile {
  return isHostId(host) ? PROFILES[host] : profile(host, false, `Unknown host '${host}'`);
}
