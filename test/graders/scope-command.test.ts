import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { GradeContext } from "../../src/graders/index.js";
import { createCommandGrader, createScopeGrader } from "../../src/graders/index.js";
import { npmArgv } from "../../src/shared/index.js";
import { testSandbox } from "../support/sandbox.js";
import { cleanupTemporaryDirs, temporaryDir } from "./support.js";

afterEach(cleanupTemporaryDirs);

const sandbox = await testSandbox();

function context(trialRoot: string, changedFiles: string[], expectedFiles: string[]): GradeContext {
  return { trialRoot, changedFiles, expectedFiles, finalText: "", scratchDir: tmpdir(), sandbox };
}

describe("scope grader", () => {
  it("passes in subset mode when every changed file is allowed, reporting each file", async () => {
    const grade = await createScopeGrader({ mode: "subset" }).grade(
      context("/unused", ["src/b.js"], ["src/a.js", "./src/b.js"]),
    );
    expect(grade).toMatchObject({ grader: "scope", score: 100, passed: true });
    expect(grade.checks[0]?.evidence).toEqual({
      mode: "subset",
      files: [{ file: "src/b.js", allowed: true }],
      unchanged: ["src/a.js"],
    });
  });

  it("fails when a file outside the allowed surface changed and names it", async () => {
    const grade = await createScopeGrader({ mode: "subset" }).grade(
      context("/unused", ["test/a.test.js", "src/a.js"], ["src/a.js"]),
    );
    expect(grade.passed).toBe(false);
    expect(grade.score).toBe(0);
    expect(grade.checks[0]?.detail).toBe("changed outside the allowed surface: test/a.test.js");
    expect(grade.checks[0]?.evidence).toMatchObject({
      files: [
        { file: "src/a.js", allowed: true },
        { file: "test/a.test.js", allowed: false },
      ],
    });
  });

  it("fails in exact mode when an expected file did not change", async () => {
    const exact = createScopeGrader({ mode: "exact" });
    const missing = await exact.grade(context("/unused", [], ["README.md"]));
    expect(missing.passed).toBe(false);
    expect(missing.checks[0]?.detail).toBe("expected to change but unchanged: README.md");
    const subset = await createScopeGrader({ mode: "subset" }).grade(
      context("/unused", [], ["README.md"]),
    );
    expect(subset.passed).toBe(true);
  });
});

