import { compareStrength, weakerStrength } from "../ir/index.js";
import {
  HOST_IDS,
  type HostId,
  type HostProfile,
  type Materialization,
  type MaterializationRequest,
  type MechanismCapability,
} from "./types.js";

/** The mechanism every v0.1 executor uses: a bullet of guidance in the run's prompt preamble. */
export const PROMPT_PREAMBLE_MECHANISM = "prompt-preamble";

const promptGuidance: MechanismCapability = {
  mechanism: PROMPT_PREAMBLE_MECHANISM,
  strength: "advisory",
  description:
    "the component's description is written into the run's prompt preamble; nothing checks that the agent follows it",
};

const NOTHING: Materialization = { strength: "unsupported", mechanism: null };

function applies(capability: MechanismCapability, request: MaterializationRequest): boolean {
  if (capability.componentKinds !== undefined) {
    const kind = request.component?.componentKind;
    if (kind === undefined || !capability.componentKinds.includes(kind)) return false;
  }
  if (capability.declaredMechanisms !== undefined) {
    const declared = request.binding?.mechanism;
    if (declared === undefined || !capability.declaredMechanisms.includes(declared)) return false;
  }
  return true;
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

function advisoryProfile(id: string, known: boolean, title: string): HostProfile {
  // v0.1 boundary (SPEC §5.1): no executor enforces anything yet, so every host realizes
  // bindings only as advisory prompt guidance. A later issue raises a capability's strength
  // for a host only once its executor really enforces that mechanism.
  const capabilities = [promptGuidance];
  return {
    id,
    known,
    title,
    capabilities,
    realize: (request) => realizeWithCapabilities(capabilities, request),
  };
}

const PROFILES: Readonly<Record<HostId, HostProfile>> = {
  qoder: advisoryProfile("qoder", true, "Qoder (Qoder agent SDK)"),
  pi: advisoryProfile("pi", true, "Pi (Pi coding-agent SDK)"),
  "claude-code": advisoryProfile("claude-code", true, "Claude Code (Claude Agent SDK)"),
  codex: advisoryProfile("codex", true, "Codex (Codex SDK)"),
  scripted: advisoryProfile("scripted", true, "Scripted agent (offline runs and tests)"),
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
 * realizes bindings as advisory prompt guidance like the reference's executors did.
 */
export function profileForHost(host: string): HostProfile {
  return isHostId(host) ? PROFILES[host] : advisoryProfile(host, false, `Unknown host '${host}'`);
}
