import { type HostId, profileForHost } from "../hosts/index.js";
import {
  type ComponentContract,
  contentHash,
  type HarnessIrBundle,
  type HarnessRevision,
  type PluginManifest,
  type Realization,
  type ResolutionReport,
  revisionIdOf,
  type TargetBinding,
} from "../ir/index.js";
import { mergePermissions } from "./permissions.js";
import {
  type RealizationInput,
  realizeImplicit,
  realizeRequirement,
  unprovidedRequirement,
} from "./realize.js";
import { selectPluginVersion } from "./select.js";

export interface ResolveOptions {
  /**
   * Resolve for this host instead of the composition's `target`: bindings are looked up for it,
   * its profile decides the realized strengths, and the revision and report name it. The
   * composition's content hash is unchanged (the spec is the same); the revision id differs
   * because the revision's target does.
   */
  host?: HostId;
}

export interface ResolveResult {
  /** Present only when the report's status is `resolved`. */
  revision?: HarnessRevision;
  report: ResolutionReport;
}

function byId(a: { id: string }, b: { id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function byComponentId(a: Realization, b: Realization): number {
  return a.componentId < b.componentId ? -1 : a.componentId > b.componentId ? 1 : 0;
}

/**
 * Resolves one composition of a bundle into an immutable revision (docs/language.md). Pure: the same
 * bundle, composition and options always give the same revision id. Expected failures are in
 * the report (`status: "failed"`, `errors`), never thrown.
 */
export function resolveComposition(
  bundle: HarnessIrBundle,
  compositionId: string,
  options: ResolveOptions = {},
): ResolveResult {
  const composition = bundle.compositions.find((spec) => spec.id === compositionId);
  if (composition === undefined) {
    return {
      report: {
        irVersion: bundle.irVersion,
        kind: "resolution-report",
        compositionId,
        target: options.host ?? "unknown",
        status: "failed",
        realizations: [],
        errors: [`Composition '${compositionId}' is not defined in the bundle.`],
      },
    };
  }
  const host = options.host ?? composition.target;
  const profile = profileForHost(host);
  const errors: string[] = [];

  const selected: PluginManifest[] = [];
  for (const include of composition.includes) {
    const selection = selectPluginVersion(include, bundle.plugins);
    if (selection.ok) selected.push(selection.plugin);
    else errors.push(selection.error);
  }

  const contracts = new Map<string, ComponentContract>();
  for (const component of bundle.components) {
    if (!contracts.has(component.id)) contracts.set(component.id, component);
  }
  const enabled = new Map<string, ComponentContract | undefined>();
  for (const plugin of selected) {
    for (const id of plugin.provides) {
      if (enabled.has(id)) continue;
      const contract = contracts.get(id);
      if (contract === undefined) {
        errors.push(
          `Component '${id}' provided by plugin '${plugin.id}@${plugin.version}' has no contract in the bundle.`,
        );
      }
      enabled.set(id, contract);
    }
  }

  const bindings = new Map<string, TargetBinding>();
  for (const binding of bundle.bindings) {
    if (binding.host !== host || bindings.has(binding.componentId)) continue;
    bindings.set(binding.componentId, binding);
  }
  const inputFor = (componentId: string): RealizationInput => {
    const binding = bindings.get(componentId);
    return {
      host,
      profile,
      componentId,
      component: enabled.get(componentId),
      binding:
        binding === undefined
          ? undefined
          : {
              mechanism: binding.mechanism,
              strength: binding.strength,
              ...(binding.notes === undefined ? {} : { notes: binding.notes }),
            },
    };
  };

  const realizations: Realization[] = [];
  const required = new Set<string>();
  for (const requirement of composition.requirements) {
    required.add(requirement.componentId);
    const outcome = enabled.has(requirement.componentId)
      ? realizeRequirement(requirement, inputFor(requirement.componentId))
      : unprovidedRequirement(requirement);
    realizations.push(outcome.realization);
    if (outcome.error !== undefined) errors.push(outcome.error);
  }
  for (const componentId of enabled.keys()) {
    if (!required.has(componentId)) realizations.push(realizeImplicit(inputFor(componentId)));
  }
  realizations.sort(byComponentId);

  const report: ResolutionReport = {
    irVersion: bundle.irVersion,
    kind: "resolution-report",
    compositionId,
    target: host,
    status: errors.length === 0 ? "resolved" : "failed",
    realizations,
    errors,
  };
  if (errors.length > 0) return { report };

  const enabledContracts = [...enabled.values()].filter(
    (contract): contract is ComponentContract => contract !== undefined,
  );
  const body: Omit<HarnessRevision, "revisionId"> = {
    irVersion: bundle.irVersion,
    kind: "harness-revision",
    composition: { id: composition.id, contentHash: contentHash(composition) },
    target: { host },
    resolved: {
      plugins: selected
        .map((plugin) => ({
          id: plugin.id,
          version: plugin.version,
          contentHash: contentHash(plugin),
        }))
        .sort(byId),
      components: enabledContracts
        .map((contract) => ({ id: contract.id, contentHash: contentHash(contract) }))
        .sort(byId),
    },
    // Copies, so the revision shares no object with the report or the bundle.
    realization: realizations.map((realization) => ({ ...realization })),
    permissions: mergePermissions(enabledContracts),
    settings: composition.settings.map(({ key, value }) => ({ key, value: { ...value } })),
  };
  const revision: HarnessRevision = { ...body, revisionId: revisionIdOf(body) };
  return { revision, report };
}
