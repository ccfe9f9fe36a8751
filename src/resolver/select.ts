// Plugin version selection: for each include, the highest declared version that satisfies the
// range. Versions are coerced before matching (the reference's rule), so `v0.9.1` takes part and
// `1.2.0-rc.1` matches `^1` as 1.2.0.
import semver from "semver";
import type { PluginInclude, PluginManifest } from "../ir/index.js";

export type Selection = { ok: true; plugin: PluginManifest } | { ok: false; error: string };

function coerced(version: string): semver.SemVer | null {
  return semver.coerce(version);
}

/** Highest first; versions that coerce equally are ordered by their full semver (a release beats its prerelease). */
function compareVersionsDescending(a: PluginManifest, b: PluginManifest): number {
  const ca = coerced(a.version);
  const cb = coerced(b.version);
  if (ca !== null && cb !== null) {
    const byCore = semver.rcompare(ca, cb);
    if (byCore !== 0) return byCore;
    const va = semver.valid(a.version);
    const vb = semver.valid(b.version);
    if (va !== null && vb !== null) return semver.rcompare(va, vb);
  }
  return a.version < b.version ? 1 : a.version > b.version ? -1 : 0;
}

export function selectPluginVersion(
  include: PluginInclude,
  plugins: readonly PluginManifest[],
): Selection {
  const candidates = plugins.filter((plugin) => plugin.id === include.pluginId);
  if (candidates.length === 0) {
    return { ok: false, error: `Plugin '${include.pluginId}' is not available in the registry.` };
  }
  const satisfying = candidates.filter((plugin) => {
    const version = coerced(plugin.version);
    return version !== null && semver.satisfies(version, include.range);
  });
  if (satisfying.length === 0) {
    const available = [...candidates]
      .sort((a, b) => compareVersionsDescending(b, a))
      .map((plugin) => plugin.version);
    return {
      ok: false,
      error: `Plugin '${include.pluginId}' has no version satisfying '${include.range}' (available: ${available.join(", ")}).`,
    };
  }
  satisfying.sort(compareVersionsDescending);
  return { ok: true, plugin: satisfying[0]! };
}
