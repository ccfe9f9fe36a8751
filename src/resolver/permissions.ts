import type { ComponentContract, Permission } from "../ir/index.js";

/**
 * Merges the permissions of every enabled component: per domain, a `deny` from any component
 * wins and is the only entry kept; otherwise the distinct accesses are kept. Sorted by domain,
 * then access, so the merge does not depend on declaration order.
 */
export function mergePermissions(components: readonly ComponentContract[]): Permission[] {
  const byDomain = new Map<Permission["domain"], Set<Permission["access"]>>();
  for (const component of components) {
    for (const { domain, access } of component.permissions) {
      let accesses = byDomain.get(domain);
      if (accesses === undefined) {
        accesses = new Set();
        byDomain.set(domain, accesses);
      }
      accesses.add(access);
    }
  }
  const merged: Permission[] = [];
  for (const [domain, accesses] of byDomain) {
    if (accesses.has("deny")) merged.push({ domain, access: "deny" });
    else for (const access of accesses) merged.push({ domain, access });
  }
  return merged.sort((a, b) =>
    a.domain === b.domain ? compareText(a.access, b.access) : compareText(a.domain, b.domain),
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
