// The forge suite's oracle: a scripted agent that solves every task, through whichever way its
// variant's composition gives it (`ctx.forge.access`): the forge MCP tools (`tools.call`), curl
// commands against the forge's HTTP API (`tools.bash`), or the setup's own tool (`forge.tool`):
// a third-party MCP server's tools, or a CLI's commands. It finds its targets the way a careful
// agent would (a search, then a check of what it found); the answers to the read tasks come from
// what it read. It proves the tasks solvable and the graders satisfiable on every arm.

/** Gitea's JSON for an issue or pull request, as the solutions read it. */
const view = (item) => ({
  number: item.number,
  title: item.title,
  state: item.pull_request?.merged || item.merged ? "merged" : item.state,
  labels: (item.labels ?? []).map((l) => l.name),
  assignees: (item.assignees ?? []).map((u) => u.login),
  body: item.body ?? "",
});

const reviewsOf = (reviews) =>
  reviews.map((r) => ({ author: r.user.login, state: r.state, body: r.body }));

const REVIEW_EVENTS = {
  approve: "APPROVED",
  request_changes: "REQUEST_CHANGES",
  comment: "COMMENT",
};

/** The forge through the MCP tools: every call goes through the harness's tool policy. */
function mcpForge(tools) {
  const call = async (tool, args = {}) => {
    const result = await tools.call(`mcp__forge__${tool}`, args);
    if (!result.ok) throw new Error(`${tool}: ${result.reason ?? result.error}`);
    return result.result;
  };
  return {
    search: async (query, state = "all") =>
      (await call("search_issues", { query, state, type: "issues" })).items,
    searchPulls: async (query, state = "all") =>
      (await call("search_issues", { query, state, type: "pulls" })).items,
    issues: async (state) => (await call("list_issues", { state, limit: 50 })).items,
    pulls: async (state) => (await call("list_pull_requests", { state, limit: 50 })).items,
    pull: (number) => call("get_pull_request", { number }),
    comment: (number, body) => call("add_comment", { number, body }),
    label: (number, label) => call("add_labels", { number, labels: [label] }),
    assign: (number, user) => call("assign", { number, users: [user] }),
    close: (number) => call("close", { number }),
    reopen: (number) => call("reopen", { number }),
    edit: (number, fields) => call("edit", { number, ...fields }),
    createIssue: (fields) => call("create_issue", fields),
    review: (number, event, body) => call("create_review", { number, event, body }),
    merge: (number) => call("merge_pull_request", { number }),
  };
}

/** Single-quotes a shell argument (the policy allows '…' strings; none of ours holds a quote). */
function quoted(text) {
  if (text.includes("'")) throw new Error(`cannot quote ${text}`);
  return `'${text}'`;
}

/** The forge through curl and the Gitea API, as a shell-using agent would reach it. */
function httpForge(tools, forge) {
  const api = `${forge.commandUrl}/api/v1/repos/${forge.owner}/${forge.repo}`;
  const curl = async (method, path, body) => {
    const words = ["curl", "-sS", "-f", "-X", method, quoted(`${api}${path}`)];
    if (body !== undefined)
      words.push(
        "-H",
        quoted("Content-Type: application/json"),
        "-d",
        quoted(JSON.stringify(body)),
      );
    const result = await tools.bash(words.join(" "));
    if (!result.ok) throw new Error(`${method} ${path}: ${result.reason ?? result.error}`);
    if (result.exitCode !== 0)
      throw new Error(`${method} ${path}: curl exited ${result.exitCode}: ${result.stderr}`);
    return result.stdout.trim() === "" ? null : JSON.parse(result.stdout);
  };
  const labelIds = async (names) => {
    const labels = await curl("GET", "/labels?limit=50");
    return names.map((name) => labels.find((l) => l.name === name).id);
  };
  const issue = async (number) => view(await curl("GET", `/issues/${number}`));
  const find = async (query, state, type) =>
    (await curl("GET", `/issues?q=${encodeURIComponent(query)}&state=${state}&type=${type}`)).map(
      view,
    );
  return {
    search: (query, state = "all") => find(query, state, "issues"),
    searchPulls: (query, state = "all") => find(query, state, "pulls"),
    issues: async (state) =>
      (await curl("GET", `/issues?state=${state}&type=issues&limit=50`)).map(view),
    pulls: async (state) => (await curl("GET", `/pulls?state=${state}&limit=50`)).map(view),
    pull: async (number) => {
      const reviews = await curl("GET", `/pulls/${number}/reviews`);
      return {
        ...view(await curl("GET", `/pulls/${number}`)),
        reviews: reviewsOf(reviews),
      };
    },
    comment: (number, body) => curl("POST", `/issues/${number}/comments`, { body }),
    label: async (number, label) =>
      curl("POST", `/issues/${number}/labels`, { labels: await labelIds([label]) }),
    assign: async (number, user) => {
      const current = (await issue(number)).assignees;
      return curl("PATCH", `/issues/${number}`, { assignees: [...current, user] });
    },
    close: (number) => curl("PATCH", `/issues/${number}`, { state: "closed" }),
    reopen: (number) => curl("PATCH", `/issues/${number}`, { state: "open" }),
    edit: (number, fields) => curl("PATCH", `/issues/${number}`, fields),
    createIssue: async ({ labels = [], ...fields }) =>
      curl("POST", "/issues", { ...fields, labels: await labelIds(labels) }),
    review: (number, event, body) =>
      curl("POST", `/pulls/${number}/reviews`, { event: REVIEW_EVENTS[event], body }),
    merge: (number) => curl("POST", `/pulls/${number}/merge`, { Do: "merge" }),
  };
}

