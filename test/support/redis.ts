// A real redis-server for the queue's tests and bench: Debian's binary, on a free loopback port,
// in a temporary directory, with nothing saved to disk; one per test file, killed after.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

export interface RedisServer {
  url: string;
  port: number;
  /** Kills the server at once (SIGKILL), as a crashed or unreachable Redis. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved). */
  restart(): Promise<void>;
  stop(): Promise<void>;
  /** Whether the server is up (not killed or stopped since it last started). */
  running(): boolean;
}

/** The redis-server binary, or undefined when it is not installed. */
export function findRedisServer(): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/usr/sbin"];
  return dirs.map((dir) => join(dir, "redis-server")).find((path) => existsSync(path));
}

/** Why the queue's tests cannot run here, or undefined when they can. */
export function redisSkipReason(): string | undefined {
  return findRedisServer() === undefined
    ? "redis-server is not installed (apt-get install redis-server): the queue tests are skipped"
    : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

function launch(binary: string, port: number, dir: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      binary,
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) {
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.resume();
    child.once("exit", (code) => reject(new Error(`redis-server exited ${code}: ${output}`)));
  });
}

export async function startRedis(): Promise<RedisServer> {
  const binary = findRedisServer();
  if (binary === undefined) throw new Error("redis-server is not installed");
  const dir = await mkdtemp(join(tmpdir(), "hl-redis-"));
  const port = await freePort();
  let child = await launch(binary, port, dir);
  const exited = (process: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (process.exitCode !== null || process.signalCode !== null) resolve();
      else process.once("exit", () => resolve());
    });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async kill() {
      child.kill("SIGKILL");
      await exited(child);
    },
    async restart() {
      child = await launch(binary, port, dir);
    },
    running: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      child.kill("SIGKILL");
      await exited(child);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
