// The inputs of a run one by one (pure): what `manifest.json` records so that a refused
// `--resume` can name the input that changed instead of only saying that something did.

import type { RunInputs } from "../../artifacts/index.js";
import { canonicalJson, sha256Hex } from "../../ir/index.js";
import type { Experiment, GraderSpec } from "../experiment.js";

export interface RunInputSources {
  experiment: Experiment;
  /** `sha256:` of the manifest file's bytes. */
  manifestHash: string;
  harnessHash: string;
  /** Per task id. */
  fixtureHashes: Readonly<Record<string, string>>;
  /** Per variant id. */
  agentHashes: Readonly<Record<string, string | null>>;
  /** Per task id, per grader id: the canonical contract's hash, or null. */
  contractHashes: ReadonlyMap<string, ReadonlyMap<string, string | null>>;
  /** How the trials' commands are contained. */
  containment?: "bwrap" | "none";
}

const hashOf = (value: unknown) => `sha256:${sha256Hex(canonicalJson(value))}`;

/** A JSON copy of a settings object (what manifest.json can hold and compare later). */
function plain(value: object): Record<string, unknown> {
  return JSON.parse(canonicalJson(value)) as Record<string, unknown>;
}

/**
 * A grader's settings without where its files are: a contract moved along with the experiment
 * is the same input (its content is compared through the contract hash).
 */
export function graderSettings(grader: GraderSpec): unknown {
  if (grader.kind === "readme-package-v1") {
    const { contractFile: _where, ...rest } = grader;
    return rest;
  }
  if (grader.kind === "tests") {
    // Hidden files are compared by content, through the contract hash.
    const { hidden: _where, ...rest } = grader;
    return rest;
  }
  if (grader.kind === "forge-state") {
    // The expected state itself is the setting; where a file of it lies is not.
    const { source, ...rest } = grader;
    return "changes" in source ? grader : rest;
  }
  return grader;
}

export function describeRunInputs(sources: RunInputSources): RunInputs {
  const { experiment } = sources;
  return {
    manifest: sources.manifestHash,
    harness: sources.harnessHash,
    tasks: Object.fromEntries(
      experiment.tasks.map((task) => [
        task.id,
        {
          fixture: sources.fixtureHashes[task.id] ?? hashOf(null),
          prompt: `sha256:${sha256Hex(task.prompt)}`,
          ...(task.forge === undefined
            ? {}
            : { forge: { seed: hashOf(task.forge.seed), repo: task.forge.repo } }),
          expectedFiles: [...task.expectedFiles],
          graders: Object.fromEntries(
            task.graders.map((grader) => [
              grader.id,
              {
                kind: grader.kind,
                contract: sources.contractHashes.get(task.id)?.get(grader.id) ?? null,
                settings: hashOf(graderSettings(grader)),
              },
            ]),
          ),
        },
      ]),
    ),
    agents: { ...sources.agentHashes },
    trials: {
      count: experiment.trials.count,
      seed: experiment.trials.seed,
      order: experiment.trials.order,
    },
    runtime: plain(experiment.runtime),
    verdictPolicy: plain(experiment.verdict),
    ...(sources.containment === undefined ? {} : { containment: sources.containment }),
    ...(experiment.forge === undefined ? {} : { forge: plain(experiment.forge) }),
  };
}

/** `sha256:0123456789ab…`: enough of a hash to tell two apart in a message. */
function short(hash: string | null): string {
  if (hash === null) return "none";
  return hash.length > 19 ? `${hash.slice(0, 19)}…` : hash;
}

function changed(what: string, then: string, now: string, verb = "differs"): string {
  return `${what} ${verb}: ${then} then, ${now} now`;
}

/** Keys of `then` and `now` in a stable order: those still present first (in today's order), then the gone ones. */
function keysOf(then: Record<string, unknown>, now: Record<string, unknown>): string[] {
  return [...Object.keys(now), ...Object.keys(then).filter((key) => !(key in now))];
}

/**
 * What differs between the inputs of an earlier run and today's, one sentence each, in a
 * stable order (manifest, harness, tasks, agents, trials, runtime, policy); empty when none.
 */
