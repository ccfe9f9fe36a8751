// `compare plan`: before paying for trials, how many per cell the manifest's tasks and policy
// need to detect an effect, what they would cost at the cost per trial of earlier runs, and what
// the planned count can detect. Statistics by simulating the decision (stats stage), seeded with
// the manifest's seed so the same manifest always gets the same plan.
import { join } from "node:path";
import { verdictDocumentSchema } from "../../artifacts/index.js";
import { InvalidInputError, readValidJsonFile } from "../../shared/index.js";
import {
  DEFAULT_PAIRED_POLICY,
  detectableEffect,
  estimatePower,
  type PairedPolicy,
  type PowerEstimate,
  trialsForPower,
} from "../../stats/index.js";
import type { Experiment } from "../experiment.js";
import { mulberry32 } from "./prng.js";

export interface PlanRequest {
  /** Candidate pass rate minus the baseline's, on every task. */
  effect: number;
  /** Wanted chance of accepting such a candidate. */
  power: number;
  /** The baseline's pass rate on every task. */
  passRate: number;
  /** Simulated experiments per trial count tried. */
  runs?: number;
  /** Mean USD per trial from earlier runs; null when none is known. */
  costPerTrial: { usd: number; trials: number; runs: number } | null;
}

export interface ExperimentPlan {
  tasks: number;
  candidates: number;
  policy: PairedPolicy;
  /** True when the manifest's policy is heuristic-v1 and the plan uses paired-v1's defaults. */
  policyReplaced: boolean;
  request: Omit<PlanRequest, "costPerTrial" | "runs">;
  runs: number;
  /** The trials per cell needed for `power`, or null when 100 are not enough. */
  needed: { trialsPerCell: number; totalTrials: number; estimate: PowerEstimate } | null;
  /** Expected USD for the needed trials (and for the planned ones), at the known cost per trial. */
  cost: {
    perTrial: number;
    fromTrials: number;
    fromRuns: number;
    needed: number | null;
    planned: number;
  } | null;
  /** The most disk the run's trials can take at once: trials at once × the disk budget. */
  disk: { concurrency: number; budgetBytes: number; worstCaseBytes: number };
  planned: {
    trialsPerCell: number;
    totalTrials: number;
    /** How the planned count fares against `effect`. */
    atEffect: PowerEstimate;
    /** The smallest effect on a 0.05 grid it detects with `power`; null if none. */
    detectable: { effect: number; estimate: PowerEstimate } | null;
  };
}

const MAX_TRIALS = 100;

/** The plan for `experiment`'s tasks and policy (pure apart from the seeded simulation). */
export function planExperiment(experiment: Experiment, request: PlanRequest): ExperimentPlan {
  const policyReplaced = experiment.verdict.kind !== "paired-v1";
  const policy =
    experiment.verdict.kind === "paired-v1" ? experiment.verdict : DEFAULT_PAIRED_POLICY;
  const candidates = experiment.variants.length - 1;
  const runs = request.runs ?? 400;
  const scenario = {
    tasks: experiment.tasks.length,
    candidates,
    baselineRate: request.passRate,
    effect: request.effect,
    policy,
  };
  const random = () => mulberry32(experiment.trials.seed);
  const found = trialsForPower(scenario, request.power, {
    runs,
    maxTrials: MAX_TRIALS,
    random: random(),
  });
  const cells = experiment.tasks.length * experiment.variants.length;
  const plannedCount = experiment.trials.count;
  const cost = request.costPerTrial;
  return {
    tasks: experiment.tasks.length,
    candidates,
    policy,
    policyReplaced,
    request: { effect: request.effect, power: request.power, passRate: request.passRate },
    runs,
    needed:
      found === null
        ? null
        : {
            trialsPerCell: found.trialsPerCell,
            totalTrials: found.trialsPerCell * cells,
            estimate: found.estimate,
          },
    cost:
      cost === null
        ? null
        : {
            perTrial: cost.usd,
            fromTrials: cost.trials,
            fromRuns: cost.runs,
            needed: found === null ? null : found.trialsPerCell * cells * cost.usd,
            planned: plannedCount * cells * cost.usd,
          },
    disk: {
      concurrency: experiment.concurrency,
      budgetBytes: experiment.diskBudgetBytes,
      // Each running trial: its workspace, or one grading copy at a time, each up to the budget.
      worstCaseBytes: experiment.concurrency * experiment.diskBudgetBytes,
    },
    planned: {
      trialsPerCell: plannedCount,
      totalTrials: plannedCount * cells,
      atEffect: estimatePower({ ...scenario, trialsPerCell: plannedCount }, runs, random()),
      detectable: detectableEffect({ ...scenario, trialsPerCell: plannedCount }, request.power, {
        runs,
        random: random(),
      }),
    },
  };
}

