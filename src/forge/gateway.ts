// Which requests an agent's commands may make through a forge task's gateway (pure): a positive
// list of the routes issue, pull-request, label, comment, review and merge work needs, and
// read-only access to the repository's contents, on its own repository only; and the few
// instance endpoints clients ask first. The gateway holds the token, so this rule is all that
// stands between the agent and the rest of the forge (on a real Gitea, every repository the
// token's account can touch, and everything its repository settings allow: webhooks, deploy
// keys, Actions secrets and workflows, collaborators, forks).
import { requestTargetProblem } from "../shared/index.js";

/** Instance endpoints clients such as `tea` read before anything else (read only). */
const INSTANCE_READS = new Set(["/api/v1/version", "/api/v1/settings/api", "/api/v1/user"]);

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/**
 * The routes under `/api/v1/repos/{owner}/{repo}` the gateway forwards, each a pattern of the
 * rest of the path and the methods allowed on it. `N` is an issue or pull request number, `ID`
 * another numeric id, `NAME` one path segment, `REST` one or more. GET allows HEAD too.
 */
const ROUTES: ReadonlyArray<readonly [string, readonly Method[]]> = [
  // the repository itself: read only (deleting, renaming or transferring it ends the task)
  ["", ["GET"]],
  // issues and their comments, labels, reactions and history
  ["/issues", ["GET", "POST"]],
  ["/issues/N", ["GET", "PATCH"]],
  ["/issues/N/comments", ["GET", "POST"]],
  ["/issues/comments", ["GET"]],
  ["/issues/comments/ID", ["GET", "PATCH", "DELETE"]],
  ["/issues/comments/ID/reactions", ["GET", "POST", "DELETE"]],
  ["/issues/N/labels", ["GET", "POST", "PUT", "DELETE"]],
  ["/issues/N/labels/ID", ["DELETE"]],
  ["/issues/N/reactions", ["GET", "POST", "DELETE"]],
  ["/issues/N/timeline", ["GET"]],
  // the repository's labels and milestones
  ["/labels", ["GET", "POST"]],
  ["/labels/ID", ["GET", "PATCH", "DELETE"]],
  ["/milestones", ["GET"]],
  ["/milestones/NAME", ["GET"]],
  // pull requests, their diffs, reviews, reviewers and merging
  ["/pulls", ["GET", "POST"]],
  ["/pulls/N", ["GET", "PATCH"]],
  ["/pulls/N.diff", ["GET"]],
  ["/pulls/N.patch", ["GET"]],
  ["/pulls/N/files", ["GET"]],
  ["/pulls/N/commits", ["GET"]],
  ["/pulls/N/merge", ["GET", "POST", "DELETE"]],
  ["/pulls/N/reviews", ["GET", "POST"]],
  ["/pulls/N/reviews/ID", ["GET", "POST", "DELETE"]],
  ["/pulls/N/reviews/ID/comments", ["GET"]],
  ["/pulls/N/reviews/ID/dismissals", ["POST"]],
  ["/pulls/N/reviews/ID/undismissals", ["POST"]],
  ["/pulls/N/requested_reviewers", ["POST", "DELETE"]],
  // who may be assigned or asked for a review (read only: adding a collaborator grants access)
  ["/assignees", ["GET"]],
  ["/collaborators", ["GET"]],
  ["/collaborators/NAME", ["GET"]],
  ["/collaborators/NAME/permission", ["GET"]],
  // the repository's contents, read only (a write to .gitea/workflows/ would run code on the forge)
  ["/contents", ["GET"]],
  ["/contents/REST", ["GET"]],
  ["/raw/REST", ["GET"]],
  ["/media/REST", ["GET"]],
  ["/branches", ["GET"]],
  ["/branches/REST", ["GET"]],
  ["/commits", ["GET"]],
  ["/commits/REST", ["GET"]],
  ["/git/commits/NAME", ["GET"]],
  ["/git/trees/NAME", ["GET"]],
  ["/git/blobs/NAME", ["GET"]],
  ["/git/refs", ["GET"]],
  ["/git/refs/REST", ["GET"]],
  ["/tags", ["GET"]],
  ["/tags/NAME", ["GET"]],
  ["/languages", ["GET"]],
];

const PLACEHOLDERS: Record<string, string> = {
  N: "[1-9][0-9]{0,9}",
  ID: "[1-9][0-9]{0,18}",
  NAME: "[^/]+",
  REST: "[^/]+(?:/[^/]+)*",
};

/** The table as regular expressions over the path after the repository's base. */
const COMPILED = ROUTES.map(([pattern, methods]) => ({
  pattern: new RegExp(
    `^${pattern.replace(/[.]/g, "\\.").replace(/\b(N|ID|NAME|REST)\b/g, (p) => PLACEHOLDERS[p]!)}/?$`,
  ),
  methods: new Set<string>([...methods, ...(methods.includes("GET") ? ["HEAD"] : [])]),
}));

/** Every route the gateway forwards, as documented in docs/forges.md. */
export const FORGE_GATEWAY_ROUTES = ROUTES;

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
    const malformed = requestTargetProblem(path);
    if (malformed !== null)
      return `the path ${JSON.stringify(path.slice(0, 200))} is refused: ${malformed}; ${reach}`;
    const upper = method.toUpperCase();
    if (INSTANCE_READS.has(path))
      return upper === "GET" || upper === "HEAD" ? null : `${upper} ${path} is refused`;
    if (path !== base && !path.startsWith(`${base}/`)) return reach;
    const rest = path.slice(base.length);
    const route = COMPILED.find((r) => r.pattern.test(rest));
    if (route === undefined)
      return `${upper} ${path} is refused: the gateway forwards the routes of issue, pull request, label, comment, review and merge work and read-only contents, not this one (docs/forges.md); ${reach}`;
    if (!route.methods.has(upper))
      return `${upper} ${path} is refused: this route allows ${[...route.methods].join(", ")} only; ${reach}`;
    return null;
  };
}
