import { resolve } from "node:path";
import type { Command } from "commander";
import {
  loadHarnessCatalog,
  loadManifest,
  regradeRun,
  runExperiment,
  validateManifestForCli,
} from "../../compare/index.js";
import { createExecutor } from "../../exec/index.js";
import { renderTerminalSummary } from "../../report/index.js";
import { InvalidInputError } from "../../shared/index.js";
import { type CliIO, EXIT, UsageError } from "../io.js";
import type { SetExitCode } from "../main.js";
import { createProgressReporter } from "../progress.js";

interface RunOptions {
  out: string;
  trials?: number;
  json?: boolean;
  concurrency?: number;
  resume?: boolean;
  stopEarly?: boolean;
}

function positiveInt(name: string, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isInteger(n) || n < 1 || n > max)
      throw new UsageError(
        `${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`,
      );
    return n;
  };
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
    .option("--json", "print the new verdict document as JSON on stdout")
    .action(async (outDir: string, options: { manifest?: string; json?: boolean }) => {
      const result = await regradeRun(resolve(io.cwd, outDir), {
        ...(options.manifest ? { manifestPath: resolve(io.cwd, options.manifest) } : {}),
        onProgress: (done, total) => {
          if (!options.json && io.isStderrTTY) io.stderr(`\r\x1b[2Kre-grading ${done}/${total}`);
        },
      });
      if (!options.json && io.isStderrTTY) io.stderr("\n");
      const report = options.json ? io.stderr : io.stdout;
      for (const note of result.notes) report(`note: ${note}\n`);
      report(`previous verdict: ${result.previous.status} — ${result.previous.reason}\n`);
      report(
        `new verdict (${result.stem}.json): ${result.verdict.status} — ${result.verdict.reason}\n`,
      );
      if (result.changes.length === 0) report("no trial changed outcome or score\n");
      for (const change of result.changes) {
        report(
          `  ${change.artifactDir}: ${change.before.outcome} (${change.before.score ?? "—"}) → ${change.after.outcome} (${change.after.score ?? "—"})\n`,
        );
      }
      if (options.json) io.stdout(`${JSON.stringify(result.verdict, null, 2)}\n`);
      setExit(exitForStatus(result.verdict.status));
    });
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
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130);
    io.stderr(
      "\ninterrupted: stopping the running trials (Ctrl-C again to quit at once); resume with --resume\n",
    );
    controller.abort(new Error("interrupted by the user"));
  };
  process.on("SIGINT", onSigint);
  const progress = createProgressReporter(io);
  try {
    const { verdict, outDir } = await runExperiment(loaded.experiment, {
      outDir: resolve(io.cwd, options.out),
      manifestDocument: loaded.manifest,
      manifestHash: loaded.manifestHash,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.resume ? { resume: true } : {}),
      ...(options.stopEarly ? { stopEarly: true } : {}),
      executorFor: (host) => createExecutor(host),
      onProgress: (p) => progress.update(p),
      signal: controller.signal,
    });
    progress.finish();
    if (options.json) io.stdout(`${JSON.stringify(verdict, null, 2)}\n`);
    else io.stdout(`${renderTerminalSummary(verdict, outDir)}\n`);
    return exitForStatus(verdict.status);
  } finally {
    progress.finish();
    process.off("SIGINT", onSigint);
  }
}
