// The sandbox tests give to graders and executors they call directly: the real bubblewrap one,
// as every run uses. The suite's global setup has already checked that it starts here.
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { type CommandSandbox, createBwrapSandbox, detectSandbox } from "../../src/sandbox/index.js";

let sandbox: Promise<CommandSandbox> | undefined;

export function testSandbox(): Promise<CommandSandbox> {
  sandbox ??= detectSandbox().then((support) => {
    if (!support.available)
      throw new Error(`the tests need bubblewrap: ${support.reason}; ${support.fix}`);
    return createBwrapSandbox(support);
  });
  return sandbox;
}

// Observing contained commands from outside: a sandboxed command sees only its own copy, so it
// tells the test it started by leaving a mark there, and its pid inside (its own namespace's) is
// not this machine's; the test finds it by its working directory in /proc instead.

/** A program that leaves `mark` in its working directory, then waits for a minute. */
export function markThenWaitSource(mark: string): string {
  return `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(mark)}, "");\nsetTimeout(() => {}, 60000);\n`;
}

/** Trial roots (workspaces or grading copies) under `tempParent` that hold `mark`. */
export function markedCopies(tempParent: string, mark: string): string[] {
  return readdirSync(tempParent)
    .filter((name) => name.startsWith("harnesslab-trial-"))
    .map((name) => join(tempParent, name, "trial"))
    .filter((root) => existsSync(join(root, mark)));
}

/** This machine's pids of the processes whose working directory is one of `dirs`. */
export function pidsWorkingIn(dirs: readonly string[]): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return dirs.includes(readlinkSync(`/proc/${entry}/cwd`));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Running, not a zombie waiting to be reaped. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}
