// The sandbox's limits as a command meets them. The process limit is the kernel's RLIMIT_NPROC,
// which it does not apply to root: run as root, the suite checks it as an unprivileged user.

import { execFile, spawnSync } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBwrapSandbox, detectSandbox } from "../../src/sandbox/index.js";
import { limitsHit } from "../../src/sandbox/run.js";
import { DEFAULT_SANDBOX_LIMITS } from "../../src/sandbox/types.js";

const execFileAsync = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../..");
const NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"];

let base: string;
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-limits-"));
  // The probe runs as another user.
  await chmod(base, 0o755);
});
afterAll(() => rm(base, { recursive: true, force: true }));

/** How this machine can run the probe unprivileged, or why it cannot. */
function unprivileged(): { prefix: string[] } | { skip: string } {
  if (process.getuid?.() !== 0) return { prefix: [] };
  const setpriv = spawnSync("setpriv", ["--version"]);
  if (setpriv.status !== 0) return { skip: "running as root and setpriv (util-linux) is missing" };
  const readable = spawnSync("setpriv", [
    ...NOBODY,
    process.execPath,
    "-e",
    `require("fs").accessSync(${JSON.stringify(join(REPO, "src", "sandbox", "index.ts"))})`,
  ]);
  if (readable.status !== 0)
    return { skip: `running as root and the user nobody cannot read ${REPO}` };
  return { prefix: ["setpriv", ...NOBODY] };
}

const runner = unprivileged();
if ("skip" in runner) console.warn(`skipping the live process-limit test: ${runner.skip}`);

describe("the process limit", () => {
  it.skipIf("skip" in runner)(
    "stops a command that starts more processes than allowed, and says which limit it hit",
    async () => {
      const probe = join(base, "probe.mts");
      await writeFile(
        probe,
        `import { mkdtempSync, rmSync } from "node:fs";
import { createBwrapSandbox, detectSandbox } from ${JSON.stringify(join(REPO, "src", "sandbox", "index.ts"))};
const support = await detectSandbox();
if (!support.available) throw new Error(support.reason);
const sandbox = createBwrapSandbox(support, { limits: { processes: 20 } });
const dir = mkdtempSync("/tmp/hl-nproc-");
const run = (script) => sandbox.run(["/bin/sh", "-c", script], { cwd: dir, writable: [dir], timeoutMs: 30000, privateDir: dir });
const bomb = await run("for i in $(seq 1 60); do sleep 1 & done; wait");
const few = await run("for i in $(seq 1 5); do sleep 0 & done; wait");
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ bomb: { exitCode: bomb.exitCode, limits: bomb.limitsHit.map((l) => l.limit) }, few: { exitCode: few.exitCode, limits: few.limitsHit } }));
`,
        { mode: 0o644 },
      );
      const prefix = "prefix" in runner ? runner.prefix : [];
      const command = [...prefix, "env", "HOME=/tmp", process.execPath, "--import", "tsx", probe];
      const { stdout } = await execFileAsync(command[0]!, command.slice(1), {
        cwd: REPO,
        timeout: 60_000,
      });
      const result = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
        bomb: { exitCode: number; limits: string[] };
        few: { exitCode: number; limits: unknown[] };
      };
      expect(result.bomb.exitCode).not.toBe(0);
      expect(result.bomb.limits).toContain("processes");
      expect(result.few).toEqual({ exitCode: 0, limits: [] });
    },
    90_000,
  );
});

describe("the memory limit", () => {
  it("stops a command that writes more memory than allowed, says so, and lets WebAssembly reserve what it never writes", async () => {
    const support = await detectSandbox();
    if (!support.available) throw new Error(support.reason);
    const sandbox = createBwrapSandbox(support, { limits: { memoryBytes: 256 * 1024 ** 2 } });
    const dir = await mkdtemp(join(base, "memory-"));
    const run = (script: string) =>
      sandbox.run([process.execPath, "-e", script], {
        cwd: dir,
        writable: [dir],
        timeoutMs: 60_000,
        privateDir: dir,
      });
    // 512 MiB of buffers, written: past the limit.
    const hog = await run(
      "const kept = []; for (let i = 0; i < 64; i++) kept.push(Buffer.alloc(8 * 1024 * 1024, 1)); console.log('all allocated');",
    );
    expect(hog.exitCode).not.toBe(0);
    expect(hog.stdout).not.toContain("all allocated");
    expect(hog.limitsHit.map((hit) => hit.limit)).toContain("memory");
    // V8 reserves gigabytes of address space for a WebAssembly memory and writes a page of it.
    const wasm = await run("new WebAssembly.Memory({ initial: 1 }); console.log('ok');");
    expect(wasm).toMatchObject({ exitCode: 0, limitsHit: [] });
    expect(wasm.stdout.trim()).toBe("ok");
  });
});

describe("limitsHit", () => {
  const ran = (fields: { exitCode: number | null; stderr?: string; signal?: NodeJS.Signals }) => ({
    argv: ["x"],
    exitCode: fields.exitCode,
    signal: fields.signal ?? null,
    timedOut: false,
    aborted: false,
    stdout: "",
    stderr: fields.stderr ?? "",
    durationMs: 1,
  });

  it("names the process limit from how a shell or Node reports a failed fork", () => {
    for (const stderr of [
      "/bin/sh: 0: Cannot fork\n",
      "bash: fork: Resource temporarily unavailable\n",
      "Error: spawn EAGAIN\n",
    ])
      expect(
        limitsHit(ran({ exitCode: 2, stderr }), DEFAULT_SANDBOX_LIMITS).map((h) => h.limit),
      ).toEqual(["processes"]);
  });

  it("names nothing for a command that simply failed", () => {
    expect(
      limitsHit(ran({ exitCode: 1, stderr: "assertion failed\n" }), DEFAULT_SANDBOX_LIMITS),
    ).toEqual([]);
    expect(limitsHit(ran({ exitCode: 0 }), DEFAULT_SANDBOX_LIMITS)).toEqual([]);
  });

  it("names the CPU and file-size limits by their signals", () => {
    expect(limitsHit(ran({ exitCode: 152 }), DEFAULT_SANDBOX_LIMITS).map((h) => h.limit)).toEqual([
      "cpu-time",
    ]);
    expect(limitsHit(ran({ exitCode: 153 }), DEFAULT_SANDBOX_LIMITS).map((h) => h.limit)).toEqual([
      "file-size",
    ]);
  });
});
