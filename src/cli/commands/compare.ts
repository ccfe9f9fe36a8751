import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { type Command, Option } from "commander";
import type {
  BudgetLimits,
  Experiment,
  ManifestDocument,
  QueueAddress,
  RunExperimentOptions,
  VerdictDocument,
} from "../../compare/index.js";
import { InvalidInputError, killRunningCommands, problemCount } from "../../shared/index.js";
import { type CliIO, EXIT, jsonErrorDocument, type SetExitCode, UsageError } from "../io.js";
import { positiveInt, positiveNumber, proportion, wholeNumber } from "../options.js";
import { createProgressReporter } from "../progress.js";

/**
 * What `compare` runs, loaded when one of its commands does: `harness --help` and `--version`
 * load none of it.
 */
async function stages() {
  const [compare, exec, report] = await Promise.all([
    import("../../compare/index.js"),
    import("../../exec/index.js"),
    import("../../report/index.js"),
  ]);
  return { ...compare, ...exec, ...report };
}

export interface RunOptions {
  out: string;
  trials?: number;
  json?: boolean;
  concurrency?: number;
  resume?: boolean;
  stopEarly?: boolean;
  retryInfra?: number;
  unsafeNoSandbox?: boolean;
  maxCostUsd?: number;
  maxTokens?: number;
  calibrate?: boolean;
  keepForgeRepos?: boolean;
  queue?: string;
}

interface PlanOptions {
  effect: number;
  power: number;
  passRate: number;
  from?: string[];
  json?: boolean;
}

/** `--max-cost-usd`: the run's USD budget (compare run, harness ci). */
export function maxCostOption(): Option {
  return new Option(
    "--max-cost-usd <usd>",
    "stop starting trials once the next one could take the USD the run's trials used past this",
  ).argParser(positiveNumber("--max-cost-usd", "a number of US dollars"));
}

