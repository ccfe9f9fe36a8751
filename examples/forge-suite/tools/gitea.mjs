// A small Gitea API client for the example's stand-in tools (the MCP server and the CLI), in the
// way Gitea's own clients work: the instance's root and a token from the environment, one
// repository named by owner and name. It depends on nothing but Node.

/** A client of one instance; `url` is its root (the API is at url + /api/v1). */
export function giteaClient({ url, token }) {
  if (!url) throw new Error("no Gitea instance: set the instance URL variable");
  const api = `${url.replace(/\/+$/, "")}/api/v1`;
  return async (method, path, body) => {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: {
        accept: "application/json",
        ...(token ? { authorization: `token ${token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).catch((error) => {
      throw new Error(`cannot reach ${api}: ${error.cause?.message ?? error.message}`);
    });
    const text = await response.text();
    if (!response.ok) {
      let message = text;
      try {
        message = JSON.parse(text).message ?? text;
      } catch {
        // not JSON: the text itself
      }
      throw new Error(`${method} ${path}: ${response.status} ${message}`);
    }
    return text === "" ? null : JSON.parse(text);
  };
}

/** The operations both tools offer on the repository `owner/repo`, answered with Gitea's JSON. */
export function repositoryOperations(request, owner, repo) {
  if (!owner || !repo) throw new Error("no repository: give its owner and name");
  const base = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  const query = (fields) => {
    const entries = Object.entries(fields).filter(([, v]) => v !== undefined && v !== "");
    return entries.length === 0 ? "" : `?${new URLSearchParams(entries).toString()}`;
  };
  const labelIds = async (names) => {
    const labels = await request("GET", `${base}/labels?limit=50`);
    return names.map((name) => {
      const label = labels.find((l) => l.name === name);
      if (label === undefined)
        throw new Error(
          `no label ${JSON.stringify(name)}; the repository has ${labels.map((l) => l.name).join(", ")}`,
        );
      return label.id;
    });
  };
  const issue = (index) => request("GET", `${base}/issues/${index}`);
  return {
    labels: () => request("GET", `${base}/labels?limit=50`),
    issues: ({ state = "open", type = "issues", q, labels, page, limit = 50 } = {}) =>
      request("GET", `${base}/issues${query({ state, type, q, labels, page, limit })}`),
    issue: async (index) => ({
      ...(await issue(index)),
      comments: await request("GET", `${base}/issues/${index}/comments`),
    }),
    pulls: ({ state = "open", page, limit = 50 } = {}) =>
      request("GET", `${base}/pulls${query({ state, page, limit })}`),
    pull: async (index) => ({
      ...(await request("GET", `${base}/pulls/${index}`)),
      reviews: await request("GET", `${base}/pulls/${index}/reviews`),
    }),
    createIssue: async ({ title, body, labels = [], assignees = [] }) =>
      request("POST", `${base}/issues`, {
        title,
        body,
        labels: await labelIds(labels),
        assignees,
      }),
    comment: (index, body) => request("POST", `${base}/issues/${index}/comments`, { body }),
    addLabels: async (index, names) =>
      request("POST", `${base}/issues/${index}/labels`, { labels: await labelIds(names) }),
    /** Adds assignees, keeping the ones the item has. */
    assign: async (index, users) => {
      const current = ((await issue(index)).assignees ?? []).map((u) => u.login);
      return request("PATCH", `${base}/issues/${index}`, {
        assignees: [...new Set([...current, ...users])],
      });
    },
    edit: (index, fields) => request("PATCH", `${base}/issues/${index}`, fields),
    review: (index, event, body) =>
      request("POST", `${base}/pulls/${index}/reviews`, { event, body }),
    merge: (index, style = "merge") =>
      request("POST", `${base}/pulls/${index}/merge`, { Do: style }),
  };
}
