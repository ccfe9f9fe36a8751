// `compare validate` on forge tasks: "valid" means the run will start, so the seed, the expected
// state or intended changes against the seed, the assignees and the facts are all checked, each
// problem at its manifest field and, inside a file, the file's own JSON path.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/index.js";
import { loadHarnessCatalog, loadManifest } from "../../src/compare/index.js";
import { makeExperiment, type TempExperiment } from "../support/experiment.js";
import {
  DUPLICATE_CHANGES,
  FORGE_HARNESS,
  forgeManifest,
  forgeTask,
  SMALL_SEED,
} from "../support/forge.js";

let exp: TempExperiment;

function manifest(
  overrides: { task?: Record<string, unknown>; top?: Record<string, unknown> } = {},
) {
  return forgeManifest({
    tasks: [forgeTask(overrides.task)],
    variants: [
      { id: "mcp", composition: "by-mcp", agent: "nop" },
      { id: "cli", composition: "by-cli", agent: "nop" },
    ],
    ...(overrides.top === undefined ? {} : { top: overrides.top }),
  }) as Record<string, unknown> & { variants: Array<Record<string, unknown>> };
}

beforeEach(async () => {
  exp = await makeExperiment({
    harness: `${FORGE_HARNESS}
composition by-ftp {
  target scripted
  include [ plugin.forge-core@^1 ]
  require forge-work { minimum advisory }
  configure { forge.access = "ftp" }
}
`,
    fixture: { "README.md": "# widgets\n" },
    manifest: manifest(),
  });
  await exp.writeManifest(SMALL_SEED, "seed.json");
});
afterEach(() => exp.cleanup());

/** `harness compare validate` on the experiment's manifest: its exit code and everything it printed. */
async function validateCli(env?: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  let output = "";
  const code = await runCli(["compare", "validate", exp.manifestPath], {
    stdout: (text) => {
      output += text;
    },
    stderr: (text) => {
      output += text;
    },
    isStderrTTY: false,
    cwd: exp.dir,
    ...(env === undefined ? {} : { env }),
  });
  return { code, output };
}

async function problems(document: unknown): Promise<string[]> {
  await exp.writeManifest(document);
  const loaded = await loadManifest(exp.manifestPath, { loadCatalog: loadHarnessCatalog });
  return loaded.ok ? [] : loaded.problems.map((p) => `${p.path}: ${p.message}`);
}