/** `--max-tokens`: the run's token budget (compare run, harness ci). */
export function maxTokensOption(): Option {
  return new Option(
    "--max-tokens <n>",
    "stop starting trials once the next one could take the tokens the run's trials used past this",
  ).argParser(positiveInt("--max-tokens", Number.MAX_SAFE_INTEGER));
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
    .option(
      "--unsafe-no-sandbox",
      "run the agent's code (validation commands, graders, the host) without an OS sandbox: it gets your user, files and network, and the verdict says so first",
    )
    .addOption(maxCostOption())
    .addOption(maxTokensOption())
    .option(
      "--calibrate",
      "A/A run: compare the baseline with a copy of itself and report how often the policy claims a difference on this setup's noise",
    )
    .option(
      "--keep-forge-repos",
      'live mode (forge kind "gitea"): keep each trial\'s throwaway repository instead of deleting it',
    )
    .option(
      "--queue <url>",
      "run the trials on `harness worker` processes that take them from this Redis (redis://host:port[/db]) instead of here; see docs/scale-out.md",
    )
    .option("--json", "print the verdict document as JSON on stdout (progress stays on stderr)")
    .action(async (manifest: string, options: RunOptions) =>
      setExit(await runCompare(manifest, options, io)),
    );

  compare
    .command("plan")
    .description(
      "before running: the trials per variant and task needed to detect an effect, their expected cost, and what the planned count can detect",
    )
    .argument("<manifest>", "a harness-compare.v1 or .v2 manifest (JSON)")
    .option(
      "--effect <d>",
      "the pass-rate difference to detect, candidate minus baseline (default 0.2)",
      positiveNumber("--effect", "a pass-rate difference", 1),
      0.2,
    )
    .option(
      "--power <p>",
      "the wanted chance of accepting a candidate that much better (default 0.8)",
      proportion("--power", "0"),
      0.8,
    )
    .option(
      "--pass-rate <p>",
      "the baseline's pass rate on every task (default 0.5)",
      proportion("--pass-rate", "0 (inclusive)"),
      0.5,
    )
    .option(
      "--from <out-dir>",
      "an earlier run whose cost per trial prices the plan; repeatable",
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .option("--json", "print the plan as JSON on stdout")
    .action(async (manifest: string, options: PlanOptions) =>
      setExit(await runPlan(manifest, options, io)),
    );

  compare
    .command("validate")
    .description(
      "validate a manifest (and its harness, fixture, prompt and contract files) without running",
    )
    .argument("<manifest>", "a harness-compare.v1 or .v2 manifest (JSON)")
    .option("--trials <n>", "check a --trials override too", positiveInt("--trials", 100))
    .option("--out <dir>", "check an --out directory too")
    .option(
      "--unsafe-no-sandbox",
      "check as `compare run --unsafe-no-sandbox` would (no OS sandbox needed)",
    )
    .option("--json", "print the result as JSON on stdout")
    .action(
      async (
        manifest: string,
        options: { trials?: number; out?: string; unsafeNoSandbox?: boolean; json?: boolean },
      ) => {
        const { validateManifestForCli, loadHarnessCatalog, preflight } = await stages();
        const result = await validateManifestForCli(resolve(io.cwd, manifest), {
          ...(options.trials === undefined ? {} : { trialsOverride: options.trials }),
          ...(options.out === undefined ? {} : { out: resolve(io.cwd, options.out) }),
          loadCatalog: loadHarnessCatalog,
          // The checks `compare run` makes before its first trial, each reported.
          beforeTrials: async (experiment) =>
            (
              await preflight(
                experiment,
                {
                  checkHost: true,
                  env: io.env ?? process.env,
                  ...(options.unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
                },
                false,
              )
            ).failures.flatMap((failure) => failure.problems),
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
    .option(
      "--unsafe-no-sandbox",
      "run the graders' commands without an OS sandbox (the new verdict says so first)",
    )
    .option("--json", "print the new verdict document as JSON on stdout (the summary on stderr)")
    .action(async (outDir: string, options: RegradeCommandOptions) =>
      setExit(await runRegrade(outDir, options, io)),
    );
}

function budgetOf(options: RunOptions): BudgetLimits | undefined {
  if (options.maxCostUsd === undefined && options.maxTokens === undefined) return undefined;
  return {
    ...(options.maxCostUsd === undefined ? {} : { maxCostUsd: options.maxCostUsd }),
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
  };
}

/** A budget the host gave nothing to count against could not have stopped the run. */
function unusedBudgets(options: RunOptions, verdict: VerdictDocument): string[] {
  const warnings: string[] = [];
  if (options.maxCostUsd !== undefined && verdict.trials.every((t) => t.costUsd === null))
    warnings.push(
      `no trial reported a USD cost, so --max-cost-usd ${options.maxCostUsd} could not limit this run`,
    );
  if (options.maxTokens !== undefined && verdict.trials.every((t) => t.tokens === null))
    warnings.push(
      `no trial reported tokens, so --max-tokens ${options.maxTokens} could not limit this run`,
    );
  return warnings;
}

function exitForStatus(status: string): number {
  return status === "accept" || status === "need_more_work" ? EXIT.ok : EXIT.fail;
}

async function runPlan(manifestArg: string, options: PlanOptions, io: CliIO): Promise<number> {
  const { pastCostPerTrial, planExperiment, formatPlan } = await stages();
  if (options.effect + options.passRate > 1)
    throw new UsageError(
      `--effect ${options.effect} with --pass-rate ${options.passRate}: the candidate's pass rate would be above 1; lower one of them`,
    );
  const loaded = await loadForCommand(manifestArg, io);
  const costPerTrial = await pastCostPerTrial((options.from ?? []).map((d) => resolve(io.cwd, d)));
  const plan = planExperiment(loaded.experiment, {
    effect: options.effect,
    power: options.power,
    passRate: options.passRate,
    costPerTrial,
  });
  if (options.json) io.stdout(`${JSON.stringify(plan, null, 2)}\n`);
  else io.stdout(`${formatPlan(plan, manifestArg, options.from?.length ?? 0).join("\n")}\n`);
  return EXIT.ok;
}

/** The manifest as `run` and `plan` load it; its problems are the command's input error. */
async function loadForCommand(manifestArg: string, io: CliIO, trialsOverride?: number) {
  const { loadManifest, loadHarnessCatalog } = await stages();
  const loaded = await loadManifest(resolve(io.cwd, manifestArg), {
    ...(trialsOverride === undefined ? {} : { trialsOverride }),
    loadCatalog: loadHarnessCatalog,
  });
  if (!loaded.ok)
    throw new InvalidInputError(manifestArg, loaded.problems, problemCount(loaded.problems.length));
  return loaded;
}

/** `--queue`: the address, checked, and Redis reached, before anything is written. */
async function queueOf(options: RunOptions): Promise<QueueAddress | undefined> {
  const { parseQueueUrl, probeQueue } = await stages();
  if (options.queue === undefined) return undefined;
  const parsed = parseQueueUrl(options.queue);
  if (!parsed.ok) throw new UsageError(`--queue: ${parsed.message}`);
  const unreachable = await probeQueue(parsed.address);
  if (unreachable !== undefined)
    throw new InvalidInputError(
      "--queue",
      [{ path: "--queue", message: unreachable }],
      unreachable,
    );
  return parsed.address;
}

async function runCompare(manifestArg: string, options: RunOptions, io: CliIO): Promise<number> {
  const { calibrationExperiment } = await stages();
  const queue = await queueOf(options);
  const loaded = await loadForCommand(manifestArg, io, options.trials);
  for (const warning of loaded.warnings)
    io.stderr(`warning: ${warning.path}: ${warning.message}\n`);
  const experiment = options.calibrate
    ? calibrationExperiment(loaded.experiment)
    : loaded.experiment;
  const ran = await runLoadedExperiment(experiment, loaded, options, io, queue);
  if (ran.interrupted !== undefined) return ran.interrupted;
  // An A/A run measured the noise whatever it decided; only a broken run fails it.
  if (options.calibrate) return ran.verdict.status === "infrastructure_error" ? EXIT.fail : EXIT.ok;
  return exitForStatus(ran.verdict.status);
}

/**
 * Runs a loaded experiment as `compare run` does (and `harness ci` after it): stopped cleanly by
 * Ctrl-C or SIGTERM, progress on stderr, the verdict printed. Returns the verdict, and the exit
 * code of an interruption.
 */
export async function runLoadedExperiment(
  experiment: Experiment,
  loaded: { manifest: ManifestDocument; manifestHash: string },
  options: Omit<RunOptions, "calibrate" | "trials" | "queue">,
  io: CliIO,
  queue?: QueueAddress,
  more: Pick<RunExperimentOptions, "trialCache"> = {},
): Promise<{ verdict: VerdictDocument; outDir: string; interrupted?: number }> {
  const { runExperiment, queueTrials, createExecutor, renderTerminalSummary } = await stages();
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
    const { verdict, outDir } = await runExperiment(experiment, {
      outDir: outDirArg,
      manifestDocument: loaded.manifest,
      manifestHash: loaded.manifestHash,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.resume ? { resume: true } : {}),
      ...(options.stopEarly ? { stopEarly: true } : {}),
      ...(options.retryInfra === undefined ? {} : { retryInfra: options.retryInfra }),
      ...(options.unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
      ...(options.keepForgeRepos ? { keepForgeRepos: true } : {}),
      ...(io.env === undefined ? {} : { env: io.env }),
      ...(budgetOf(options) === undefined ? {} : { budget: budgetOf(options) }),
      // The real host must be able to start where the trials run before any does (exit 2
      // otherwise): here, or on each worker, which checks its own environment.
      checkHost: queue === undefined,
      ...(queue === undefined
        ? {}
        : { trialPlace: queueTrials({ address: queue, log: (line) => io.stderr(`${line}\n`) }) }),
      env: io.env ?? process.env,
      executorFor: (host) => createExecutor(host),
      onProgress: (p) => progress.update(p),
      onNotice: (line) => io.stderr(`${line}\n`),
      signal: stop.signal,
      ...more,
    });
    progress.finish();
    for (const warning of unusedBudgets(options, verdict)) io.stderr(`warning: ${warning}\n`);
    if (options.json) io.stdout(`${JSON.stringify(verdict, null, 2)}\n`);
    else io.stdout(`${renderTerminalSummary(verdict, outDir)}\n`);
    return {
      verdict,
      outDir,
      ...(stop.signal.aborted ? { interrupted: stop.exitCode() } : {}),
    };
  } finally {
    progress.finish();
    stop.dispose();
  }
}

/** What `compare regrade` reads from its command line. */
interface RegradeCommandOptions {
  manifest?: string;
  graderContract?: string[];
  concurrency?: number;
  unsafeNoSandbox?: boolean;
  json?: boolean;
}

/**
 * `compare regrade`, stopped by Ctrl-C or SIGTERM like a run: the running graders are stopped,
 * their workspaces removed, and nothing is written (exit 130/143); a second signal quits at once,
 * killing the graders' commands, and the next regrade removes what was left.
 */
async function runRegrade(
  outDirArg: string,
  options: RegradeCommandOptions,
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
  const { regradeRun, formatRegradeReport } = await stages();
  try {
    const result = await regradeRun(outDir, {
      ...(options.manifest ? { manifestPath: resolve(io.cwd, options.manifest) } : {}),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
      graderContracts: options.graderContract ?? [],
      cwd: io.cwd,
      signal: stop.signal,
      onProgress: (done, total) => {
        if (options.json) return;
        // Redrawn in place on a terminal; a line each otherwise, as a run's progress (logs and
        // CI keep every step of a regrade that takes minutes).
        if (io.isStderrTTY) {
          progressShown = true;
          io.stderr(`\r\x1b[2Kre-grading ${done}/${total}`);
        } else io.stderr(`re-grading ${done}/${total}\n`);
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
