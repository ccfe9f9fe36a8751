// `composition child extends parent { … }`: the child inherits the parent's target, includes,
// requirements and settings (inherited members first), may override the target and may add
// members. Shared by the validator (which reports problems) and the lowering (which relies on
// the validator having found none).
import type {
  CompositionDecl,
  IncludeNode,
  NameNode,
  RequirementNode,
  SettingNode,
} from "./types.js";

export interface FlatComposition {
  target: NameNode | undefined;
  includes: IncludeNode[];
  requirements: RequirementNode[];
  settings: SettingNode[];
}

/** The chain of ancestors from the parent upward; `cyclic` when it returns to a composition already on it. */
export function ancestorsOf(
  decl: CompositionDecl,
  byName: ReadonlyMap<string, CompositionDecl>,
): { chain: CompositionDecl[]; cyclic: boolean; missing: NameNode | undefined } {
  const chain: CompositionDecl[] = [];
  const seen = new Set<CompositionDecl>([decl]);
  let current = decl;
  while (current.parent !== undefined) {
    const parent = byName.get(current.parent.text);
    if (parent === undefined) return { chain, cyclic: false, missing: current.parent };
    if (seen.has(parent)) return { chain, cyclic: true, missing: undefined };
    seen.add(parent);
    chain.push(parent);
    current = parent;
  }
  return { chain, cyclic: false, missing: undefined };
}

/** Flattens inheritance. A broken chain (unknown parent, cycle) contributes what it can. */
export function flattenComposition(
  decl: CompositionDecl,
  byName: ReadonlyMap<string, CompositionDecl>,
): FlatComposition {
  const { chain } = ancestorsOf(decl, byName);
  const lineage = [...chain].reverse();
  lineage.push(decl);
  const flat: FlatComposition = { target: undefined, includes: [], requirements: [], settings: [] };
  for (const member of lineage) {
    if (member.target !== undefined) flat.target = member.target;
    flat.includes.push(...member.includes);
    flat.requirements.push(...member.requirements);
    flat.settings.push(...member.settings);
  }
  return flat;
}
