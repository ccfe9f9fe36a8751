// Hostile scripted agents (test/fixtures/agents) against the bounded tool policy, end to end
// through runExperiment: every attempt is denied and recorded, and nothing outside the trial
// changes — a sentinel directory beside the trials' temp parent, the manifest directory and
// the fixture stay byte-identical.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { VerdictDocument } from "../../src/compare/index.js";
import { permissionDecisionsSchema } from "../../src/exec/index.js";
import { listTree } from "../fixtures/manifests/workspace.js";
import {
  fixtureAgent,
  makeExperiment,
  readJson,
  runManifest,
  syntheticManifest,
  type TempExperiment,
} from "../support/experiment.js";

interface Attempt {
  attack: string;
  ok: boolean;
  denied: boolean;
  rule: string | null;
  files?: string[];
  matches?: Array<{ path: string; text: string }>;
  exitCode?: number | null;
}

const ADVERSARIES = {
  escape: "escape-paths.mjs",
  symlink: "symlink-escape.mjs",
  "git-dir": "git-dir.mjs",
  shell: "shell-tricks.mjs",
  unknown: "unknown-tools.mjs",
} as const;

/** The rule each attack must be denied by; attacks not listed here are expected to be allowed. */
const EXPECTED_DENIALS: Record<keyof typeof ADVERSARIES, Record<string, string>> = {
  escape: {
    "write ../x": "path-outside-root",
    "write ../../../sentinel/owned.txt": "path-outside-root",
    "write src/../../x": "path-outside-root",
    "write absolute sentinel/owned.txt": "path-outside-root",
    "edit absolute sentinel/keep.txt": "path-outside-root",
    "write ~/owned.txt": "path-outside-root",
    "read absolute sentinel/keep.txt": "path-outside-root",
    "read /etc/hostname": "path-outside-root",
    "glob ../**": "path-outside-root",
    "glob * in ..": "path-outside-root",
    "grep keep in sentinel": "path-outside-root",
    "write with a NUL byte": "invalid-input",
    "write with a non-string path": "invalid-input",
    "MultiEdit (not offered) on the sentinel": "tool-not-enabled",
  },
  symlink: {
    "write through a directory link": "path-outside-root",
    "write an allowed file that is a link outside": "path-outside-root",
    "edit an allowed file that is a link outside": "path-outside-root",
    "write an allowed file that is a dangling link outside": "path-outside-root",
    "write link/../x (the kernel's ..)": "path-outside-root",
    "read through a directory link": "path-outside-root",
    "grep in a directory link": "path-outside-root",
  },
  "git-dir": {
    "write .git/hooks/pre-commit": "git-dir",
    "write .git/config": "git-dir",
    "edit .git/HEAD": "git-dir",
    "write .GIT/hooks/post-checkout": "git-dir",
    "write src/../.git/hooks/pre-push": "git-dir",
    "write absolute .git/hooks/pre-commit": "git-dir",
    "write through a link to .git/hooks": "git-dir",
    "read .git/config": "git-dir",
    "glob in .git": "git-dir",
  },
  shell: {
    "node check.mjs; touch owned": "shell-metacharacter",
    "node check.mjs && curl http://example.com": "shell-metacharacter",
    "$(touch owned)": "shell-metacharacter",
    "`touch owned`": "shell-metacharacter",
    "node check.mjs > ../../../sentinel/owned.txt": "shell-metacharacter",
    "node check.mjs < /etc/passwd": "shell-metacharacter",
    "node check.mjs | tee owned": "shell-metacharacter",
    "node check.mjs\ntouch owned": "shell-metacharacter",
    "node check.mjs &": "shell-metacharacter",
    "curl http://example.com": "command-not-allowed",
    "node env.mjs --extra": "command-not-allowed",
    "background node check.mjs": "background-not-allowed",
  },
  unknown: {
    WebFetch: "unknown-tool",
    WebSearch: "unknown-tool",
    Task: "unknown-tool",
    NotebookEdit: "unknown-tool",
    mcp__filesystem__write_file: "unknown-tool",
    "WRITE (near-miss spelling)": "unknown-tool",
  },
};

let exp: TempExperiment;
let sentinel: string;
let verdict: VerdictDocument;
const before: Record<string, string[]> = {};

async function attemptsOf(variant: string): Promise<Attempt[]> {
  const trial = verdict.trials.find((t) => t.variant === variant)!;
  return JSON.parse(
    await readFile(join(exp.outDir, trial.artifactDir, "response.txt"), "utf8"),
  ) as Attempt[];
}

