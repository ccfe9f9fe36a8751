// The experiment `harness init` writes: small, complete and runnable offline at once, with a
// README that says what each file is for. `host` picks the runtime the manifest and the
// compositions target; the fixture, prompt and graders are the same for every host.

export type InitHost = "scripted" | "claude-code" | "codex" | "qoder";
export const INIT_HOSTS: readonly InitHost[] = ["scripted", "claude-code", "codex", "qoder"];

const PACKAGE_JSON = `${JSON.stringify(
  {
    name: "slugify-demo",
    version: "1.0.0",
    description: "Turns titles into URL slugs.",
    type: "module",
    exports: "./src/slug.js",
    scripts: { test: "node --test" },
    license: "MIT",
  },
  null,
  2,
)}\n`;

// The bug: only the first space becomes a dash.
const SLUG_JS = `/** "Hello World Again" -> "hello-world-again" */
export function slugify(title) {
  return title.trim().toLowerCase().replace(" ", "-");
}
`;

const SLUG_TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { slugify } from "../src/slug.js";

test("one word", () => assert.equal(slugify("Hello"), "hello"));
test("two words", () => assert.equal(slugify("Hello World"), "hello-world"));
test("many words and spaces", () => assert.equal(slugify("  Hello   World Again "), "hello-world-again"));
`;

const PROMPT = `The tests of this package fail: \`slugify\` only replaces the first space.
Fix \`src/slug.js\` so that every run of whitespace becomes one dash. Do not change the tests.
Run \`npm test\` to check your work.
`;

const BUGGY_LINE = '  return title.trim().toLowerCase().replace(" ", "-");';
const PARTIAL_FIX = '  return title.trim().toLowerCase().replaceAll(" ", "-");';
const FULL_FIX = '  return title.trim().toLowerCase().replace(/\\s+/g, "-");';

const SHARED_AGENT = `// Helpers of the two scripted agents. A scripted agent stands in for a real one offline: it
// acts through ctx.tools, which the harness's permission policy checks exactly as it checks a
// real host's tool calls. See docs/scripted-agents.md in harnesslab for what ctx holds.

export const SOURCE = "src/slug.js";
const BUGGY = ${JSON.stringify(BUGGY_LINE)};
/** Looks right, but turns "a  b" into "a--b". */
export const PARTIAL_FIX = ${JSON.stringify(PARTIAL_FIX)};
export const FULL_FIX = ${JSON.stringify(FULL_FIX)};

/** Replaces the line that builds the slug with \`line\`, whatever state the file is in. */
export async function writeFix(tools, line) {
  const read = await tools.read(SOURCE);
  if (!read.ok) throw new Error(\`cannot read \${SOURCE}: \${read.denied ? read.reason : read.error}\`);
  const current = [BUGGY, PARTIAL_FIX, FULL_FIX].find((candidate) => read.content.includes(candidate));
  if (current === undefined) throw new Error("the slug line is not where it was expected");
  if (current !== line) await tools.edit(SOURCE, current, line);
}

/** Runs the tests through the policy-checked Bash tool; true when they pass. */
export async function testsPass(tools) {
  const run = await tools.bash("npm test");
  return run.ok && run.exitCode === 0;
}
`;

const BASELINE_AGENT = `// @ts-check
// Simulates the baseline setup: it fixes the bug, but four runs in five with a fix that looks
// right and misses a case, and it never runs the tests to find out.
import { FULL_FIX, PARTIAL_FIX, writeFix } from "./shared.mjs";

/** @type {import("harnesslab").ScriptedAgent} */
export default async function baseline({ tools, trial }) {
  await writeFix(tools, trial.index % 5 === 0 ? FULL_FIX : PARTIAL_FIX);
  return "Replaced the spaces with dashes.";
}
`;

