import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "commander";
import {
  formatRegradeReport,
  loadHarnessCatalog,
  loadManifest,
  regradeRun,
  runExperiment,
  validateManifestForCli,
} from "../../compare/index.js";
import { createExecutor } from "../../exec/index.js";
import { renderTerminalSummary } from "../../report/index.js";
import { InvalidInputError, killRunningCommands } from "../../shared/index.js";
import { type CliIO, EXIT, jsonErrorDocument } from "../io.js";
import type { SetExitCode } from "../main.js";
import { positiveInt, wholeNumber } from "../options.js";
import { createProgressReporter } from "../progress.js";

interface RunOptions {
  out: string;
  trials?: number;
  json?: boolean;
  concurrency?: number;
  resume?: boolean;
  stopEarly?: boolean;
  retryInfra?: number;
}

export function registerCompareCommands(program: Command, io: CliIO, setExit: SetExitCode): void {
  const compare = program
    .command("compare")
    .description("run, validate and re-grade comparison experiments (harness-compare manifests)");

  compare
    .command("run")
    .description("run every trial of an experiment and decide the verdict")
    .argument("<manifest>", "a harness-compare.v1 or .v2 manifest (JSON)")
    .requiredOption("--out <dir>", "where artifacts go: empty or absent, outside every fixture")
    .option(
      "--trials <n>",
      "run fewer trials than the manifest asks (may only lower the count)",
      positiveInt("--trials", 100),
    )
    .option(
      "--concurrency <n>",
      "trials run at once (overrides the manifest)",
      positiveInt("--concurrency", 16),
    )
    .option(
      "--resume",
      "finish an interrupted run in --out: keep its finished trials and run the rest",
    )
    .option(
      "--retry-infra <n>",
      "run a trial again, up to n times, after an infrastructure error that may pass on retry (every attempt is kept)",
      wholeNumber("--retry-infra", 0, 10),
    )
    .option(
      "--stop-early",
      "stop starting trials once no outcome of the remaining ones can change the verdict's status",
    )
    .option("--json", "print the verdict document as JSON on stdout (progress stays on stderr)")
    .action(async (manifest: string, options: RunOptions) =>
      setExit(await runCompare(manifest, options, io)),
    );

  compare
    .command("validate")
    .description(
      "validate a manifest (and its harness, fixture, prompt and contract files) without running",
    )
    .argument("<manifest>", "a harness-compare.v1 or .v2 manifest (JSON)")
    .option("--trials <n>", "check a --trials override too", positiveInt("--trials", 100))
    .option("--out <dir>", "check an --out directory too")
    .option("--json", "print the result as JSON on stdout")
    .action(
      async (manifest: string, options: { trials?: number; out?: string; json?: boolean }) => {
        const result = await validateManifestForCli(resolve(io.cwd, manifest), {
          ...(options.trials === undefined ? {} : { trialsOverride: options.trials }),
          ...(options.out === undefined ? {} : { out: resolve(io.cwd, options.out) }),
          loadCatalog: loadHarnessCatalog,
        });
        if (options.json) io.stdout(`${JSON.stringify(result.json, null, 2)}\n`);
        else (result.ok ? io.stdout : io.stderr)(`${result.text.trimEnd()}\n`);
        setExit(result.exitCode);
      },
    );

  compare
    .command("regrade")
    .description(
      "re-run the graders on a finished run's recorded trials (no agent runs) and write a new verdict beside the old",
    )
    .argument("<out-dir>", "the --out directory of a finished run")
    .option("--manifest <file>", "read the manifest from here instead of where the run recorded it")
    .option(
      "--grader-contract <contract>",
      "grade with this contract instead of the manifest's: <file> (when one grader takes a contract), <grader-id>=<file> or <task>/<grader-id>=<file>; repeatable",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option(
      "--concurrency <n>",
      "trials graded at once (default: the run's concurrency)",
      positiveInt("--concurrency", 16),
    )
    .option("--json", "print the new verdict document as JSON on stdout (the summary on stderr)")
    .action(
      async (
        outDir: string,
        options: {
          manifest?: string;
          graderContract?: string[];
          concurrency?: number;
          json?: boolean;
        },
      ) => setExit(await runRegrade(outDir, options, io)),
    );
}

function exitForStatus(status: string): number {
  return status === "accept" || status === "need_more_work" ? EXIT.ok : EXIT.fail;
}

async function runCompare(manifestArg: string, options: RunOptions, io: CliIO): Promise<number> {
  const manifestPath = resolve(io.cwd, manifestArg);
  const loaded = await loadManifest(manifestPath, {
    ...(options.trials === undefined ? {} : { trialsOverride: options.trials }),
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok)
    throw new InvalidInputError(
      manifestArg,
      loaded.problems,
      `${loaded.problems.length} problem(s)`,
    );
  for (const warning of loaded.warnings)
    io.stderr(`warning: ${warning.path}: ${warning.message}\n`);
  // Ctrl-C (or a SIGTERM from a supervisor) stops the run cleanly: running agents are aborted,
  // their commands killed and their workspaces removed; finished trials stay for --resume.
  const stop = stopOnSignals(io, {
    stopping: "stopping the running trials",
    afterwards: "finish the run later with the same command and --resume",
    quitting:
      "quitting now: the running trials' temporary copies are left behind; --resume removes them and runs those trials again",
  });
  const outDirArg = resolve(io.cwd, options.out);
  if (options.resume && !existsSync(join(outDirArg, "manifest.json")))
    io.stderr(`--resume: no earlier run in ${outDirArg}; starting a new run there\n`);
  const progress = createProgressReporter(io);
  try {
    const { verdict, outDir } = await runExperiment(loaded.experiment, {
      outDir: outDirArg,
      manifestDocument: loaded.manifest,
      manifestHash: loaded.manifestHash,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.resume ? { resume: true } : {}),
      ...(options.stopEarly ? { stopEarly: true } : {}),
      ...(options.retryInfra === undefined ? {} : { retryInfra: options.retryInfra }),
      executorFor: (host) => createExecutor(host),
      onProgress: (p) => progress.update(p),
      signal: stop.signal,
    });
    progress.finish();
    if (options.json) io.stdout(`${JSON.stringify(verdict, null, 2)}\n`);
    else io.stdout(`${renderTerminalSummary(verdict, outDir)}\n`);
    return stop.signal.aborted ? stop.exitCode() : exitForStatus(verdict.status);
  } finally {
    progress.finish();
    stop.dispose();
  }
}

/**
 * `compare regrade`, stopped by Ctrl-C or SIGTERM like a run: the running graders are stopped,
 * their workspaces removed, and nothing is written (exit 130/143); a second signal quits at once,
 * killing the graders' commands, and the next regrade removes what was left.
 */
async function runRegrade(
  outDirArg: string,
  options: { manifest?: string; graderContract?: string[]; concurrency?: number; json?: boolean },
  io: CliIO,
): Promise<number> {
  const outDir = resolve(io.cwd, outDirArg);
  const stop = stopOnSignals(io, {
    stopping: "stopping the regrade",
    afterwards: "no new verdict is written",
    // Graders' commands run in process groups of their own, which the terminal's Ctrl-C does
    // not reach; the lock goes on exit, and the next regrade removes the workspaces.
    quitting: "quitting now: the next compare regrade removes what this one left",
  });
  let progressShown = false;
  try {
    const result = await regradeRun(outDir, {
      ...(options.manifest ? { manifestPath: resolve(io.cwd, options.manifest) } : {}),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      graderContracts: options.graderContract ?? [],
      cwd: io.cwd,
      signal: stop.signal,
      onProgress: (done, total) => {
        if (options.json || !io.isStderrTTY) return;
        progressShown = true;
        io.stderr(`\r\x1b[2Kre-grading ${done}/${total}`);
      },
    }).catch((error: unknown) => {
      if (!stop.signal.aborted) throw error;
      return undefined;
    });
    if (progressShown) io.stderr("\n");
    if (result === undefined) {
      const message = `the regrade was stopped before it finished: no new verdict was written; run compare regrade ${outDirArg} again to re-grade`;
      io.stderr(`${message}\n`);
      if (options.json) io.stdout(jsonErrorDocument(stop.exitCode(), message));
      return stop.exitCode();
    }
    const report = options.json ? io.stderr : io.stdout;
    report(`${formatRegradeReport(result).join("\n")}\n`);
    if (options.json) io.stdout(`${JSON.stringify(result.verdict, null, 2)}\n`);
    // A signal that came while the verdict was being written stopped nothing, but was asked for.
    return stop.signal.aborted ? stop.exitCode() : exitForStatus(result.verdict.status);
  } finally {
    stop.dispose();
  }
}

/**
 * The first Ctrl-C or SIGTERM aborts `signal` (the command stops cleanly, exit 130 / 143); a
 * second quits at once, killing the commands still running in their own process groups.
 */
function stopOnSignals(
  io: CliIO,
  text: { stopping: string; afterwards: string; quitting: string },
): { signal: AbortSignal; exitCode(): number; dispose(): void } {
  const controller = new AbortController();
  let exitCode: number = EXIT.interrupted;
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      killRunningCommands();
      io.stderr(`${text.quitting}\n`);
      process.exit(exitCode);
    }
    const term = signal === "SIGTERM";
    exitCode = term ? EXIT.terminated : EXIT.interrupted;
    io.stderr(
      `\n${term ? "terminated" : "interrupted"}: ${text.stopping} (${term ? "send SIGTERM again" : "Ctrl-C again"} to quit at once); ${text.afterwards}\n`,
    );
    controller.abort(new Error(`stopped by ${signal}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    exitCode: () => exitCode,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
