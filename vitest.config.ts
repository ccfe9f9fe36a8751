import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most test files wait on child processes (git, bubblewrap, node, redis): two at once even on
    // a 2-core machine, where vitest's default (cores - 1) would run them one by one.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ["test/support/global-setup.ts"],
    // Run keys (record seals) go to a throwaway state directory, never the user's own; the CLI
    // processes tests start inherit it.
    env: { HARNESSLAB_STATE_DIR: join(tmpdir(), "harnesslab-test-state") },
  },
});
