// Decides, per component, what was requested, what the host declares, what its executor really
// materializes, and whether that satisfies, degrades or fails the requirement (docs/language.md).
// Reason texts follow the reference implementation word for word where its outputs show them.
import type { DeclaredBinding, HostProfile, Materialization } from "../hosts/index.js";
import { PROMPT_PREAMBLE_MECHANISM } from "../hosts/index.js";
import {
  type ComponentContract,
  type CompositionRequirement,
  compareStrength,
  type Realization,
} from "../ir/index.js";

export interface RealizationInput {
  host: string;
  profile: HostProfile;
  componentId: string;
  component: ComponentContract | undefined;
  binding: DeclaredBinding | undefined;
}

function materialize(input: RealizationInput): Materialization {
  return input.profile.realize({
    host: input.host,
    componentId: input.componentId,
    component: input.component,
    binding: input.binding,
  });
}

/** Why the realized strength is what it is, for a requirement that was not satisfied. */
function materializationReason(
  host: string,
  binding: DeclaredBinding | undefined,
  realized: Materialization,
): string {
  if (binding === undefined) return `host '${host}' has no binding for this component`;
  const notes = binding.notes === undefined ? "" : `: ${binding.notes}`;
  if (binding.strength === "unsupported" || realized.mechanism === null) {
    return `host '${host}' declares this component unsupported via '${binding.mechanism}'${notes}`;
  }
  if (realized.mechanism === PROMPT_PREAMBLE_MECHANISM && realized.strength === "advisory") {
    return `host '${host}' declares '${binding.strength}' via '${binding.mechanism}', but the v0.1 executor materializes prompt guidance at 'advisory' strength${notes}`;
  }
  return `host '${host}' declares '${binding.strength}' via '${binding.mechanism}', and its executor materializes '${realized.strength}' via '${realized.mechanism}'${notes}`;
}

export interface RequirementOutcome {
  realization: Realization;
  error?: string;
}

/** A required component that an included plugin provides. */
export function realizeRequirement(
  requirement: CompositionRequirement,
  input: RealizationInput,
): RequirementOutcome {
  const realized = materialize(input);
  const preferred = requirement.preferred ?? requirement.minimum;
  const base = {
    componentId: requirement.componentId,
    requestedMinimum: requirement.minimum,
    ...(requirement.preferred === undefined ? {} : { requestedPreferred: requirement.preferred }),
    declaredStrength: input.binding?.strength ?? "unsupported",
    declaredMechanism: input.binding?.mechanism ?? null,
    realized: realized.strength,
    materializedMechanism: realized.mechanism,
  } as const;
  const reason = materializationReason(input.host, input.binding, realized);
  if (compareStrength(realized.strength, requirement.minimum) < 0) {
    return {
      realization: { ...base, action: "failed", reason },
      error: `Component '${requirement.componentId}' realizes '${realized.strength}' on host '${input.host}', below the required minimum '${requirement.minimum}'.`,
    };
  }
  if (compareStrength(realized.strength, preferred) < 0) {
    if (requirement.onDegrade === "fail") {
      return {
        realization: { ...base, action: "failed", reason },
        error: `Component '${requirement.componentId}' realizes '${realized.strength}' on host '${input.host}', below the preferred '${preferred}' and the requirement declares 'on-degrade fail'.`,
      };
    }
    return { realization: { ...base, action: "degraded", reason } };
  }
  return { realization: { ...base, action: "satisfied" } };
}

/** A required component that no included plugin provides. */
export function unprovidedRequirement(requirement: CompositionRequirement): RequirementOutcome {
  return {
    realization: {
      componentId: requirement.componentId,
      requestedMinimum: requirement.minimum,
      ...(requirement.preferred === undefined ? {} : { requestedPreferred: requirement.preferred }),
      declaredStrength: "unsupported",
      declaredMechanism: null,
      realized: "unsupported",
      materializedMechanism: null,
      action: "failed",
      reason: "component not provided",
    },
    error: `Required component '${requirement.componentId}' is not provided by any included plugin.`,
  };
}

/**
 * An enabled component no requirement names. It never fails resolution; it is satisfied when
 * the host realizes what its binding declares, and degraded otherwise.
 */
export function realizeImplicit(input: RealizationInput): Realization {
  const realized = materialize(input);
  const binding = input.binding;
  const base = {
    componentId: input.componentId,
    requestedMinimum: "unsupported",
    declaredStrength: binding?.strength ?? "unsupported",
    declaredMechanism: binding?.mechanism ?? null,
    realized: realized.strength,
    materializedMechanism: realized.mechanism,
  } as const;
  if (binding === undefined) {
    return {
      ...base,
      action: "degraded",
      reason: `implicitly enabled; host '${input.host}' has no binding for this component`,
    };
  }
  if (binding.strength === "unsupported" || realized.mechanism === null) {
    return {
      ...base,
      action: "degraded",
      reason: `implicitly enabled; host '${input.host}' declares this component unsupported via '${binding.mechanism}'`,
    };
  }
  if (compareStrength(realized.strength, binding.strength) < 0) {
    return {
      ...base,
      action: "degraded",
      reason: `implicitly enabled; declared '${binding.strength}' via '${binding.mechanism}', materialized as '${realized.strength}' via '${realized.mechanism}'`,
    };
  }
  return { ...base, action: "satisfied", reason: "implicitly enabled by an included plugin" };
}
