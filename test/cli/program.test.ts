import { describe, expect, it } from "vitest";
import { runHarness } from "../support/cli.js";

describe("harness CLI", () => {
  it("prints the package version", async () => {
    const run = await runHarness(["--version"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("exits 2 with a message on an unknown command", async () => {
    const run = await runHarness(["frobnicate"]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("unknown command 'frobnicate'");
  });
});
