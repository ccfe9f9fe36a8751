import type {
  ComponentContract,
  ComponentKind,
  HookEvent,
  Permission,
  PermissionAccess,
  PermissionDomain,
  Strength,
} from "../ir/index.js";

/** The hosts harnesslab knows (docs/hosts.md). A composition may still target another name; see `profileForHost`. */
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
 * Which permission declarations a capability can honour. A component's permissions are upper
 * bounds ("this may write the workspace", "no network"); the capability applies only when the
 * executor's own bounds are at least as strict for every domain the component mentions, and the
 * component restricts at least one thing the executor really enforces.
 */
export interface PermissionCondition {
  /** The component must declare at least one of these: the restrictions the executor enforces. */
  restricts: readonly Permission[];
  /**
   * Per domain, the exact access sets the executor honours (`[["read", "write"]]` accepts a
   * component that declares both and nothing else for that domain). A domain the component
   * mentions but this map leaves out is not honoured, so the capability does not apply.
   */
  honoured: Readonly<Partial<Record<PermissionDomain, readonly (readonly PermissionAccess[])[]>>>;
}

/**
 * One way a host's executor can materialize components, and the strongest strength it truly
 * achieves that way. A capability applies only to the component kinds, declared mechanisms and
 * permission shapes it lists (all when absent), so an executor can, say, enforce `policy`
 * components through its permission callback while every other component stays advisory prompt
 * guidance.
 */
export interface MechanismCapability {
  mechanism: string;
  strength: Strength;
  componentKinds?: readonly ComponentKind[];
  declaredMechanisms?: readonly string[];
  permissions?: PermissionCondition;
  /** What the component must carry (its v0.2 clauses) for the executor to materialize it. */
  carries?: ComponentCarries;
  /** For `hook`: the events the executor runs hooks on. */
  hookEvents?: readonly HookEvent[];
  description: string;
  /** How a trial confirms that the host really loaded the component (docs/hosts.md). */
  verifiedBy?: string;
}

/**
 * A component's content, as a capability needs it: an Agent Skills folder, one Markdown file (an
 * instructions file, a subagent's prompt), a stdio MCP server, a hook's event and command.
 */
export type ComponentCarries = "skill-folder" | "markdown-file" | "mcp-server" | "hook";

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