describe("command grader", () => {
  it("passes on the expected exit code and keeps the output tail, trial path scrubbed", async () => {
    const root = await temporaryDir();
    const grader = createCommandGrader({
      id: "print",
      argv: [process.execPath, "-e", "console.log('cwd=' + process.cwd()); console.error('warn')"],
      timeoutMs: 10_000,
    });
    const grade = await grader.grade(context(root, [], []));
    expect(grade).toMatchObject({ grader: "print", score: 100, passed: true });
    const evidence = grade.checks[0]?.evidence as { stdoutTail: string; stderrTail: string };
    expect(evidence.stdoutTail).toBe("cwd=<trial-root>\n");
    expect(evidence.stderrTail).toBe("warn\n");
  });

  it("fails on an exit code mismatch and says which code was expected", async () => {
    const root = await temporaryDir();
    const grader = createCommandGrader({
      id: "exit",
      argv: [process.execPath, "-e", "process.exit(3)"],
      timeoutMs: 10_000,
      expectedExitCode: 0,
    });
    const grade = await grader.grade(context(root, [], []));
    expect(grade.passed).toBe(false);
    expect(grade.checks[0]?.detail).toMatch(/exited with code 3 \(expected 0\)$/);
    const expectedThree = createCommandGrader({
      ...{ id: "exit3", timeoutMs: 10_000 },
      argv: [process.execPath, "-e", "process.exit(3)"],
      expectedExitCode: 3,
    });
    expect((await expectedThree.grade(context(root, [], []))).passed).toBe(true);
  });

  it("passes only the minimal environment plus what it is given", async () => {
    const root = await temporaryDir();
    process.env.HARNESSLAB_TEST_SECRET = "do-not-leak";
    try {
      const grader = createCommandGrader({
        id: "env",
        argv: [process.execPath, "-e", "console.log(JSON.stringify(process.env))"],
        timeoutMs: 10_000,
        env: { EXTRA: "1" },
      });
      const grade = await grader.grade(context(root, [], []));
      const evidence = grade.checks[0]?.evidence as { stdoutTail: string } | undefined;
      const env = JSON.parse(evidence?.stdoutTail ?? "{}");
      expect(env.EXTRA).toBe("1");
      expect(env.HARNESSLAB_TEST_SECRET).toBeUndefined();
    } finally {
      delete process.env.HARNESSLAB_TEST_SECRET;
    }
  });

  it("fails on timeout and kills the whole process group", async () => {
    const root = await temporaryDir();
    const marker = join(root, "grandchild-alive");
    const grandchild = `setTimeout(() => require("node:fs").writeFileSync(${JSON.stringify(marker)}, "x"), 1500); setInterval(() => {}, 1000);`;
    const script = `require("node:child_process").spawn(process.execPath, ["-e", ${JSON.stringify(grandchild)}], { stdio: "ignore" }); setInterval(() => {}, 1000);`;
    const grader = createCommandGrader({
      id: "hang",
      argv: [process.execPath, "-e", script],
      timeoutMs: 500,
    });
    const grade = await grader.grade(context(root, [], []));
    expect(grade.passed).toBe(false);
    expect(grade.checks[0]?.detail).toContain(
      "timed out after 500 ms (every process it started killed)",
    );
    expect(grade.checks[0]?.evidence).toMatchObject({ timedOut: true });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await expect(readFile(marker, "utf8")).rejects.toThrow();
  });

  it("starts an npm argv through npmArgv, as Windows needs (npm's JavaScript entry point run by node)", async () => {
    const root = await temporaryDir();
    // Inside the trial: the sandbox shows a command nothing of the host's temporary files.
    const npmCli = join(root, "npm-cli.js");
    await writeFile(npmCli, "console.log(JSON.stringify(process.argv.slice(2)));\n");
    const platform = Object.getOwnPropertyDescriptor(process, "platform")!;
    const execpath = process.env.npm_execpath;
    Object.defineProperty(process, "platform", { ...platform, value: "win32" });
    process.env.npm_execpath = npmCli;
    try {
      const grader = createCommandGrader({
        id: "npm-test",
        argv: ["npm", "test", "--silent"],
        timeoutMs: 10_000,
      });
      const grade = await grader.grade(context(root, [], []));
      const evidence = grade.checks[0]?.evidence as { argv: string[]; stdoutTail: string };
      expect(npmArgv(["test", "--silent"])).toEqual([process.execPath, npmCli, "test", "--silent"]);
      // The evidence names the trial by its placeholder.
      expect(evidence.argv).toEqual([
        process.execPath,
        "<trial-root>/npm-cli.js",
        "test",
        "--silent",
      ]);
      expect(evidence.stdoutTail).toBe('["test","--silent"]\n');
      expect(grade.passed).toBe(true);
    } finally {
      Object.defineProperty(process, "platform", platform);
      if (execpath === undefined) delete process.env.npm_execpath;
      else process.env.npm_execpath = execpath;
    }
  });

  it("reports a program that cannot start as a failed check", async () => {
    const root = await temporaryDir();
    await writeFile(join(root, "x"), "");
    const grade = await createCommandGrader({
      id: "missing",
      argv: ["/nonexistent/harnesslab-program"],
      timeoutMs: 5_000,
    }).grade(context(root, [], []));
    expect(grade.passed).toBe(false);
    expect(grade.checks[0]?.detail).toContain("could not start");
    const unnamed = await createCommandGrader({
      id: "missing-on-path",
      argv: ["harnesslab-no-such-program", "--test"],
      timeoutMs: 5_000,
    }).grade(context(root, [], []));
    expect(unnamed.checks[0]?.evidence).toMatchObject({
      spawnError: expect.stringContaining("not found on the sandbox's PATH"),
    });
  });

  it("does not take a command's own words for a program that could not start", async () => {
    // The trial's code runs in the grader's command and can print what bubblewrap prints when
    // it cannot start a program; that must stay a failing command, not an infrastructure error.
    const root = await temporaryDir();
    await writeFile(
      join(root, "check.mjs"),
      'process.stderr.write("bwrap: execvp npm: No such file or directory\\n"); process.exit(1);\n',
    );
    const grade = await createCommandGrader({
      id: "forger",
      argv: ["node", "check.mjs"],
      timeoutMs: 10_000,
    }).grade(context(root, [], []));
    expect(grade.passed).toBe(false);
    expect(grade.checks[0]?.evidence).not.toHaveProperty("spawnError");
    expect(grade.checks[0]?.detail).not.toContain("could not start");
  });
});

describe("command grader cancellation", () => {
  it("throws the abort reason instead of grading when the trial is aborted", async () => {
    const root = await temporaryDir();
    const controller = new AbortController();
    const grader = createCommandGrader({
      id: "slow",
      argv: [process.execPath, "-e", "setInterval(() => {}, 1000)"],
      timeoutMs: 10_000,
    });
    const grading = grader.grade({ ...context(root, [], []), signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(grading).rejects.toMatchObject({ name: "AbortError" });
  });
});