const CAREFUL_AGENT = `// @ts-check
// Simulates the careful setup: the same first attempts, but it runs the tests before it
// finishes, and when they fail it fixes the slug properly.
import { FULL_FIX, PARTIAL_FIX, testsPass, writeFix } from "./shared.mjs";

/** @type {import("harnesslab").ScriptedAgent} */
export default async function careful({ tools, trial }) {
  await writeFix(tools, trial.index % 5 === 0 ? FULL_FIX : PARTIAL_FIX);
  if (await testsPass(tools)) return "Fixed slugify; npm test passes.";
  await writeFix(tools, FULL_FIX);
  const passed = await testsPass(tools);
  return passed ? "Fixed slugify for runs of spaces too; npm test passes." : "npm test still fails.";
}
`;

function harnessSource(host: InitHost): string {
  const gate =
    host === "codex"
      ? "prompt-preamble strength advisory"
      : "permission-callback strength enforced";
  return `// Two setups for the same task, written once. Edit the components (what the agent is told
// and held to), then compare the compositions with \`harness compare run experiment.json --out runs/1\`.

component coding-loop {
  kind workflow
  description "Read the failing test and the code it exercises, make the smallest change that fixes the bug, and report what changed."
  permissions { workspace read workspace write process allow network deny }
}

component run-tests-first {
  kind workflow
  description "Run the tests before you finish; if they fail, read the failure and fix the code."
  permissions { process allow workspace read network deny }
}

component fix-code-not-tests {
  kind policy
  description "Only change the files the task names; never edit tests to make them pass."
  permissions { workspace write network deny }
}

binding coding-loop for ${host} { mechanism prompt-preamble strength advisory }
binding run-tests-first for ${host} { mechanism prompt-preamble strength advisory }
binding fix-code-not-tests for ${host} { mechanism ${gate} }

// Including a plugin enables every component it provides, so what only the careful setup has
// lives in a plugin of its own that only the careful composition includes.
plugin basics {
  version "1.0.0"
  provides [ component.coding-loop ]
}

plugin careful-habits {
  version "1.0.0"
  provides [ component.run-tests-first, component.fix-code-not-tests ]
}

composition baseline {
  target ${host}
  include [ plugin.basics@^1 ]
  require coding-loop { minimum advisory }
}

composition careful extends baseline {
  include [ plugin.careful-habits@^1 ]
  require run-tests-first { minimum advisory }
  require fix-code-not-tests { minimum advisory }
}
`;
}

function runtimeFor(host: InitHost): Record<string, unknown> {
  const validationCommands = [["npm", "test"]];
  if (host === "scripted") return { host, timeoutMs: 60000, validationCommands };
  return {
    host,
    model:
      host === "claude-code" ? "claude-sonnet-4-5" : host === "codex" ? "gpt-5.5" : "performance",
    tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
    allowedTools: [],
    disallowedTools: ["WebFetch", "WebSearch"],
    permissionMode: "default",
    maxTurns: 20,
    timeoutMs: 600000,
    network: "deny",
    validationCommands,
  };
}

function manifest(host: InitHost): string {
  const scripted = host === "scripted";
  return `${JSON.stringify(
    {
      schemaVersion: "harness-compare.v2",
      harness: "./setup.harness",
      tasks: [
        {
          id: "fix-slugify",
          fixture: "./fixture",
          prompt: "./prompt.md",
          expectedFiles: ["src/slug.js"],
          graders: [
            { kind: "scope", mode: "subset" },
            {
              kind: "tests",
              id: "unit-tests",
              failToPass: ["many words and spaces"],
              passToPass: ["one word", "two words"],
            },
          ],
        },
      ],
      variants: [
        {
          id: "baseline",
          composition: "baseline",
          ...(scripted ? { agent: "./agents/baseline.mjs" } : {}),
        },
        {
          id: "careful",
          composition: "careful",
          ...(scripted ? { agent: "./agents/careful.mjs" } : {}),
        },
      ],
      baseline: "baseline",
      runtime: runtimeFor(host),
      trials: { count: 5, seed: 1, order: "randomized" },
      verdict: { policy: "paired-v1", alpha: 0.05, minTrials: 5, maxCostRatio: 1.25 },
      concurrency: 2,
    },
    null,
    2,
  )}\n`;
}

