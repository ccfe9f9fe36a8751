// Every check a run makes before its first trial, in one place: `compare run` stops on the
// first that fails, and `compare validate` reports them all, so "valid" means "will start".
import { resolve } from "node:path";
import { checkAgentModule, type HostId, hostReadiness } from "../../exec/index.js";
import type { CommandSandbox } from "../../sandbox/index.js";
import type { InputProblem } from "../../shared/index.js";
import { ExperimentInputError } from "../errors.js";
import { type Experiment, hostsOf, runtimeOf } from "../experiment.js";
import { checkOutDir, missingGraderPrograms, programFound } from "../manifest/index.js";
import { type PreparedGrader, prepareGraders } from "../trial/graders.js";
import { type AssembledVariant, assembleExperiment } from "./assemble.js";
import { type ChosenSandbox, chooseSandbox } from "./containment.js";

export interface PreflightOptions {
  /** Where the run would write; checked when given. */
  outDir?: string;
  /** `--resume`: the output directory may hold the run being continued. */
  resume?: boolean;
  unsafeNoSandbox?: boolean;
  sandbox?: CommandSandbox;
  /**
   * Check that this machine can run the trials: the runtime host can start (SDK installed,
   * credentials, endpoint) and every grader's program is installed. The CLI does; a library
   * caller that passes its own executor decides for itself.
   */
  checkHost?: boolean;
  /**
   * With checkHost: leave the hosts' readiness to the caller (a queue worker checks the host of
   * each trial it takes, so the trial it hands back names the host it cannot start).
   */
  hostsCheckedByCaller?: boolean;
  /** Where the host's credentials are read from (default: the process's environment). */
  env?: NodeJS.ProcessEnv;
}

export interface Prepared {
  harnessHash: string;
  /** Absolute paths of the components' sources, files or folders. */
  sourcePaths: string[];
  variants: Map<string, AssembledVariant>;
  graders: Map<string, PreparedGrader[]>;
  containment: ChosenSandbox;
}

/** One group of problems a run would stop on, with its headline. */
export interface PreflightFailure {
  headline: string;
  problems: InputProblem[];
}

/**
 * Runs every pre-trial check. `stopAtFirst` (the run) returns as soon as one group fails;
 * otherwise (validate) every group is checked and all failures are returned.
 */
export async function preflight(
  experiment: Experiment,
  options: PreflightOptions,
  stopAtFirst: boolean,
): Promise<{ prepared?: Prepared; failures: PreflightFailure[] }> {
  const failures: PreflightFailure[] = [];
  const failed = (headline: string, problems: InputProblem[]) => {
    if (problems.length > 0) failures.push({ headline, problems });
    return stopAtFirst && failures.length > 0;
  };
  const outDir = options.outDir === undefined ? undefined : resolve(options.outDir);

  if (outDir !== undefined) {
    const problems = await checkOutDir(outDir, experiment, {
      allowNonEmpty: options.resume === true,
    });
    if (failed("cannot write the run here", problems)) return { failures };
  }
  const assembled = await assembleExperiment(experiment);
  if (failed("cannot assemble the variants", assembled.ok ? [] : assembled.problems))
    return { failures };

  const graders = new Map<string, PreparedGrader[]>();
  const graderProblems: InputProblem[] = [];
  for (const task of experiment.tasks) {
    try {
      graders.set(task.id, await prepareGraders(task));
    } catch (error) {
      graderProblems.push({
        path: `${task.manifestField}.graders`,
        message: (error as Error).message,
      });
    }
  }
  if (failed("cannot prepare the graders", graderProblems)) return { failures };

  // A scripted agent module is loaded now, in a thread as every trial loads it: one that does not
  // load fails here, before any trial, rather than as a trial's infrastructure error each time.
  const agentProblems: InputProblem[] = [];
  for (const variant of experiment.variants) {
    if (variant.agent?.kind !== "module") continue;
    const imported = await checkAgentModule(variant.agent.modulePath);
    if (!imported.ok)
      agentProblems.push({ path: `${variant.manifestField}.agent`, message: imported.error });
  }
  if (failed("cannot load the agents", agentProblems)) return { failures };

  let containment: ChosenSandbox | undefined;
  try {
    containment = await chooseSandbox(experiment, {
      ...(options.unsafeNoSandbox ? { unsafeNoSandbox: true } : {}),
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      hidden: [
        ...(outDir === undefined ? [] : [outDir]),
        ...experiment.tasks.map((task) => task.fixtureDir),
        experiment.manifestDir,
      ],
      manifestPath: experiment.manifestPath,
    });
  } catch (error) {
    if (!(error instanceof ExperimentInputError)) throw error;
    if (failed(error.headline, error.problems)) return { failures };
  }

  if (
    options.checkHost &&
    failed(
      "grader programs are not installed here",
      await missingGraderPrograms(experiment, options.env ?? process.env),
    )
  )
    return { failures };

  if (options.checkHost && !options.hostsCheckedByCaller) {
    const unready = await unreadyHosts(experiment, options.env ?? process.env);
    if (
      unready.length > 0 &&
      failed(
        `the ${unready.map((u) => u.host).join(" and ")} host${unready.length > 1 ? "s" : ""} cannot start here`,
        unready.flatMap((u) => u.problems),
      )
    )
      return { failures };
  }

  if (options.checkHost && assembled.ok) {
    const problems = await forgeReadiness(
      experiment,
      assembled.variants,
      options.env ?? process.env,
      options.unsafeNoSandbox === true,
    );
    if (failed("forge tasks cannot run here", problems)) return { failures };
  }

  if (failures.length > 0 || !assembled.ok || containment === undefined) return { failures };
  return {
    prepared: {
      harnessHash: assembled.harnessHash,
      sourcePaths: assembled.sourcePaths,
      variants: assembled.variants,
      graders,
      containment,
    },
    failures,
  };
}