describe("validating forge tasks", () => {
  it("accepts a forge task, and builds its expected state from the seed and the changes", async () => {
    await exp.writeManifest(manifest());
    const loaded = await loadManifest(exp.manifestPath, { loadCatalog: loadHarnessCatalog });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
    const task = loaded.experiment.tasks[0]!;
    expect(task.forge?.repo).toBe("acme/widgets");
    expect(task.expectedFiles).toEqual([]);
    const grader = task.graders[0];
    expect(grader?.kind).toBe("forge-state");
    if (grader?.kind !== "forge-state") return;
    expect(grader.expected.issues?.find((i) => i.number === 2)).toMatchObject({
      state: "closed",
      labels: ["duplicate"],
      comments: [
        { author: "alice", body: "Same here" },
        { author: "agent", body: "Duplicate of #1" },
      ],
    });
    expect(loaded.experiment.forge).toEqual({
      kind: "local",
      user: "agent",
      author: "maintainer",
      commands: ["curl"],
    });
  });

  it("names a change that does not fit the seed, and an assignee the forge does not know", async () => {
    expect(
      await problems(
        manifest({
          task: {
            graders: [
              {
                kind: "forge-state",
                changes: [
                  { op: "close", number: 9 },
                  { op: "add-label", number: 1, label: "bug" },
                  { op: "assign", number: 1, user: "mallory" },
                ],
              },
            ],
          },
        }),
      ),
    ).toEqual([
      "tasks[0].graders[0].changes[2].user: mallory is not a user of the forge (known: agent, alice, maintainer); a forge can only assign existing users",
      "tasks[0].graders[0].changes[0].number: there is no issue or pull request #9 in the seed (numbers used: 1–3)",
      'tasks[0].graders[0].changes[1]: issue #1 already has label "bug": this change changes nothing (the task would pass without an agent)',
    ]);
  });

  it("names what is wrong inside the seed file, with the file's own path", async () => {
    await exp.writeManifest(
      { ...SMALL_SEED, issues: [{ number: 1, title: "x", state: "open", labels: ["nope"] }] },
      "seed.json",
    );
    expect(await problems(manifest())).toEqual([
      'tasks[0].forge.seed: "./seed.json": issues[0].labels[0]: label "nope" is not defined in labels (a forge attaches only labels the repository defines)',
    ]);
    await writeFile(join(exp.dir, "seed.json"), '{"labels": [}');
    expect((await problems(manifest()))[0]).toMatch(
      /^tasks\[0\]\.forge\.seed: "\.\/seed\.json": line 1, column 13: not valid JSON/,
    );
  });

  it("refuses an expected state that equals the seed, and checks facts", async () => {
    await exp.writeManifest(SMALL_SEED, "same.json");
    expect(
      await problems(
        manifest({
          task: {
            graders: [
              { kind: "forge-state", expected: "./same.json" },
              { kind: "read-facts", facts: [{ description: "x", anyOf: ["a"], pattern: "(" }] },
            ],
          },
        }),
      ),
    ).toEqual([
      'tasks[0].graders[0].expected: "./same.json" equals the seed: the task would pass without an agent',
      // The engine's own words follow; they differ between Node versions.
      expect.stringMatching(
        /^tasks\[0\]\.graders\[1\]\.facts\[0\]\.pattern: not a valid regular expression \(JavaScript, Unicode mode\): /,
      ),
    ]);
  });

  it("keeps forge graders on forge tasks and asks for one end state", async () => {
    expect(
      await problems(
        manifest({
          task: {
            forge: undefined,
            expectedFiles: [],
            graders: [{ kind: "forge-state", changes: DUPLICATE_CHANGES, expected: "./seed.json" }],
          },
        }),
      ),
    ).toEqual([
      "tasks[0].graders[0]: a forge-state grader grades a forge task; give the task a forge seed (tasks[0].forge.seed)",
      "tasks[0].graders[0]: give changes or expected, not both",
    ]);
    expect(await problems(manifest({ task: { graders: [{ kind: "scope" }] }, top: {} }))).toEqual([
      'tasks[0].graders: a forge task needs a "forge-state" grader (mutation tasks) or a "read-facts" grader (read tasks)',
    ]);
  });

  it("asks a file task for its expected files, and a forge setting for a forge task", async () => {
    expect(
      await problems(
        manifest({
          task: { forge: undefined, graders: [{ kind: "scope" }] },
          top: { forge: { kind: "local" } },
        }),
      ),
    ).toEqual([
      "tasks[0].expectedFiles: is required for a task on files (a task with a forge seed may leave it out: nothing may change)",
      "forge: no task has a forge seed (tasks[i].forge), so there is nothing to run on a forge",
    ]);
  });

  it("names a composition whose forge.access is not mcp or cli", async () => {
    const document = manifest();
    document.variants[1] = { id: "cli", composition: "by-ftp", agent: "nop" };
    expect(await problems(document)).toEqual([
      'variants[1].composition: composition "by-ftp" sets forge.access = "ftp"; allowed: "mcp", "cli", "tool" (how the agent reaches a forge task\'s repository)',
    ]);
  });

  it("refuses a live-mode seed whose numbers a forge cannot reproduce", async () => {
    await exp.writeManifest(
      { ...SMALL_SEED, pullRequests: [{ number: 7, title: "x", state: "open" }] },
      "seed.json",
    );
    const live = {
      kind: "gitea",
      url: "https://gitea.example.com",
      tokenEnv: "GITEA_TOKEN",
      owner: "agent",
      user: "agent",
    };
    expect(await problems(manifest({ top: { forge: live } }))).toEqual([
      "tasks[0].forge.seed: live mode creates issues and pull requests in number order, so a seed's numbers must run 1, 2, 3… without gaps (7 is where 3 should be)",
    ]);
  });

  it("exits 1 from compare validate with each problem on its own line", async () => {
    await exp.writeManifest(
      manifest({
        task: { graders: [{ kind: "forge-state", changes: [{ op: "merge", number: 1 }] }] },
      }),
    );
    const { code, output: stdout } = await validateCli();
    expect(code).toBe(1);
    expect(stdout).toContain(
      "tasks[0].graders[0].changes[0].number: issue #1 is an issue; only pull requests are merged",
    );
  });

  it("stops a live run without its token, and a cli variant whose program is missing, before any trial", async () => {
    await exp.writeManifest(
      manifest({
        top: {
          forge: {
            kind: "gitea",
            url: "https://gitea.example.com",
            tokenEnv: "HL_TEST_LIVE_TOKEN",
            owner: "agent",
            user: "agent",
            commands: ["curl", "no-such-forge-cli"],
          },
        },
      }),
    );
    const { code, output: out } = await validateCli({ PATH: process.env.PATH ?? "" });
    expect(code).toBe(1);
    expect(out).toContain(
      "forge.tokenEnv: live mode reads the token from HL_TEST_LIVE_TOKEN, which is not set: set it to a token of agent on https://gitea.example.com",
    );
    expect(out).toContain("forge.commands: no-such-forge-cli is not on PATH");
    expect(out).not.toContain("forge.commands: curl");
  });
});
