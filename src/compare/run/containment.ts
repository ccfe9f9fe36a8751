// Choosing how a run (or a regrade) contains the trials' code: bubblewrap when it can start here;
// otherwise the run is refused, unless nothing in it runs the trial's code or the user asked for
// --unsafe-no-sandbox, and then the verdict says so in its first line.
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { QODER_NOT_CONTAINABLE } from "../../exec/index.js";
import {
  type CommandSandbox,
  createBwrapSandbox,
  createUnsandboxed,
  detectSandbox,
} from "../../sandbox/index.js";
import { ExperimentInputError } from "../errors.js";
import { defaultStateDir } from "../evidence/record-seal.js";
import { type Experiment, hostsOf, runtimeOf } from "../experiment.js";

/** The installed harnesslab package (`dist/` and the sources beside it): no command may read it. */
const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/** How a run's trials were contained, as verdict.json and manifest.json record it. */
interface ContainmentRecord {
  kind: "bwrap" | "none";
  /** `bubblewrap 0.8.0`, or why there is no sandbox. */
  description: string;
  /** True when the user turned containment off with --unsafe-no-sandbox. */
  unsafe: boolean;
}

/** What in an experiment runs code the trial wrote (each one a reason a sandbox is needed). */
function trialCodeRunners(experiment: Experiment): string[] {
  const reasons: string[] = [];
  if (experiment.runtime.validationCommands.length > 0)
    reasons.push(
      `validation commands (${experiment.runtime.validationCommands.map((c) => c.join(" ")).join(", ")}) run the trial's code`,
    );
  // Pi answers without tools; the others run the agent's approved commands in their own process.
  for (const host of hostsOf(experiment))
    if (host !== "scripted" && host !== "pi")
      reasons.push(`the ${host} host runs the agent's approved commands itself`);
  for (const task of experiment.tasks)
    for (const grader of task.graders)
      if (grader.kind !== "scope")
        reasons.push(`grader ${grader.id} of task ${task.id} runs the trial's code`);
  return reasons;
}

export interface ChooseSandboxOptions {
  /** Run without containment even where it could start (--unsafe-no-sandbox). */
  unsafeNoSandbox?: boolean;
  /** A sandbox the caller built (library users, tests at the seam). */
  sandbox?: CommandSandbox;
  /** Paths no command may see even inside the directories the sandbox mirrors. */
  hidden: readonly string[];
  /** The file the refusal names. */
  manifestPath: string;
}

export interface ChosenSandbox {
  sandbox: CommandSandbox;
  record: ContainmentRecord;
}

/**
 * Paths every run hides from its commands besides its own --out and fixtures: the harness's own
 * install, the user's home, the run keys (wherever $HARNESSLAB_STATE_DIR puts them), and npm's
 * global configuration beside the Node.js running the harness (it may hold registry tokens).
 */
export function alwaysHidden(): string[] {
  return [
    PACKAGE_ROOT,
    homedir(),
    defaultStateDir(),
    join(dirname(dirname(process.execPath)), "etc", "npmrc"),
  ];
}

/**
 * The sandbox a run's commands use. Throws ExperimentInputError (nothing written) when none can
 * start and the experiment runs the trial's code, saying what to install or change.
 */
export async function chooseSandbox(
  experiment: Experiment,
  options: ChooseSandboxOptions,
): Promise<ChosenSandbox> {
  const hidden = [...new Set([...options.hidden, ...alwaysHidden()])];
  if (options.sandbox)
    return {
      sandbox: options.sandbox,
      record: {
        kind: options.sandbox.kind,
        description: options.sandbox.description,
        unsafe: options.sandbox.kind === "none",
      },
    };
  if (options.unsafeNoSandbox) {
    const sandbox = createUnsandboxed();
    return { sandbox, record: { kind: "none", description: sandbox.description, unsafe: true } };
  }
  const support = await detectSandbox();
  const qoder = experiment.variants.filter((v) => runtimeOf(experiment, v).host === "qoder");
  if (support.available && qoder.length > 0)
    throw new ExperimentInputError(
      experiment.manifestPath,
      [
        {
          path:
            experiment.runtime.host === "qoder"
              ? "runtime.host"
              : `${qoder[0]!.manifestField}.host`,
          message: QODER_NOT_CONTAINABLE,
        },
      ],
      "refusing to run agent-written code without an OS sandbox",
    );
  if (support.available) {
    const sandbox = createBwrapSandbox(support, { hidden });
    return { sandbox, record: { kind: "bwrap", description: sandbox.description, unsafe: false } };
  }
  const runners = trialCodeRunners(experiment);
  if (runners.length === 0) {
    const sandbox = createUnsandboxed();
    return {
      sandbox,
      record: {
        kind: "none",
        description: `none: nothing in this experiment runs the trial's code (${support.reason})`,
        unsafe: false,
      },
    };
  }
  throw new ExperimentInputError(
    experiment.manifestPath,
    [
      {
        path: "(sandbox)",
        message: `${support.reason}, and this experiment runs code the agent wrote: ${runners.slice(0, 3).join("; ")}${runners.length > 3 ? "; …" : ""}. To fix: ${support.fix}`,
      },
    ],
    "refusing to run agent-written code without an OS sandbox",
  );
}