/**
 * The mean USD per trial over earlier runs' verdict.json files (trials that reported a cost);
 * null when none did. A directory without a readable verdict.json is an input error the caller
 * reports.
 */
export async function pastCostPerTrial(
  outDirs: readonly string[],
): Promise<{ usd: number; trials: number; runs: number } | null> {
  let total = 0;
  let trials = 0;
  let runs = 0;
  for (const dir of outDirs) {
    const verdict = await readValidJsonFile(join(dir, "verdict.json"), verdictDocumentSchema);
    if (verdict === undefined)
      throw new InvalidInputError(
        "--from",
        [
          {
            path: dir,
            message:
              "has no readable verdict.json: --from takes the --out directory of a finished run",
          },
        ],
        "cannot read the earlier run's costs",
      );
    const costs = verdict.trials.flatMap((t) => (t.costUsd === null ? [] : [t.costUsd]));
    if (costs.length === 0) continue;
    runs += 1;
    trials += costs.length;
    total += costs.reduce((a, b) => a + b, 0);
  }
  return trials === 0 ? null : { usd: total / trials, trials, runs };
}

const pct = (x: number) => `${Math.round(100 * x)}%`;
const signed = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(2)}`;
const usd = (x: number) => `$${x.toFixed(2)}`;

/** The plan as lines for a person; `fromRuns` is how many earlier runs --from named. */
export function formatPlan(plan: ExperimentPlan, manifest: string, fromRuns = 0): string[] {
  const { policy, request } = plan;
  const perCandidate = policy.alpha / plan.candidates;
  const design = policy.design === "sequential" ? "sequential design" : "fixed design";
  const lines = [
    `plan for ${manifest}: ${plan.tasks} task(s), ${plan.candidates} candidate(s) against the baseline, paired-v1 at alpha ${policy.alpha}${plan.candidates > 1 ? ` (${Number(perCandidate.toPrecision(4))} per candidate)` : ""}, ${design}, minTrials ${policy.minTrials}`,
  ];
  if (plan.policyReplaced)
    lines.push(
      "note: the manifest's heuristic-v1 policy has no error rate to plan for; this plan is for paired-v1 with its defaults",
    );
  const target = `a candidate ${signed(request.effect)} better than a baseline passing ${pct(request.passRate)} of trials on every task`;
  if (plan.needed === null)
    lines.push(
      `to accept ${target} with ${pct(request.power)} power: more than ${MAX_TRIALS} trials per variant and task, the most this plan simulates (more tasks help more than more trials: each task is another paired comparison)`,
    );
  else {
    const used =
      policy.design === "sequential"
        ? ` (the sequential design stops after about ${pct(plan.needed.estimate.trialsUsed)} of them on average at this effect)`
        : "";
    lines.push(
      `to accept ${target} with ${pct(request.power)} power: ${plan.needed.trialsPerCell} trials per variant and task, ${plan.needed.totalTrials} trials in all${used}`,
    );
  }
  if (plan.cost === null)
    lines.push(
      fromRuns > 0
        ? "expected cost: unknown (no trial of the runs given with --from reported a USD cost)"
        : "expected cost: unknown (give earlier runs with --from <out-dir> to estimate it)",
    );
  else
    lines.push(
      `expected cost: ${plan.cost.needed === null ? "—" : usd(plan.cost.needed)} for those, ${usd(plan.cost.planned)} for the planned ${plan.planned.totalTrials} (at ${usd(plan.cost.perTrial)} per trial, the mean of ${plan.cost.fromTrials} trial(s) in ${plan.cost.fromRuns} earlier run(s))`,
    );
  const detectable = plan.planned.detectable;
  lines.push(
    `with the planned ${plan.planned.trialsPerCell} trials per variant and task: ${pct(plan.planned.atEffect.accept)} chance to accept ${signed(request.effect)}; ${
      detectable === null
        ? `no effect this baseline leaves room for (up to ${signed(1 - request.passRate)}) is detected with ${pct(request.power)} power: more trials or more tasks are needed`
        : `the smallest effect detected with ${pct(request.power)} power is ${signed(detectable.effect)}`
    }`,
    `(each chance is estimated from ${plan.runs} simulated experiments, within about ±${Math.round(100 * Math.sqrt(0.25 / plan.runs) * 2)} points)`,
    `disk: at most ${mib(plan.disk.worstCaseBytes)} at once (${plan.disk.concurrency} trial(s) at once × a disk budget of ${mib(plan.disk.budgetBytes)} each, diskBudgetMB; a trial that goes over it fails)`,
  );
  return lines;
}

function mib(bytes: number): string {
  return `${Math.ceil(bytes / (1024 * 1024))} MiB`;
}
