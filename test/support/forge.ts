// Forge experiments for tests: a harness with one composition per way of reaching the forge (on
// the scripted host and on claude-code) and a small seed.
import { cp } from "node:fs/promises";
import { join } from "node:path";
import type { RepoState } from "../../src/scoring/index.js";

/** Compositions `by-mcp`/`by-cli` (scripted) and `claude-mcp`/`claude-cli` and their copies (claude-code). */
export const FORGE_HARNESS = `component forge-work {
  kind workflow
  description "Do what the task asks on the forge, and nothing else."
}
binding forge-work for scripted { mechanism prompt-preamble strength advisory }
binding forge-work for claude-code { mechanism prompt-preamble strength advisory }
plugin forge-core {
  version "1.0.0"
  provides [ component.forge-work ]
}
composition by-mcp {
  target scripted
  include [ plugin.forge-core@^1 ]
  require forge-work { minimum advisory }
  configure { forge.access = "mcp" }
}
composition by-cli {
  target scripted
  include [ plugin.forge-core@^1 ]
  require forge-work { minimum advisory }
  configure { forge.access = "cli" }
}
composition claude-mcp {
  target claude-code
  include [ plugin.forge-core@^1 ]
  require forge-work { minimum advisory }
  configure { forge.access = "mcp" }
}
composition claude-mcp-again {
  target claude-code
  include [ plugin.forge-core@^1 ]
  require forge-work { minimum advisory }
  // A setting of its own: harnesslab refuses to compare two identical setups.
  configure { forge.access = "mcp" run.label = "again" }
}
composition claude-cli {
  target claude-code
  include [ plugin.forge-core@^1 ]
  require forge-work { minimum advisory }
  configure { forge.access = "cli" }
}
composition claude-cli-again {
  target claude-code
  include [ plugin.forge-core@^1 ]
  require forge-work { minimum advisory }
  // A setting of its own: harnesslab refuses to compare two identical setups.
  configure { forge.access = "cli" run.label = "again" }
}
`;

/** Two issues (the second a duplicate of the first) and a pull request, three authors. */
export const SMALL_SEED: RepoState = {
  labels: [
    { name: "bug", color: "#d73a4a" },
    { name: "duplicate", color: "#cccccc" },
  ],
  issues: [
    { number: 1, title: "Crash when the config is empty", state: "open", labels: ["bug"] },
    {
      number: 2,
      title: "Empty config crashes the app",
      state: "open",
      comments: [{ author: "alice", body: "Same here" }],
    },
  ],
  pullRequests: [{ number: 3, title: "Handle empty config", state: "open", body: "Fixes #1" }],
};

/** What closing #2 as a duplicate of #1 changes. */
export const DUPLICATE_CHANGES = [
  { op: "comment", number: 2, body: "Duplicate of #1" },
  { op: "add-label", number: 2, label: "duplicate" },
  { op: "close", number: 2 },
];

/** Solves both tasks through the forge MCP tools (`tools.call`). */
export const MCP_AGENT = `export default async function ({ tools, forge, trial }) {
  const call = async (tool, args) => {
    const r = await tools.call("mcp__forge__" + tool, args);
    if (!r.ok) throw new Error(tool + ": " + (r.reason ?? r.error));
    return r.result;
  };
  if (trial.task === "count-open") {
    const open = await call("list_issues", { state: "open" });
    return "There are " + open.total + " open issues.";
  }
  await call("add_comment", { number: 2, body: "Duplicate of #1" });
  await call("add_labels", { number: 2, labels: ["duplicate"] });
  await call("close", { number: 2 });
  return "closed #2 as a duplicate of #1 (" + forge.owner + "/" + forge.repo + ")";
}
`;

/** Solves both tasks with curl through the gateway, as a shell-using agent would. */
export const CLI_AGENT = `export default async function ({ tools, forge, trial }) {
  const api = forge.commandUrl + "/api/v1/repos/" + forge.owner + "/" + forge.repo;
  const run = async (command) => {
    const r = await tools.bash(command);
    if (!r.ok) throw new Error(command + ": " + (r.reason ?? r.error));
    if (r.exitCode !== 0) throw new Error(command + " exited " + r.exitCode + ": " + r.stderr);
    return r.stdout;
  };
  if (trial.task === "count-open") {
    const open = JSON.parse(await run("curl -sS '" + api + "/issues?state=open&type=issues'"));
    return "There are " + open.length + " open issues.";
  }
  await run("curl -sS -f -X POST -H 'Content-Type: application/json' -d '{\\"body\\":\\"Duplicate of #1\\"}' " + api + "/issues/2/comments");
  await run("curl -sS -f -X POST -H 'Content-Type: application/json' -d '{\\"labels\\":[\\"duplicate\\"]}' " + api + "/issues/2/labels");
  await run("curl -sS -f -X PATCH -H 'Content-Type: application/json' -d '{\\"state\\":\\"closed\\"}' " + api + "/issues/2");
  return "closed #2";
}
`;

/** A forge task of the small experiment: `close-duplicate` on the seed in `./seed.json`. */
export function forgeTask(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "close-duplicate",
    fixture: "./fixture",
    prompt: "./prompt.md",
    forge: { seed: "./seed.json" },
    graders: [{ kind: "forge-state", changes: DUPLICATE_CHANGES }],
    ...overrides,
  };
}

/**
 * A scripted forge experiment (compositions of FORGE_HARNESS as `./compare.harness`): the given
 * tasks and variants, the first variant the baseline, one trial each in order, deciding at 0.5.
 */
export function forgeManifest(options: {
  tasks?: unknown[];
  variants: Array<Record<string, unknown>>;
  top?: Record<string, unknown>;
}): Record<string, unknown> {
  return {
    schemaVersion: "harness-compare.v2",
    harness: "./compare.harness",
    tasks: options.tasks ?? [forgeTask()],
    variants: options.variants,
    baseline: options.variants[0]?.id,
    runtime: { host: "scripted", timeoutMs: 60000, validationCommands: [] },
    trials: { count: 1, seed: 3, order: "sequential" },
    verdict: { policy: "paired-v1", alpha: 0.5, minTrials: 1 },
    ...options.top,
  };
}

/**
 * The forge suite's stand-in tools as components (their source is `tools/` beside the harness:
 * copy it with copyForgeSuiteTools): `widgets-mcp`, an MCP server, and `forge-cli`, a program,
 * each reading the forge from its own variables.
 */
export const FORGE_TOOL_COMPONENTS = `component widgets-mcp {
  kind tool
  source "tools"
  mcp { command "node" args ["\${source}/forge-mcp.mjs"] env { GITEA_HOST "\${forge.url}" GITEA_ACCESS_TOKEN "\${forge.token}" } }
}
component forge-cli {
  kind tool
  description "A forge CLI; each command prints JSON."
  source "tools"
  cli { command "node" args ["\${source}/forge-cli.mjs"] env { GITEA_SERVER_URL "\${forge.url}" GITEA_SERVER_TOKEN "\${forge.token}" FORGE_CLI_REPO "\${forge.owner}/\${forge.repo}" } }
}
`;

/** Copies examples/forge-suite/tools to `dir/tools`, where FORGE_TOOL_COMPONENTS look for it. */
export function copyForgeSuiteTools(dir: string): Promise<void> {
  return cp(
    join(import.meta.dirname, "..", "..", "examples", "forge-suite", "tools"),
    join(dir, "tools"),
    { recursive: true },
  );
}
