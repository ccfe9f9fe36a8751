// git for building test repositories: no user or system configuration, a fixed author, the
// output as text. (The harness's own git calls have their own environment in src/.)
import { execFileSync } from "node:child_process";

const env = {
  ...process.env,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

/** Runs `git args…` in `cwd` and returns its trimmed stdout; throws when git fails. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env, encoding: "utf8" }).trim();
}
