// Whether the real clients can run here. In CI they must (a missing binary fails the suite);
// elsewhere a missing one skips with a printed reason.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export const IN_CI = process.env.CI === "true" || process.env.CI === "1";

/** The native Claude Code binary the Agent SDK would run on this platform, or null. */
export function claudeCodeBinary(): string | null {
  const require = createRequire(import.meta.url);
  const name = process.platform === "win32" ? "claude.exe" : "claude";
  for (const suffix of ["", "-musl"]) {
    const pkg = `@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}${suffix}`;
    try {
      const binary = join(dirname(require.resolve(`${pkg}/package.json`)), name);
      if (existsSync(binary)) return binary;
    } catch {
      // not installed for this platform
    }
  }
  return null;
}

/** Whether a package is installed where the tests would import it from (ESM-only ones too). */
export function packageInstalled(name: string): boolean {
  const paths = createRequire(import.meta.url).resolve.paths(name) ?? [];
  return paths.some((dir) => existsSync(join(dir, name, "package.json")));
}

/** True when the real-client tests should run; prints why when they are skipped. */
export function realClientAvailable(what: string, available: boolean): boolean {
  if (available || IN_CI) return true;
  console.warn(`skipped: ${what} is not installed here (these tests are required in CI)`);
  return false;
}

/** A manifest's claude-code runtime for the offline real-client runs (no validation commands unless given). */
export function claudeCodeRuntime(
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    host: "claude-code",
    model: "claude-sonnet-4-5",
    tools: ["Read", "Glob", "Grep", "Edit", "Write", "Bash"],
    allowedTools: [],
    disallowedTools: ["WebFetch", "WebSearch", "Task"],
    permissionMode: "default",
    maxTurns: 10,
    network: "deny",
    validationCommands: [],
    ...overrides,
  };
}
