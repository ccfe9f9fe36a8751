import type { ComponentContract, ComponentKind, Strength } from "../ir/index.js";

/** The hosts harnesslab knows (SPEC §2). A composition may still target another name; see `profileForHost`. */
export const HOST_IDS = ["qoder", "pi", "claude-code", "codex", "scripted"] as const;
export type HostId = (typeof HOST_IDS)[number];

/** A binding as the resolver hands it to a host: what the `.harness` source declared. */
export interface DeclaredBinding {
  mechanism: string;
  strength: Strength;
  notes?: string;
}

/** What the resolver asks a host profile: how would your executor materialize this component? */
export interface MaterializationRequest {
  /** The host being resolved for, as written in the composition (or the `host` override). */
  host: string;
  componentId: string;
  /** Absent only for hand-edited bundles that lack the contract. */
  component: ComponentContract | undefined;
  /** The binding declared for (component, host); absent when the source declares none. */
  binding: DeclaredBinding | undefined;
}

/** What the executor really does with the component. `mechanism` is null when it does nothing. */
export interface Materialization {
  strength: Strength;
  mechanism: string | null;
}

/**
 * One way a host's executor can materialize components, and the strongest strength it truly
 * achieves that way. A capability applies only to the component kinds and declared mechanisms
 * it lists (all when absent), so a later executor can, say, enforce `policy` components through
 * its permission callback while every other component stays advisory prompt guidance.
 */
export interface MechanismCapability {
  mechanism: string;
  strength: Strength;
  componentKinds?: readonly ComponentKind[];
  declaredMechanisms?: readonly string[];
  description: string;
}

export interface HostProfile {
  /** A `HostId` for known hosts; for others, the name the composition used. */
  id: string;
  known: boolean;
  title: string;
  /** Strongest first. */
  capabilities: readonly MechanismCapability[];
  /** Decides the realized strength and mechanism for one component on this host. */
  realize(request: MaterializationRequest): Materialization;
}