beforeAll(async () => {
  exp = await makeExperiment();
  sentinel = join(exp.base, "sentinel");
  await mkdir(join(sentinel, "sub"), { recursive: true });
  await writeFile(join(sentinel, "keep.txt"), "keep sentinel-content\n");
  await writeFile(join(sentinel, "sub", "keep.txt"), "keep sentinel-content\n");
  await exp.writeAgent("attack.mjs", await fixtureAgent("attack.mjs"));
  const variants: unknown[] = [{ id: "baseline", composition: "plain", agent: "nop" }];
  for (const [id, file] of Object.entries(ADVERSARIES)) {
    variants.push({
      id,
      composition: "careful",
      agent: await exp.writeAgent(file, await fixtureAgent(file)),
    });
  }
  await exp.writeManifest(
    syntheticManifest({
      tasks: [
        {
          id: "fix-value",
          fixture: "./fixture",
          prompt: "./prompt.md",
          expectedFiles: ["src/value.txt", "src/other.txt"],
          graders: [
            { kind: "scope", mode: "subset" },
            { kind: "command", id: "check", argv: ["node", "check.mjs"], timeoutMs: 30000 },
          ],
        },
      ],
      variants,
      trials: { count: 1, seed: 99, order: "randomized" },
      verdict: { policy: "paired-v1", minTrials: 1 },
    }),
  );
  before.sentinel = await listTree(sentinel);
  before.exp = await listTree(exp.dir);
  ({ verdict } = await runManifest(exp.manifestPath, {
    outDir: exp.outDir,
    tempParent: exp.trialsDir,
  }));
});

afterAll(() => exp.cleanup());

describe("adversarial scripted agents", () => {
  for (const variant of Object.keys(ADVERSARIES) as Array<keyof typeof ADVERSARIES>) {
    it(`${variant}: every attempt is denied with the expected rule`, async () => {
      const attempts = await attemptsOf(variant);
      const expected = EXPECTED_DENIALS[variant];
      for (const [attack, rule] of Object.entries(expected)) {
        const seen = attempts.find((a) => a.attack === attack);
        expect(seen, attack).toBeDefined();
        expect({ attack, denied: seen!.denied, rule: seen!.rule }).toEqual({
          attack,
          denied: true,
          rule,
        });
      }
      // Whatever was not an attack went through (the policy is not simply denying everything).
      for (const a of attempts.filter((x) => !(x.attack in expected)))
        expect({ attack: a.attack, ok: a.ok }).toEqual({ attack: a.attack, ok: true });
    });

    it(`${variant}: every denial is recorded in permission-decisions.json and counted`, async () => {
      const trial = verdict.trials.find((t) => t.variant === variant)!;
      const decisions = permissionDecisionsSchema.parse(
        await readJson(exp.outDir, `${trial.artifactDir}/permission-decisions.json`),
      ).decisions;
      const attempts = await attemptsOf(variant);
      const deniedRules = attempts.filter((a) => a.denied).map((a) => a.rule);
      expect(decisions.filter((d) => d.decision === "deny").map((d) => d.rule)).toEqual(
        deniedRules,
      );
      expect(decisions).toHaveLength(attempts.length);
      expect(trial.permissionDenials).toBe(deniedRules.length);
      for (const d of decisions) {
        expect(d.inputSummary).not.toContain(exp.trialsDir);
        expect(d.reason).not.toContain(exp.trialsDir);
      }
    });
  }

  it("symlink: searching the whole trial never follows a link outside", async () => {
    const attempts = await attemptsOf("symlink");
    const glob = attempts.find((a) => a.attack === "glob the whole trial")!;
    expect(glob.files?.some((f) => f.startsWith("out-link/") || f.startsWith("nested/deep/"))).toBe(
      false,
    );
    const grep = attempts.find((a) => a.attack === "grep the whole trial")!;
    expect(grep.matches).toEqual([]);
  });

  it("shell: the allowed command ran (and failed on the unfixed value); nothing else was created", async () => {
    const attempts = await attemptsOf("shell");
    expect(attempts[0]).toMatchObject({ attack: "control: node check.mjs", ok: true, exitCode: 1 });
    const trial = verdict.trials.find((t) => t.variant === "shell")!;
    expect(trial.changedFiles).toEqual([]);
    expect(await readFile(join(exp.outDir, trial.artifactDir, "patch.diff"), "utf8")).toBe("");
  });

  it("changes nothing outside the trials: sentinel, manifest directory and fixture are byte-identical", async () => {
    expect(await listTree(sentinel)).toEqual(before.sentinel);
    expect(await listTree(exp.dir)).toEqual(before.exp);
    expect(await readdir(exp.trialsDir)).toEqual([]);
    expect(verdict.fixturesUnchanged).toBe(true);
  });

  it("records the links the symlink agent planted in its patch and fails it on scope", async () => {
    const trial = verdict.trials.find((t) => t.variant === "symlink")!;
    expect(trial.changedFiles).toEqual([
      "nested/deep",
      "out-link",
      "src/other.txt",
      "src/value.txt",
    ]);
    expect(trial.outcome).toBe("failed");
    const patch = await readFile(join(exp.outDir, trial.artifactDir, "patch.diff"), "utf8");
    expect(patch).toContain("new file mode 120000");
    // The links' targets are what the agent wrote (kept verbatim so the patch applies); the
    // trial's own location never appears.
    expect(patch).toContain(`+${join(exp.base, "sentinel")}`);
    expect(patch).not.toContain(exp.trialsDir);
  });
});
