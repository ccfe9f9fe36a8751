// Shell commands of a contained host run beside the host, not inside its sandbox. A host such as
// Claude Code runs the agent's approved commands itself; in the host's own sandbox, the agent's
// code (an allowed `npm test`) would share the host's user and process namespace and could take
// over the host process: read its pipes, write the SDK a result of its choosing, or kill it.
// So the host is given a shell program that hands each command to the harness over a Unix
// socket, and the harness runs it in a fresh sandbox of its own, which sees no process of the
// host's. Nesting a sandbox inside the host's would not do: a nested sandbox cannot mount a
// fresh /proc under bubblewrap's (the kernel refuses while the outer /proc has covered parts),
// and with the outer one it would still see the host's process.
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import { shellQuote } from "../shared/index.js";

/** Where the relay's socket appears inside the host's sandbox. */
export const SANDBOX_COMMAND_SOCKET = "/run/harnesslab/commands.sock";

/** A command as the host asked for it: a script for `bash -c`, from the host's directory. */
export interface RelayedCommand {
  script: string;
  cwd: string;
}

export interface RelayedResult {
  stdout: string;
  stderr: string;
  /** As a shell reports it: 128 + the signal for a command killed by one. */
  exitCode: number;
}

export interface CommandRelayOptions {
  /** A harness-owned directory no sandbox sees, for the socket and the shell program. */
  parentDir: string;
  /** Runs one command; `signal` aborts when the host stops waiting for it. */
  run(command: RelayedCommand, signal: AbortSignal): Promise<RelayedResult>;
  /** The largest script accepted (default 1 MiB). */
  maxScriptBytes?: number;
  /** Commands running at once; more wait (default 4). */
  concurrency?: number;
}

export interface CommandRelay {
  /** The socket on the host (bind it to SANDBOX_COMMAND_SOCKET). */
  socketPath: string;
  /** The directory holding the shell program: bind it read-only at the same path. */
  shellDir: string;
  /** The program the host runs each command through, its one argument being the script. */
  shellProgram: string;
  /** Commands relayed so far. */
  commands(): number;
  close(): Promise<void>;
}

/**
 * The program inside: sends the script and its working directory, writes the command's output
 * and exits with its status. 126, as a shell does for a command it cannot run, when the relay
 * cannot be reached or refuses.
 */
const RELAY_CLIENT_SOURCE = `"use strict";
const http = require("node:http");
const [socketPath, script] = process.argv.slice(2);
const fail = (text) => { process.stderr.write("harnesslab: " + text + "\\n", () => process.exit(126)); };
const body = JSON.stringify({ script: script ?? "", cwd: process.cwd() });
const request = http.request(
  { socketPath, path: "/run", method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
  (response) => {
    const chunks = [];
    response.on("data", (chunk) => chunks.push(chunk));
    response.on("end", () => {
      let answer;
      try { answer = JSON.parse(Buffer.concat(chunks).toString("utf8")); } catch { return fail("the command relay answered nothing readable"); }
      if (response.statusCode !== 200) return fail(String(answer.error));
      process.stdout.write(answer.stdout, () => process.stderr.write(answer.stderr, () => process.exit(answer.exitCode)));
    });
  },
);
request.on("error", (error) => fail("cannot reach the command relay: " + error.message));
request.end(body);
`;

/** Starts the relay: a server on a fresh Unix socket, and the shell program that talks to it. */
export async function startCommandRelay(options: CommandRelayOptions): Promise<CommandRelay> {
  const maxScriptBytes = options.maxScriptBytes ?? 1024 * 1024;
  const concurrency = options.concurrency ?? 4;
  const socketDir = await mkdtemp(join(options.parentDir, "commands-"));
  await chmod(socketDir, 0o700);
  const socketPath = join(socketDir, `${randomBytes(4).toString("hex")}.sock`);
  const shellDir = await mkdtemp(join(options.parentDir, "command-shell-"));
  const shellProgram = join(shellDir, "shell");
  await writeFile(join(shellDir, "relay.cjs"), RELAY_CLIENT_SOURCE, { mode: 0o444 });
  await writeFile(
    shellProgram,
    `#!/bin/sh\nexec ${[process.execPath, join(shellDir, "relay.cjs"), SANDBOX_COMMAND_SOCKET].map(shellQuote).join(" ")} "$1"\n`,
    { mode: 0o555 },
  );

  let relayed = 0;
  let running = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    if (running >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
  };
  const release = () => {
    running -= 1;
    waiting.shift()?.();
  };
  const controllers = new Set<AbortController>();

  const answer = (response: http.ServerResponse, status: number, body: object) => {
    if (response.destroyed) return;
    const text = JSON.stringify(body);
    response.writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
    });
    response.end(text);
  };

  const server = http.createServer((request, response) => {
    if (request.method !== "POST" || request.url !== "/run") {
      answer(response, 404, { error: "the command relay serves POST /run only" });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxScriptBytes + 64 * 1024) {
        refused = true;
        answer(response, 413, { error: `a command longer than ${maxScriptBytes} bytes` });
        request.destroy();
      } else chunks.push(chunk);
    });
    request.on("end", async () => {
      if (refused) return;
      let command: RelayedCommand;
      try {
        const parsed = JSON.parse(
          Buffer.concat(chunks).toString("utf8"),
        ) as Partial<RelayedCommand>;
        if (typeof parsed.script !== "string" || typeof parsed.cwd !== "string")
          throw new Error("a script and a cwd are required");
        if (Buffer.byteLength(parsed.script) > maxScriptBytes)
          throw new Error(`a command longer than ${maxScriptBytes} bytes`);
        command = { script: parsed.script, cwd: parsed.cwd };
      } catch (error) {
        answer(response, 400, { error: error instanceof Error ? error.message : String(error) });
        return;
      }
      const controller = new AbortController();
      controllers.add(controller);
      // The host gave up on the command (its own timeout killed the shell program): stop it.
      response.on("close", () => {
        if (!response.writableEnded) controller.abort();
      });
      await slot();
      try {
        relayed += 1;
        if (controller.signal.aborted) return;
        answer(response, 200, await options.run(command, controller.signal));
      } catch (error) {
        answer(response, 500, { error: error instanceof Error ? error.message : String(error) });
      } finally {
        controllers.delete(controller);
        release();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });

  return {
    socketPath,
    shellDir,
    shellProgram,
    commands: () => relayed,
    close: async () => {
      for (const controller of controllers) controller.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(socketDir, { recursive: true, force: true });
      await rm(shellDir, { recursive: true, force: true });
    },
  };
}
