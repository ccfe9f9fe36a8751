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

/**
 * How many ancestors a composition may have. Deeper chains are refused (HL2020): nobody layers
 * setups 32 deep on purpose, and walking a chain per composition would otherwise cost time
 * that grows with the square of a generated program's length.
 */
export const MAX_EXTENDS_DEPTH = 32;

/**
 * The chain of ancestors from the parent upward; `cyclic` when it returns to a composition
 * already on it; `tooDeep` when it has more than MAX_EXTENDS_DEPTH links (the chain is cut there).
 */
export function ancestorsOf(
  decl: CompositionDecl,
  byName: ReadonlyMap<string, CompositionDecl>,
): { chain: CompositionDecl[]; cyclic: boolean; missing: NameNode | undefined; tooDeep: boolean } {
  const chain: CompositionDecl[] = [];
  const seen = new Set<CompositionDecl>([decl]);
  let current = decl;
  while (current.parent !== undefined) {
    if (chain.length >= MAX_EXTENDS_DEPTH)
      return { chain, cyclic: false, missing: undefined, tooDeep: true };
    const parent = byName.get(current.parent.text);
    if (parent === undefined)
      return { chain, cyclic: false, missing: current.parent, tooDeep: false };
    if (seen.has(parent)) return { chain, cyclic: true, missing: undefined, tooDeep: false };
    seen.add(parent);
    chain.push(parent);
    current = parent;
  }
  return { chain, cyclic: false, missing: undefined, tooDeep: false };
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
