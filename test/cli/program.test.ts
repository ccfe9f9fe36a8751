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

describe("--json on failure", () => {
  it("still prints exactly one JSON document on stdout, naming the problem", async () => {
    for (const argv of [
      ["compile", "does-not-exist.harness", "--json"],
      ["compare", "run", "does-not-exist.json", "--out", "x", "--json"],
      ["compare", "regrade", "does-not-exist", "--json"],
      ["compare", "run", "--json"],
    ]) {
      const run = await runHarness(argv);
      expect(run.exitCode, argv.join(" ")).toBe(2);
      const document = JSON.parse(run.stdout);
      expect(document.ok).toBe(false);
      expect(document.error.exitCode).toBe(2);
      expect(document.error.message.length).toBeGreaterThan(0);
      expect(run.stderr.length).toBeGreaterThan(0);
    }
  });
});
