import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { minimalEnv, runCommand } from "../../src/shared/index.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe("runCommand", () => {
  it("runs an argv array without a shell and captures output and exit code", async () => {
    const result = await runCommand(
      [process.execPath, "-e", "console.log('a; echo b'); process.exit(3)"],
      {
        cwd: tmpdir(),
        env: minimalEnv(),
        timeoutMs: 10_000,
      },
    );
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe("a; echo b\n");
    expect(result.timedOut).toBe(false);
  });

  it("reports a program that cannot start as a value, not an exception", async () => {
    const result = await runCommand(["/nonexistent/program-xyz"], {
      cwd: tmpdir(),
      timeoutMs: 5_000,
    });
    expect(result.exitCode).toBeNull();
    expect(result.spawnError).toMatch(/ENOENT/);
  });

  it("kills the whole process group, grandchildren included, on timeout", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hl-proc-"));
    dirs.push(dir);
    const marker = join(dir, "grandchild-alive");
    // The child spawns a grandchild that would write a marker after 1.5 s, then both hang.
    const grandchild =
      "setTimeout(() => require('node:fs').writeFileSync(process.argv[1], 'x'), 1500); setInterval(() => {}, 1000);";
    const script = `
      const { spawn } = require("node:child_process");
      spawn(process.execPath, ["-e", ${JSON.stringify(grandchild)}, process.argv[1]], { stdio: "ignore" });
      setInterval(() => {}, 1000);
    `;
    const result = await runCommand([process.execPath, "-e", script, marker], {
      cwd: dir,
      env: minimalEnv(),
      timeoutMs: 500,
    });
    expect(result.timedOut).toBe(true);
    await new Promise((r) => setTimeout(r, 2000));
    await expect(readFile(marker, "utf8")).rejects.toThrow();
  });

  it("leaves nothing of its process group running after the command exits", async () => {
    const dir = await mkdtemp(join(tmpdir(), "hl-proc-"));
    dirs.push(dir);
    const marker = join(dir, "background-alive");
    // The command starts a background process (as `node srv.js &` would) and exits at once.
    const background =
      "setTimeout(() => require('node:fs').writeFileSync(process.argv[1], 'x'), 1000); setInterval(() => {}, 1000);";
    const script = `
      const { spawn } = require("node:child_process");
      spawn(process.execPath, ["-e", ${JSON.stringify(background)}, process.argv[1]], { stdio: "ignore" }).unref();
    `;
    const result = await runCommand([process.execPath, "-e", script, marker], {
      cwd: dir,
      env: minimalEnv(),
      timeoutMs: 10_000,
    });
    expect(result.exitCode).toBe(0);
    await new Promise((r) => setTimeout(r, 1500));
    await expect(readFile(marker, "utf8")).rejects.toThrow();
  });

  it("passes only the environment it is given", async () => {
    const result = await runCommand(
      [process.execPath, "-e", "console.log(JSON.stringify(Object.keys(process.env)))"],
      {
        cwd: tmpdir(),
        env: { PATH: process.env.PATH ?? "" },
        timeoutMs: 10_000,
      },
    );
    expect(JSON.parse(result.stdout)).toEqual(["PATH"]);
  });
});