/** The run's way: the first failure becomes the run's input error (exit 2, nothing written). */
export async function prepareOrThrow(
  experiment: Experiment,
  options: PreflightOptions,
): Promise<Prepared> {
  const { prepared, failures } = await preflight(experiment, options, true);
  const first = failures[0];
  if (first !== undefined)
    throw new ExperimentInputError(experiment.manifestPath, first.problems, first.headline);
  if (prepared === undefined) throw new Error("preflight: nothing prepared and nothing failed");
  return prepared;
}

/**
 * What forge tasks need before a trial: live mode's token in its variable, and for a variant
 * that reaches the forge with commands, each named program installed (every trial would
 * otherwise fail at its first command, after its agent was paid for).
 */
async function forgeReadiness(
  experiment: Experiment,
  variants: ReadonlyMap<string, AssembledVariant>,
  env: NodeJS.ProcessEnv,
  unsafeNoSandbox: boolean,
): Promise<InputProblem[]> {
  const forge = experiment.forge;
  if (forge === undefined) return [];
  const problems: InputProblem[] = [];
  if (forge.kind === "gitea" && (env[forge.tokenEnv] ?? "") === "")
    problems.push({
      path: "forge.tokenEnv",
      message: `live mode reads the token from ${forge.tokenEnv}, which is not set: set it to a token of ${forge.user} on ${forge.url}`,
    });
  if ([...variants.values()].some((variant) => variant.forgeArm.access === "cli"))
    for (const program of forge.commands)
      if (!(await programFound(program, env)))
        problems.push({
          path: "forge.commands",
          message: `${program} is not on PATH: a variant whose composition sets forge.access = "cli" could not run it; install it or remove it from forge.commands`,
        });
  for (const variant of experiment.variants) {
    const program = variants.get(variant.id)?.forgeProgram;
    const host = runtimeOf(experiment, variant).host;
    if (program !== undefined && unsafeNoSandbox && host !== "scripted")
      problems.push({
        path: variant.compositionField,
        message: `the forge tool of composition "${variant.composition}" is a program, which ${host} runs by its name only in the sandbox (without it, its shell starts from the system's own PATH); run without --unsafe-no-sandbox, or give the variant an MCP arm`,
      });
    const command = program?.contract.cli.command;
    // A program of the component's own source (${source}/…) is checked when it is materialized.
    if (command === undefined || command.includes("${") || (await programFound(command, env)))
      continue;
    problems.push({
      path: variant.compositionField,
      message: `${command} is not on PATH: the forge tool of composition "${variant.composition}" (its cli command) could not run; install it or change the component's cli command`,
    });
  }
  return problems;
}

/**
 * Each host of the experiment that cannot start here, with its problems named after the variants
 * that run on it (`runtime.host` when they all use the experiment's runtime).
 */
export async function unreadyHosts(
  experiment: Experiment,
  env: NodeJS.ProcessEnv,
): Promise<Array<{ host: HostId; problems: InputProblem[] }>> {
  const unready: Array<{ host: HostId; problems: InputProblem[] }> = [];
  for (const host of hostsOf(experiment)) {
    const found = await hostReadiness(host, env);
    if (found.length === 0) continue;
    const own = experiment.variants.filter(
      (v) => v.runtime !== undefined && runtimeOf(experiment, v).host === host,
    );
    const where =
      own.length === 0 || experiment.runtime.host === host
        ? "runtime.host"
        : own.map((v) => `${v.manifestField}.host`).join(", ");
    const variants = experiment.variants
      .filter((v) => runtimeOf(experiment, v).host === host)
      .map((v) => v.id);
    unready.push({
      host,
      problems: found.map((p) => ({
        path: `${where} (${p.what})`,
        message: `${p.message} (needed by ${variants.length === 1 ? "variant" : "variants"} ${variants.join(", ")})`,
      })),
    });
  }
  return unready;
}
