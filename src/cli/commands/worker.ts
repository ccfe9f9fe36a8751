import type { Command } from "commander";
import { type CliIO, EXIT, type SetExitCode, UsageError } from "../io.js";
import { positiveInt } from "../options.js";

interface WorkerOptions {
  queue: string;
  concurrency?: number;
  name?: string;
  unsafeNoSandbox?: boolean;
  lockMs?: number;
}

export function registerWorkerCommand(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("worker")
    .description(
      "run trial jobs from a queue that `compare run --queue` fills, until SIGINT or SIGTERM (docs/scale-out.md)",
    )
    .requiredOption("--queue <url>", "the run's Redis: redis://host:port[/db]")
    .option("--concurrency <n>", "trials run at once (default 1)", positiveInt("--concurrency", 64))
    .option("--name <id>", "how this worker names itself in logs (default: host name and pid)")
    .option(
      "--unsafe-no-sandbox",
      "also take runs started with --unsafe-no-sandbox, running their agents' code without an OS sandbox",
    )
    .option(
      "--lock-ms <ms>",
      "how long a trial stays with a worker that stopped answering before another takes it (default 30000)",
      positiveInt("--lock-ms", 3_600_000),
    )
    .action(async (options: WorkerOptions) => setExit(await runWorkerCommand(options, io)));
}

async function runWorkerCommand(options: WorkerOptions, io: CliIO): Promise<number> {
  // Loaded when a worker starts, not for `harness --help` or `--version`.
  const { parseQueueUrl, runWorker } = await import("../../compare/index.js");
  const parsed = parseQueueUrl(options.queue);
  if (!parsed.ok) throw new UsageError(`--queue: ${parsed.message}`);
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      io.stderr(
        "quitting now: the running trials' jobs go back to the queue once their lock expires\n",
      );
      process.exit(EXIT.fail);
    }
    io.stderr(
      `\n${signal === "SIGTERM" ? "terminated" : "interrupted"}: handing the running trials back to the queue (${signal === "SIGTERM" ? "send SIGTERM" : "Ctrl-C"} again to quit at once)\n`,
    );
    controller.abort(new Error(`stopped by ${signal}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    await runWorker({
      address: parsed.address,
      signal: controller.signal,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
      ...(options.lockMs === undefined ? {} : { lockMs: options.lockMs }),
      ...(io.env === undefined ? {} : { env: io.env }),
      log: (line) => io.stderr(`${line}\n`),
    });
    io.stderr("worker stopped\n");
    return EXIT.ok;
  } catch (error) {
    io.stderr(`error: ${(error as Error).message}\n`);
    return EXIT.fail;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
