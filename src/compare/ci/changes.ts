// What changed in a setup between the base and the head (pure), from the two resolved revisions:
// components added, removed or changed (by content hash), settings, and a scripted agent's module.
import type { AssembledVariant } from "../run/assemble.js";

export interface SetupChanges {
  /** Nothing the agent is given differs: the same revision and the same agent. */
  same: boolean;
  baseRevision: string;
  headRevision: string;
  added: string[];
  removed: string[];
  changed: { component: string; from: string; to: string }[];
  /** Settings whose value differs (`forge.access`, `runtime.max-turns`…). */
  settings: string[];
  /** A scripted agent's module whose bytes differ. */
  agentChanged: boolean;
}

export function setupChanges(
  base: AssembledVariant,
  head: AssembledVariant,
  agentHashes: { base?: string; head?: string } = {},
): SetupChanges {
  const before = new Map(base.revision.resolved.components.map((c) => [c.id, c.contentHash]));
  const after = new Map(head.revision.resolved.components.map((c) => [c.id, c.contentHash]));
  const added = [...after.keys()].filter((id) => !before.has(id)).sort();
  const removed = [...before.keys()].filter((id) => !after.has(id)).sort();
  const changed = [...after.entries()]
    .filter(([id, hash]) => before.has(id) && before.get(id) !== hash)
    .map(([component, to]) => ({ component, from: before.get(component) as string, to }))
    .sort((a, b) => a.component.localeCompare(b.component));
  const value = (variant: AssembledVariant) =>
    new Map(variant.revision.settings.map((s) => [s.key, JSON.stringify(s.value)]));
  const baseSettings = value(base);
  const headSettings = value(head);
  const settings = [...new Set([...baseSettings.keys(), ...headSettings.keys()])]
    .filter((key) => baseSettings.get(key) !== headSettings.get(key))
    .sort();
  const agentChanged = agentHashes.base !== agentHashes.head;
  return {
    same: base.revision.revisionId === head.revision.revisionId && !agentChanged,
    baseRevision: base.revision.revisionId,
    headRevision: head.revision.revisionId,
    added,
    removed,
    changed,
    settings,
    agentChanged,
  };
}

/** The changes in lines for the terminal and the pull request's comment. */
export function setupChangeLines(changes: SetupChanges): string[] {
  if (changes.same) return [`no change: both resolve to ${changes.headRevision}`];
  const short = (hash: string) => hash.replace(/^sha256:/, "").slice(0, 12);
  return [
    `revision ${changes.baseRevision} → ${changes.headRevision}`,
    ...changes.added.map((id) => `added: ${id}`),
    ...changes.removed.map((id) => `removed: ${id}`),
    ...changes.changed.map((c) => `changed: ${c.component} (${short(c.from)} → ${short(c.to)})`),
    ...changes.settings.map((key) => `setting changed: ${key}`),
    ...(changes.agentChanged ? ["changed: the scripted agent's module"] : []),
  ];
}
