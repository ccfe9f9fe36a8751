// Simulates typical runs of the baseline setup (a bare coding loop and the goal).
// Without a documentation standard it writes a plausible README with the flaws such
// runs show, varying deterministically with the trial index: it trusts the archived
// design notes (CommonJS, a CLI, a remote docs link), forgets sections, and its Quick
// Start is written from memory instead of from the example, so it does not run.

const TITLE = "# @fixture/task-pool\n\nA small task pool for Node.js with concurrency limits.\n";

const INSTALL = "## Installation\n\n```sh\nnpm install @fixture/task-pool\n```\n";

// Written from the archived notes: a CommonJS require and an option that no longer exists.
const QUICK_START_FROM_ARCHIVE = `## Quick Start

\`\`\`js
const { createPool } = require("@fixture/task-pool");

const pool = createPool({ concurrency: 4, retries: 3 });
await pool.run(async () => "done");
\`\`\`
`;

// Plausible but wrong: the pool has no \`add\` method.
const QUICK_START_WRONG_API = `## Quick Start

\`\`\`js
import { createPool } from "@fixture/task-pool";

const pool = createPool({ concurrency: 2 });
const result = await pool.add(() => Promise.resolve(42));
console.log(result);
\`\`\`
`;

const API = `## API

- \`createPool({ concurrency, maxQueue })\` creates a pool; \`pool.run(task)\` runs a task.
- \`DEFAULT_CONCURRENCY\` is the default limit.
- \`PoolFullError\` is thrown when the queue is full.
`;

const CLI = `## Command-line interface

Run a file of jobs with \`npx task-pool run jobs.json\`. See https://task-pool.example/docs for more.
`;

const TESTING = "## Testing\n\n```sh\nnpm test\n```\n";

export default async function baselineAgent({ tools, trial }) {
  await tools.read("package.json");
  await tools.glob("**/*.md");
  await tools.read("docs/archive-v0.md");
  const variant = trial.index % 3;
  const sections =
    variant === 0
      ? [TITLE, INSTALL, QUICK_START_FROM_ARCHIVE, API, CLI, TESTING]
      : variant === 1
        ? [TITLE, INSTALL, QUICK_START_WRONG_API, API, TESTING]
        : [TITLE, QUICK_START_WRONG_API, API, "The package supports CommonJS and ESM.\n", TESTING];
  const write = await tools.write("README.md", sections.join("\n"));
  return write.ok
    ? "Wrote README.md documenting installation, usage and the API."
    : `could not write README.md: ${write.denied ? write.reason : write.error}`;
}