/** The forge through a third-party MCP server of the setup: its tools take owner and repo. */
function toolMcpForge(tools, forge) {
  const call = async (tool, args = {}) => {
    const result = await tools.call(`mcp__${forge.tool.component}__${tool}`, {
      owner: forge.owner,
      repo: forge.repo,
      ...args,
    });
    if (!result.ok) throw new Error(`${tool}: ${result.reason ?? result.error}`);
    return result.result;
  };
  const find = async (query, state, type) =>
    (await call("list_repo_issues", { query, state, type })).map(view);
  return {
    search: (query, state = "all") => find(query, state, "issues"),
    searchPulls: (query, state = "all") => find(query, state, "pulls"),
    issues: async (state) => (await call("list_repo_issues", { state, type: "issues" })).map(view),
    pulls: async (state) => (await call("list_repo_pull_requests", { state })).map(view),
    pull: async (index) => {
      const pull = await call("get_pull_request_by_index", { index });
      return { ...view(pull), reviews: reviewsOf(pull.reviews) };
    },
    comment: (index, body) => call("create_issue_comment", { index, body }),
    label: (index, label) => call("add_issue_labels", { index, labels: [label] }),
    assign: (index, user) => call("add_issue_assignees", { index, assignees: [user] }),
    close: (index) => call("edit_issue", { index, state: "closed" }),
    reopen: (index) => call("edit_issue", { index, state: "open" }),
    edit: (index, fields) => call("edit_issue", { index, ...fields }),
    createIssue: (fields) => call("create_issue", fields),
    review: (index, event, body) =>
      call("create_pull_review", { index, event: REVIEW_EVENTS[event], body }),
    merge: (index) => call("merge_pull_request", { index }),
  };
}

/** The forge through a CLI of the setup, run by its name in the agent's shell. */
function cliToolForge(tools, forge) {
  const program = forge.tool.component;
  const run = async (...words) => {
    const command = [program, ...words.map((w) => (typeof w === "number" ? String(w) : quoted(w)))];
    const result = await tools.bash(command.join(" "));
    if (!result.ok) throw new Error(`${words[0]}: ${result.reason ?? result.error}`);
    if (result.exitCode !== 0)
      throw new Error(`${words[0]}: ${program} exited ${result.exitCode}: ${result.stderr}`);
    return JSON.parse(result.stdout);
  };
  const find = async (query, state, type) =>
    (await run("issues", "--query", query, "--state", state, "--type", type)).map(view);
  return {
    search: (query, state = "all") => find(query, state, "issues"),
    searchPulls: (query, state = "all") => find(query, state, "pulls"),
    issues: async (state) => (await run("issues", "--state", state)).map(view),
    pulls: async (state) => (await run("pulls", "--state", state)).map(view),
    pull: async (number) => {
      const pull = await run("pull", number);
      return { ...view(pull), reviews: reviewsOf(pull.reviews) };
    },
    comment: (number, body) => run("comment", number, body),
    label: (number, label) => run("label", number, label),
    assign: (number, user) => run("assign", number, user),
    close: (number) => run("close", number),
    reopen: (number) => run("reopen", number),
    edit: (number, { title, body }) =>
      run(
        "edit",
        number,
        ...(title === undefined ? [] : ["--title", title]),
        ...(body === undefined ? [] : ["--body", body]),
      ),
    createIssue: ({ title, body, labels = [], assignees = [] }) =>
      run(
        "create",
        "--title",
        title,
        ...(body === undefined ? [] : ["--body", body]),
        ...labels.flatMap((l) => ["--label", l]),
        ...assignees.flatMap((a) => ["--assignee", a]),
      ),
    review: (number, event, body) =>
      run(
        "review",
        number,
        event.replace("_", "-"),
        ...(body === undefined ? [] : ["--body", body]),
      ),
    merge: (number) => run("merge", number),
  };
}

/** The client for the variant's arm. */
function forgeClient(tools, forge) {
  if (forge.access === "mcp") return mcpForge(tools);
  if (forge.tool?.kind === "mcp-server") return toolMcpForge(tools, forge);
  if (forge.tool?.kind === "cli") return cliToolForge(tools, forge);
  return httpForge(tools, forge);
}

