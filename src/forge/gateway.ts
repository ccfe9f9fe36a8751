// Which requests an agent's commands may make through a forge task's gateway (pure): its own
// repository's API and the few instance endpoints clients ask first, nothing else. The gateway
// holds the token, so this rule is all that stands between the agent and the rest of the forge
// (on a real Gitea, every repository the token's account can touch).

/** Instance endpoints clients such as `tea` read before anything else (read only). */
const INSTANCE_READS = new Set(["/api/v1/version", "/api/v1/settings/api", "/api/v1/user"]);

/** Characters a path segment may hold as sent; anything else (`\`, spaces, quotes) is refused. */
const PATH_SEGMENT = /^[A-Za-z0-9._~!$&'()*+,;=:@%-]*$/;

/**
 * The rule for a gateway to `owner/repo`: a reason to refuse, or null. Paths are compared as
 * sent, after refusing anything a server might resolve differently from this rule (dot segments,
 * encoded slashes or dots, empty segments), so no spelling reaches another repository.
 */
export function forgeGatewayRule(
  owner: string,
  repo: string,
): (method: string, path: string) => string | null {
  const base = `/api/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  const reach = `this gateway reaches ${owner}/${repo} only (${base}/…)`;
  return (method, path) => {
    const segments = path.split("/").slice(1);
    if (
      !path.startsWith("/") ||
      segments.some(
        (segment, index) =>
          !PATH_SEGMENT.test(segment) ||
          /%2f|%5c|%2e|%00/i.test(segment) ||
          segment === "." ||
          segment === ".." ||
          (segment === "" && index < segments.length - 1),
      )
    )
      return `the path ${JSON.stringify(path.slice(0, 200))} is not a plain API path; ${reach}`;
    const upper = method.toUpperCase();
    if (INSTANCE_READS.has(path)) return upper === "GET" ? null : `${upper} ${path} is refused`;
    if (path === base || path === `${base}/`)
      // The repository itself stays: deleting or renaming it would end the task, not do it.
      return upper === "GET" ? null : `${upper} on the repository itself is refused; ${reach}`;
    if (path.startsWith(`${base}/`)) {
      if (path.startsWith(`${base}/transfer`))
        return `transferring the repository is refused; ${reach}`;
      return null;
    }
    return reach;
  };
}
