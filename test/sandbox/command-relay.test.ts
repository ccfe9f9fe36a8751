// The command relay: a contained host's shell commands run in a sandbox of their own beside the
// host's, so nothing the agent's code does can reach the host process. Driven the way Claude
// Code drives it: a program inside the host's sandbox runs `<shell> <script>`.

import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ContainedHost, containHost } from "../../src/exec/sdk/contained.js";
import { startCommandRelay } from "../../src/sandbox/index.js";
import { testSandbox } from "../support/sandbox.js";

let base: string;
let root: string;
let scratchDir: string;
let hostTmp: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-relay-"));
  root = join(base, "trial");
  scratchDir = join(base, "scratch");
  hostTmp = join(scratchDir, "tmp");
  await mkdir(join(root, ".git"), { recursive: true });
  await mkdir(hostTmp, { recursive: true });
  await writeFile(join(root, ".git", "HEAD"), "ref: refs/heads/main\n");
});
afterEach(() => rm(base, { recursive: true, force: true }));

async function host(): Promise<ContainedHost> {
  return containHost({
    sandbox: await testSandbox(),
    cwd: root,
    scratchDir,
    installPaths: [],
    endpoint: { upstream: "http://127.0.0.1:9", credentialHeaders: {} },
    timeoutMs: 30_000,
    commandShell: { readOnly: [], writable: [hostTmp] },
  });
}

/** Runs `script` the way the host would: its shell program, started inside the host's sandbox. */
function runInHost(
  contained: ContainedHost,
  script: string,
): Promise<{ stdout: string; stderr: string; code: number | null; signal: string | null }> {
  const line = contained.commandLine(
    ["/bin/sh", "-c", 'exec "$0" "$1"', contained.commandShell!, script],
    {},
  );
  const [program, ...args] = line.argv;
  const child = spawn(program!, args, {
    cwd: root,
    env: line.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  contained.track(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    child.on("close", (code, signal) => resolve({ stdout, stderr, code, signal }));
  });
}

describe("the command relay", () => {
  it("runs a host's command in a sandbox of its own: output, status and working directory as the shell reports them", async () => {
    const contained = await host();
    try {
      const ran = await runInHost(contained, "echo out; echo err >&2; pwd; exit 3");
      expect(ran).toMatchObject({ stdout: `out\n${root}\n`, stderr: "err\n", code: 3 });
      const killed = await runInHost(contained, "kill -KILL $$");
      expect(killed.code).toBe(137);
    } finally {
      await contained.close();
    }
  });

  it("keeps the host's process out of the command's reach, and the trial's .git and the host's files read-only", async () => {
    const contained = await host();
    try {
      const script = [
        // Every process the command can see, by its program.
        'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done > seen.txt',
        "echo planted > .git/HEAD 2>/dev/null && echo wrote-git > git.txt",
        `echo planted > ${join(scratchDir, "home-file")} 2>/dev/null`,
        `echo ok > ${join(hostTmp, "cwd-file")}`,
        "true",
      ].join("; ");
      const ran = await runInHost(contained, script);
      expect(ran.code, ran.stderr).toBe(0);
      const seen = await readFile(join(root, "seen.txt"), "utf8");
      // Only the sandbox's own processes: bubblewrap's, the shell's and the loop's, no forwarder
      // or other process of the host's sandbox.
      expect(seen).not.toContain("harnesslab");
      expect(seen).not.toMatch(/endpoint|forwarder|relay\.cjs/);
      await expect(readFile(join(root, "git.txt"), "utf8")).rejects.toThrow();
      // The host's files are not there at all (a path under them is the sandbox's own tmpfs).
      await expect(readFile(join(scratchDir, "home-file"), "utf8")).rejects.toThrow();
      expect(await readFile(join(root, ".git", "HEAD"), "utf8")).toBe("ref: refs/heads/main\n");
      expect(await readFile(join(hostTmp, "cwd-file"), "utf8")).toBe("ok\n");
    } finally {
      await contained.close();
    }
  });

  it("stops the command when the host gives up on it (kills the shell program)", async () => {
    const contained = await host();
    try {
      const mark = join(root, "still-running");
      const line = contained.commandLine(
        [
          "/bin/sh",
          "-c",
          '"$0" "$1" & sleep 1; kill -KILL $!; sleep 3; exit 0',
          contained.commandShell!,
          `sleep 2; touch ${mark}`,
        ],
        {},
      );
      const [program, ...args] = line.argv;
      const child = spawn(program!, args, { cwd: root, env: line.env, stdio: "ignore" });
      contained.track(child);
      await new Promise((resolve) => child.on("close", resolve));
      await expect(readFile(mark)).rejects.toThrow();
    } finally {
      await contained.close();
    }
  });

  it("refuses what is not a command: another path, a body that is not one, a script past the limit", async () => {
    const relay = await startCommandRelay({
      parentDir: base,
      maxScriptBytes: 100,
      run: async () => ({ stdout: "", stderr: "", exitCode: 0 }),
    });
    const post = (path: string, body: string, method = "POST") =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = http.request(
          {
            socketPath: relay.socketPath,
            path,
            method,
            headers: { "content-type": "application/json" },
          },
          (response) => {
            let text = "";
            response.on("data", (chunk) => {
              text += chunk;
            });
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
          },
        );
        request.on("error", reject);
        request.end(body);
      });
    try {
      expect((await post("/other", "{}")).status).toBe(404);
      expect((await post("/run", "", "GET")).status).toBe(404);
      const bad = await post("/run", '{"script": 1}');
      expect(bad).toMatchObject({ status: 400 });
      expect(bad.body).toContain("a script and a cwd are required");
      const long = await post("/run", JSON.stringify({ script: "x".repeat(200), cwd: "/" }));
      expect(long.status).toBe(400);
      expect(long.body).toContain("longer than 100 bytes");
      const fine = await post("/run", JSON.stringify({ script: "true", cwd: "/" }));
      expect(fine).toEqual({ status: 200, body: '{"stdout":"","stderr":"","exitCode":0}' });
      expect(relay.commands()).toBe(1);
    } finally {
      await relay.close();
    }
  });
});