/** The one item a search must find; anything else means the task is not what it seems. */
function only(items, what) {
  if (items.length !== 1)
    throw new Error(
      `expected one ${what}, found ${items.map((i) => `#${i.number}`).join(", ") || "none"}`,
    );
  return items[0];
}

const SOLUTIONS = {
  "open-bug-count": async (f) => {
    const bugs = (await f.issues("open")).filter((i) => i.labels.includes("bug"));
    const numbers = bugs.map((i) => `#${i.number}`).sort();
    return `There are ${bugs.length} open issues with the bug label: ${numbers.join(", ")}.`;
  },
  "changes-requested": async (f) => {
    for (const pull of await f.pulls("all")) {
      const review = (await f.pull(pull.number)).reviews.find((r) => r.state === "REQUEST_CHANGES");
      if (review)
        return `Pull request #${pull.number}: ${review.author} requested changes: "${review.body}"`;
    }
    throw new Error("no review requests changes");
  },
  "json-export-owner": async (f) => {
    const issue = only(await f.search("JSON", "open"), "JSON export request");
    return `Issue #${issue.number} is assigned to ${issue.assignees.join(", ")}.`;
  },
  "merged-pulls": async (f) => {
    const merged = (await f.pulls("all")).filter((p) => p.state === "merged");
    return merged.map((p) => `#${p.number} ${p.title}`).join("\n");
  },
  "label-good-first": (f) => f.label(10, "good first issue"),
  "self-assign": (f, forge) => f.assign(3, forge.user),
  "close-question": (f) => f.close(6),
  "confirm-search-bug": (f) => f.comment(12, "Confirmed on 2.4.0."),
  "retitle-tooltips": (f) =>
    f.edit(10, { title: "Tooltips overlap on screens narrower than 400px" }),
  "approve-csv-fix": (f) => f.review(13, "approve", "Thanks, merging soon."),
  "mark-duplicate": async (f) => {
    const reports = [
      ...(await f.search("empty spreadsheet", "open")),
      ...(await f.search("blank sheet", "open")),
    ].sort((a, b) => a.number - b.number);
    if (reports.length !== 2) throw new Error(`expected two reports, found ${reports.length}`);
    const [older, newer] = reports;
    await f.label(newer.number, "duplicate");
    await f.comment(newer.number, `Duplicate of #${older.number}.`);
    await f.close(newer.number);
  },
  "assign-accent-bug": async (f) =>
    f.assign(only(await f.search("accented", "open"), "accent bug").number, "carol"),
  "merge-approved-fix": async (f) => {
    const pull = only(await f.searchPulls("CSV", "open"), "CSV fix");
    const reviews = (await f.pull(pull.number)).reviews;
    if (!reviews.some((r) => r.state === "APPROVED")) throw new Error("the fix is not approved");
    await f.merge(pull.number);
  },
  "reopen-logo": async (f) => f.reopen(only(await f.search("logo", "closed"), "logo bug").number),
  "label-json-request": async (f) =>
    f.label(only(await f.search("JSON", "open"), "JSON request").number, "good first issue"),
  "answer-proxy-question": async (f) =>
    f.comment(
      only(await f.search("proxy", "open"), "proxy question").number,
      "Set HTTPS_PROXY before starting the app.",
    ),
  "file-pdf-bug": (f, forge) =>
    f.createIssue({
      title: "Export to PDF cuts off long tables",
      body: "Tables longer than one page lose their last rows.",
      labels: ["bug"],
      assignees: [forge.user],
    }),
  "ship-csv-fix": async (f) => {
    const pull = only(await f.searchPulls("CSV header", "open"), "CSV fix");
    const fixes = /Fixes #(\d+)/.exec((await f.pull(pull.number)).body ?? "");
    if (fixes === null) throw new Error(`#${pull.number} does not say which issue it fixes`);
    await f.merge(pull.number);
    await f.comment(Number(fixes[1]), `Fixed by #${pull.number}.`);
    await f.close(Number(fixes[1]));
  },
  "take-unowned-docs": async (f, forge) => {
    const docs = (await f.issues("open")).filter(
      (i) => i.labels.includes("documentation") && i.assignees.length === 0,
    );
    for (const issue of docs) {
      await f.assign(issue.number, forge.user);
      await f.comment(issue.number, "Taking this one.");
    }
  },
  "drop-dark-mode": async (f) => {
    const request = only(await f.search("dark mode", "open"), "dark-mode request");
    await f.label(request.number, "wontfix");
    await f.comment(request.number, "Not planned for now.");
    await f.close(request.number);
    const pull = only(await f.searchPulls("dark mode", "open"), "dark-mode pull request");
    await f.close(pull.number);
  },
};

export default async function oracle({ tools, forge, trial }) {
  if (forge === undefined) throw new Error("the oracle solves forge tasks only");
  const solve = SOLUTIONS[trial.task];
  if (solve === undefined) throw new Error(`no solution for task ${trial.task}`);
  const client = forgeClient(tools, forge);
  const answer = await solve(client, forge);
  return typeof answer === "string" ? answer : `done: ${trial.task}`;
}
