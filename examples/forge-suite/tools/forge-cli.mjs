// The example's stand-in for a forge CLI (such as Gitea's own tea): one command per operation,
// JSON on stdout, the instance and token from GITEA_SERVER_URL and GITEA_SERVER_TOKEN, the
// repository from --repo or FORGE_CLI_REPO (owner/name). It depends on nothing but Node.
import { parseArgs } from "node:util";
import { giteaClient, repositoryOperations } from "./gitea.mjs";

const USAGE = `usage: forge-cli <command> [arguments] [--repo owner/name]
  labels
  issues [--state open|closed|all] [--type issues|pulls] [--query text] [--labels a,b]
  issue <n>                 an issue or pull request with its comments
  pulls [--state open|closed|all]
  pull <n>                  a pull request with its reviews
  create --title t [--body b] [--label name]... [--assignee login]...
  comment <n> <body>
  label <n> <name>...
  assign <n> <login>...     keeps the other assignees
  edit <n> [--title t] [--body b]
  close <n> | reopen <n>
  review <n> approve|request-changes|comment [--body b]
  merge <n> [--style merge|rebase|squash]`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    repo: { type: "string", default: process.env.FORGE_CLI_REPO ?? "" },
    state: { type: "string" },
    type: { type: "string" },
    query: { type: "string" },
    labels: { type: "string" },
    title: { type: "string" },
    body: { type: "string" },
    label: { type: "string", multiple: true },
    assignee: { type: "string", multiple: true },
    style: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});

const [command, ...rest] = positionals;
if (values.help || command === undefined) {
  console.log(USAGE);
  process.exit(command === undefined && !values.help ? 2 : 0);
}

function number(text) {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${JSON.stringify(text)} is not an issue number`);
  return n;
}

const [owner, repo] = values.repo.split("/");
const ops = repositoryOperations(
  giteaClient({ url: process.env.GITEA_SERVER_URL, token: process.env.GITEA_SERVER_TOKEN }),
  owner,
  repo,
);
const EVENTS = { approve: "APPROVED", "request-changes": "REQUEST_CHANGES", comment: "COMMENT" };

const COMMANDS = {
  labels: () => ops.labels(),
  issues: () =>
    ops.issues({ state: values.state, type: values.type, q: values.query, labels: values.labels }),
  issue: ([n]) => ops.issue(number(n)),
  pulls: () => ops.pulls({ state: values.state }),
  pull: ([n]) => ops.pull(number(n)),
  create: () =>
    ops.createIssue({
      title: values.title,
      body: values.body,
      labels: values.label ?? [],
      assignees: values.assignee ?? [],
    }),
  comment: ([n, body]) => ops.comment(number(n), body),
  label: ([n, ...names]) => ops.addLabels(number(n), names),
  assign: ([n, ...users]) => ops.assign(number(n), users),
  edit: ([n]) =>
    ops.edit(number(n), {
      ...(values.title === undefined ? {} : { title: values.title }),
      ...(values.body === undefined ? {} : { body: values.body }),
    }),
  close: ([n]) => ops.edit(number(n), { state: "closed" }),
  reopen: ([n]) => ops.edit(number(n), { state: "open" }),
  review: ([n, kind]) => {
    if (!(kind in EVENTS)) throw new Error(`a review is ${Object.keys(EVENTS).join(", ")}`);
    return ops.review(number(n), EVENTS[kind], values.body ?? "");
  },
  merge: ([n]) => ops.merge(number(n), values.style),
};

const run = COMMANDS[command];
if (run === undefined) {
  console.error(`forge-cli: no command ${command}\n${USAGE}`);
  process.exit(2);
}
try {
  console.log(JSON.stringify(await run(rest), null, 2));
} catch (error) {
  console.error(`forge-cli ${command}: ${error.message}`);
  process.exit(1);
}