export function differingInputs(then: RunInputs, now: RunInputs): string[] {
  const out: string[] = [];
  if (then.manifest !== now.manifest)
    out.push(changed("the manifest file", short(then.manifest), short(now.manifest)));
  if (then.harness !== now.harness)
    out.push(changed("the harness", short(then.harness), short(now.harness)));
  for (const id of keysOf(then.tasks, now.tasks)) {
    const before = then.tasks[id];
    const after = now.tasks[id];
    if (before === undefined) {
      out.push(`task ${id} was not in the earlier run`);
      continue;
    }
    if (after === undefined) {
      out.push(`task ${id} of the earlier run is not in the manifest now`);
      continue;
    }
    if (before.fixture !== after.fixture)
      out.push(changed(`the fixture of task ${id}`, short(before.fixture), short(after.fixture)));
    if (before.prompt !== after.prompt)
      out.push(changed(`the prompt of task ${id}`, short(before.prompt), short(after.prompt)));
    if (before.forge?.seed !== after.forge?.seed)
      out.push(
        changed(
          `the forge seed of task ${id}`,
          short(before.forge?.seed ?? null),
          short(after.forge?.seed ?? null),
        ),
      );
    const filesThen = before.expectedFiles.join(", ") || "none";
    const filesNow = after.expectedFiles.join(", ") || "none";
    if (filesThen !== filesNow)
      out.push(changed(`the expected files of task ${id}`, filesThen, filesNow, "differ"));
    for (const grader of keysOf(before.graders, after.graders)) {
      const g0 = before.graders[grader];
      const g1 = after.graders[grader];
      if (g0 === undefined) out.push(`grader ${grader} of task ${id} was not in the earlier run`);
      else if (g1 === undefined)
        out.push(`grader ${grader} of task ${id} of the earlier run is not in the manifest now`);
      else {
        if (g0.contract !== g1.contract)
          out.push(
            changed(
              `the grader contract of task ${id} (grader ${grader})`,
              short(g0.contract),
              short(g1.contract),
            ),
          );
        if (g0.kind !== g1.kind || g0.settings !== g1.settings)
          out.push(
            changed(
              `the settings of grader ${grader} of task ${id}`,
              short(g0.settings),
              short(g1.settings),
              "differ",
            ),
          );
      }
    }
  }
  for (const variant of keysOf(then.agents, now.agents)) {
    if (!(variant in then.agents)) out.push(`variant ${variant} was not in the earlier run`);
    else if (!(variant in now.agents))
      out.push(`variant ${variant} of the earlier run is not in the manifest now`);
    else if (then.agents[variant] !== now.agents[variant])
      out.push(
        changed(
          `the agent of variant ${variant}`,
          short(then.agents[variant] ?? null),
          short(now.agents[variant] ?? null),
        ),
      );
  }
  if (then.trials.count !== now.trials.count)
    out.push(changed("the trial count", String(then.trials.count), String(now.trials.count)));
  if (then.trials.seed !== now.trials.seed)
    out.push(changed("the trial seed", String(then.trials.seed), String(now.trials.seed)));
  if (then.trials.order !== now.trials.order)
    out.push(changed("the trial order", then.trials.order, now.trials.order));
  if (
    then.containment !== undefined &&
    now.containment !== undefined &&
    then.containment !== now.containment
  )
    out.push(
      changed(
        "the containment of commands",
        then.containment === "none" ? "no sandbox" : then.containment,
        now.containment === "none" ? "no sandbox (--unsafe-no-sandbox)" : now.containment,
        "differs",
      ),
    );
  out.push(...settingsDiffer("runtime", "the runtime settings differ", then.runtime, now.runtime));
  out.push(
    ...settingsDiffer(
      "verdict policy",
      "the verdict policy differs",
      then.verdictPolicy,
      now.verdictPolicy,
    ),
  );
  if (then.forge !== undefined || now.forge !== undefined)
    out.push(
      ...settingsDiffer("forge", "the forge settings differ", then.forge ?? {}, now.forge ?? {}),
    );
  return out;
}

/** A value as a message shows it: JSON, clipped. */
function shown(value: unknown): string {
  if (value === undefined) return "unset";
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** One sentence per setting that differs; a run recorded with only a hash gets one for them all. */
function settingsDiffer(
  what: string,
  asAWhole: string,
  then: string | Record<string, unknown>,
  now: string | Record<string, unknown>,
): string[] {
  if (typeof then === "string" || typeof now === "string") {
    const a = typeof then === "string" ? then : hashOf(then);
    const b = typeof now === "string" ? now : hashOf(now);
    return a === b ? [] : [`${asAWhole}: ${short(a)} then, ${short(b)} now`];
  }
  return keysOf(then, now)
    .filter((key) => canonicalJson(then[key] ?? null) !== canonicalJson(now[key] ?? null))
    .map((key) => changed(`the ${what} setting ${key}`, shown(then[key]), shown(now[key])));
}
