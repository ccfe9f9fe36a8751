// Lowers a validated program to an IR 0.1.0 bundle (0.2.0 when it uses anything of v0.2). Runs only when validation found no error, so
// every name, version and minimum it reads is present. Object keys are written in the order of
// the IR definitions (see src/ir/documents.ts).

import { PROMPT_PREAMBLE_MECHANISM } from "../hosts/index.js";
import {
  type ComponentContract,
  type CompositionRequirement,
  type CompositionSpec,
  type HarnessIrBundle,
  IR_VERSION,
  IR_VERSION_V2,
  type IrVersion,
  type PluginBinding,
  type PluginManifest,
  type TargetBinding,
} from "../ir/index.js";
import { flattenComposition } from "./inheritance.js";
import { type ReadSource, v02Fields } from "./sources.js";
import type {
  BindingDecl,
  ComponentDecl,
  CompositionDecl,
  PluginDecl,
  RequirementNode,
} from "./types.js";
import type { ProgramModel } from "./validate.js";

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`lowering: ${what} is missing after validation`);
  return value;
}

export function lowerProgram(model: ProgramModel): HarnessIrBundle {
  // A v0.1 program stays IR 0.1.0, byte for byte; anything of v0.2 makes the whole bundle 0.2.0.
  const irVersion: IrVersion = model.v02 ? IR_VERSION_V2 : IR_VERSION;
  const components = model.components.map((decl) =>
    lowerComponent(decl, irVersion, model.sources.get(decl)),
  );
  const bindings = model.bindings.flatMap((decl) => lowerBinding(decl, irVersion));
  const bindingsByComponent = new Map<string, PluginBinding[]>();
  for (const binding of bindings) {
    const joined: PluginBinding = {
      componentId: binding.componentId,
      host: binding.host,
      mechanism: binding.mechanism,
      strength: binding.strength,
    };
    const list = bindingsByComponent.get(binding.componentId);
    if (list === undefined) bindingsByComponent.set(binding.componentId, [joined]);
    else list.push(joined);
  }
  const plugins = model.plugins.map((plugin) =>
    lowerPlugin(plugin, bindingsByComponent, irVersion),
  );
  const compositions = model.compositions.map((composition) =>
    lowerComposition(composition, model.compositionByName, irVersion),
  );
  return {
    irVersion,
    kind: "harness-ir-bundle",
    components,
    bindings,
    plugins,
    compositions,
  };
}

function lowerComponent(
  decl: ComponentDecl,
  irVersion: IrVersion,
  source: ReadSource | undefined,
): ComponentContract {
  return {
    irVersion,
    kind: "component-contract",
    id: required(decl.name, "component name").text,
    componentKind: required(decl.kind, "component kind").value,
    ...(decl.description === undefined ? {} : { description: decl.description }),
    inputs: decl.inputs.map((name) => name.text),
    outputs: decl.outputs.map((name) => name.text),
    permissions: decl.permissions.map(({ domain, access }) => ({ domain, access })),
    ...v02Fields(decl, source),
  };
}

// A binding without mechanism or strength is advisory prompt guidance, the one mechanism every
// v0.1 host materializes; `for [a, b]` yields one binding per host.
function lowerBinding(decl: BindingDecl, irVersion: IrVersion): TargetBinding[] {
  const componentId = required(decl.component, "binding component").text;
  return decl.hosts.map((host) => ({
    irVersion,
    kind: "target-binding",
    componentId,
    host: host.text,
    mechanism: decl.mechanism?.text ?? PROMPT_PREAMBLE_MECHANISM,
    strength: decl.strength?.value ?? "advisory",
    ...(decl.notes === undefined ? {} : { notes: decl.notes }),
  }));
}

function lowerPlugin(
  decl: PluginDecl,
  bindingsByComponent: ReadonlyMap<string, readonly PluginBinding[]>,
  irVersion: IrVersion,
): PluginManifest {
  const provides = decl.provides.map((name) => name.text);
  return {
    irVersion,
    kind: "plugin-manifest",
    id: required(decl.name, "plugin name").text,
    version: required(decl.version, "plugin version").value,
    provides,
    bindings: provides.flatMap((id) => (bindingsByComponent.get(id) ?? []).map((b) => ({ ...b }))),
  };
}

function lowerComposition(
  decl: CompositionDecl,
  byName: ReadonlyMap<string, CompositionDecl>,
  irVersion: IrVersion,
): CompositionSpec {
  const flat = flattenComposition(decl, byName);
  return {
    irVersion,
    kind: "composition-spec",
    id: required(decl.name, "composition name").text,
    target: required(flat.target, "composition target").text,
    includes: flat.includes.map((include) => ({
      pluginId: include.plugin.text,
      range: include.range.value,
    })),
    requirements: flat.requirements.map(lowerRequirement),
    settings: flat.settings.map((setting) => ({ key: setting.key.text, value: setting.value })),
  };
}

function lowerRequirement(node: RequirementNode): CompositionRequirement {
  if (node.bare) {
    return { componentId: node.component.text, minimum: "advisory", onDegrade: "report" };
  }
  return {
    componentId: node.component.text,
    ...(node.preferred === undefined ? {} : { preferred: node.preferred.value }),
    minimum: required(node.minimum, "requirement minimum").value,
    onDegrade: node.onDegrade?.value ?? "report",
  };
}