const HOST_NOTES: Record<InitHost, string> = {
  scripted:
    "The variants run scripted agents (`agents/`), so everything works offline. `harness init --host claude-code` (or `codex`, `qoder`) writes the same experiment for a real agent.",
  "claude-code":
    "The variants run Claude Code. Install its SDK next to harnesslab (`npm install @anthropic-ai/claude-agent-sdk`) and set `ANTHROPIC_API_KEY`; `harness compare validate experiment.json` says what is missing.",
  codex:
    "The variants run Codex. Install its SDK next to harnesslab (`npm install @openai/codex-sdk`) and set `OPENAI_API_KEY`; `harness compare validate experiment.json` says what is missing.",
  qoder:
    "The variants run Qoder. Install it next to harnesslab (`QODER_SKIP_DOWNLOAD=1 npm install @qoder-ai/qoder-agent-sdk @qoder-ai/qodercli`) and set `QODER_PERSONAL_ACCESS_TOKEN`. Qoder cannot run inside harnesslab's OS sandbox, so runs need `--unsafe-no-sandbox`.",
};

/** The commands that validate and run the experiment, from its own directory. */
export function nextCommands(host: InitHost, harness: string): string[] {
  const unsafe = host === "qoder" ? " --unsafe-no-sandbox" : "";
  return [
    "cd <this directory>",
    `${harness} compare validate experiment.json${unsafe}`,
    `${harness} compare run experiment.json --out runs/1${unsafe}`,
  ];
}

function readme(host: InitHost, harness: string): string {
  return `# A harnesslab experiment

Does telling an agent to run the tests before it finishes make it fix bugs more reliably?
This experiment compares two setups of the same agent on one bug-fix task, 5 trials each,
and gives a verdict: \`accept\` (the careful setup is better), \`reject\`, or \`need_more_work\`.

${HOST_NOTES[host]}

Run it from this directory:

\`\`\`sh
${nextCommands(host, harness).slice(1).join("\n")}
\`\`\`

(\`${harness}\` is how this machine runs the harnesslab that wrote these files; the commands
below say \`harness\` for it.)

The verdict and every trial's evidence (the patch, the grader checks, every tool call the
policy decided) are under \`runs/1/\`; open \`runs/1/verdict.html\`.

## The files

| file | what it is |
| --- | --- |
| \`experiment.json\` | the experiment: the task, its graders, the two variants, the host, how many trials, the verdict policy |
| \`setup.harness\` | the agent setups, written once: components (instructions and rules), how each is bound to the host, and the two compositions compared |
| \`prompt.md\` | the task as the agent receives it (after its setup's preamble) |
| \`fixture/\` | the repository every trial starts from, copied fresh for each: a package whose test fails |
${host === "scripted" ? "| `agents/` | the scripted agents that stand in for a real one offline; they act only through `ctx.tools` |\n" : ""}
## Edit it

- Change the setups in \`setup.harness\` (\`harness compile setup.harness\` checks it, \`harness
  resolve setup.harness --composition careful\` shows what the host realizes).
- Point \`fixture\` at your own repository (plain files, no \`.git\`), write the \`prompt\`, and
  list the files the agent may change in \`expectedFiles\`.
- Graders decide pass or fail: \`scope\` (only the expected files changed) and \`tests\` (the
  tests named in \`failToPass\` and \`passToPass\` are reported passed by node's test runner:
  an agent cannot pass by making \`npm test\` exit 0 without running them). Add tasks to compare
  on more than one.
- Raise \`trials.count\`: one task with 5 trials a side can only show a large difference;
  \`harness compare plan experiment.json\` says how many trials an effect needs.
`;
}

/** Every file of the experiment, relative path → content. */
export function initFiles(host: InitHost, harness: string): Record<string, string> {
  const files: Record<string, string> = {
    "README.md": readme(host, harness),
    "experiment.json": manifest(host),
    "setup.harness": harnessSource(host),
    "prompt.md": PROMPT,
    "fixture/package.json": PACKAGE_JSON,
    "fixture/src/slug.js": SLUG_JS,
    "fixture/test/slug.test.js": SLUG_TEST,
  };
  if (host === "scripted") {
    files["agents/shared.mjs"] = SHARED_AGENT;
    files["agents/baseline.mjs"] = BASELINE_AGENT;
    files["agents/careful.mjs"] = CAREFUL_AGENT;
  }
  return files;
}
