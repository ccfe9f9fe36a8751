// Rules that span several fields (or several items of a list). They read the raw
// document defensively, so they run — and report — even when other fields are broken:
// `harness compare validate` lists every problem at once.
import { formatJsonPath, type InputProblem } from "../../shared/index.js";
import { HOSTS } from "../experiment.js";
import { agentIdentity, parseAgentReference } from "./agents.js";
import { NETWORK_TOOLS, REQUIRED_TOOLS } from "./fields.js";
import { normalizeChangeSurfacePath } from "./paths.js";
import { valueAt } from "./problems.js";
import { V1_RUNTIME_PROFILES } from "./schema-v1.js";

type Path = ReadonlyArray<string | number>;

function at(root: unknown, path: Path): unknown {
  return valueAt(root, path).value;
}

function asArray(value: unknown): unknown[] | undefined {
  return Array.isArray(value) ? value : undefined;
}

function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Reports every repeat of a key in a list, naming the first occurrence. */
function duplicateProblems(
  items: readonly unknown[],
  listPath: Path,
  keyOf: (item: unknown) => string | undefined,
  what: (item: unknown) => string,
): InputProblem[] {
  const problems: InputProblem[] = [];
  const first = new Map<string, number>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    if (key === undefined) return;
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, index);
    else
      problems.push({
        path: formatJsonPath([...listPath, index]),
        message: `${what(item)} repeats ${formatJsonPath([...listPath, earlier])}; list it once`,
      });
  });
  return problems;
}

function changeSurfaceKey(item: unknown): string | undefined {
  if (typeof item !== "string") return undefined;
  const normalized = normalizeChangeSurfacePath(item);
  return normalized.ok ? normalized.path : undefined;
}

/** Bounded tool policy of a real-host runtime (docs/manifest.md), at `runtimePath`. */
function toolPolicyProblems(root: unknown, runtimePath: Path): InputProblem[] {
  const problems: InputProblem[] = [];
  const tools = asArray(at(root, [...runtimePath, "tools"]));
  const disallowed = asArray(at(root, [...runtimePath, "disallowedTools"]));
  if (tools !== undefined) {
    problems.push(
      ...duplicateProblems(tools, [...runtimePath, "tools"], asString, (item) =>
        JSON.stringify(item),
      ),
    );
    const missing = REQUIRED_TOOLS.filter((tool) => !tools.includes(tool));
    if (missing.length > 0)
      problems.push({
        path: formatJsonPath([...runtimePath, "tools"]),
        message: `must include ${missing.map((t) => JSON.stringify(t)).join(", ")}: a bounded coding run needs ${REQUIRED_TOOLS.join(", ")}`,
      });
  }
  if (disallowed !== undefined) {
    problems.push(
      ...duplicateProblems(disallowed, [...runtimePath, "disallowedTools"], asString, (item) =>
        JSON.stringify(item),
      ),
    );
    // The network is always denied (the only allowed value), so web tools must be off.
    const missing = NETWORK_TOOLS.filter((tool) => !disallowed.includes(tool));
    if (missing.length > 0)
      problems.push({
        path: formatJsonPath([...runtimePath, "disallowedTools"]),
        message: `must include ${missing.map((t) => JSON.stringify(t)).join(" and ")}: the network is denied, so web tools must be unavailable`,
      });
    disallowed.forEach((tool, index) => {
      if (typeof tool !== "string") return;
      if ((REQUIRED_TOOLS as readonly string[]).includes(tool))
        problems.push({
          path: formatJsonPath([...runtimePath, "disallowedTools", index]),
          message: `${JSON.stringify(tool)} is a required coding tool; it cannot be disallowed`,
        });
      else if (tools?.includes(tool))
        problems.push({
          path: formatJsonPath([...runtimePath, "disallowedTools", index]),
          message: `${JSON.stringify(tool)} is also listed in ${formatJsonPath([...runtimePath, "tools"])}; a tool is either offered or disallowed`,
        });
    });
  }
  return problems;
}

export function v1PolicyProblems(root: unknown): InputProblem[] {
  const problems: InputProblem[] = [];
  problems.push(...toolPolicyProblems(root, ["runtime"]));
  const expected = asArray(at(root, ["task", "expectedFiles"]));
  if (expected !== undefined)
    problems.push(
      ...duplicateProblems(expected, ["task", "expectedFiles"], changeSurfaceKey, (item) =>
        JSON.stringify(item),
      ),
    );
  const baseline = asString(at(root, ["variants", "baseline"]));
  const candidate = asString(at(root, ["variants", "candidate"]));
  const profiles = at(root, ["runtimeProfiles"]);
  const profileOf = (variant: string) =>
    isRecord(profiles) ? asString(profiles[variant]) : V1_RUNTIME_PROFILES[0];
  if (
    baseline !== undefined &&
    baseline === candidate &&
    profileOf("baseline") === profileOf("candidate")
  ) {
    problems.push({
      path: "variants.candidate",
      message: `is the same composition as variants.baseline (${JSON.stringify(baseline)}) with the same runtime profile; the two variants must differ in composition or runtime profile`,
    });
  }
  return problems;
}

/** The id a grader has inside its task (command graders name theirs). */
function graderId(grader: unknown): string | undefined {
  if (!isRecord(grader)) return undefined;
  if (grader.kind === "command") return asString(grader.id);
  return asString(grader.kind);
}

export function v2PolicyProblems(root: unknown): InputProblem[] {
  const problems: InputProblem[] = [];
  const harness = asArray(at(root, ["harness"]));
  if (harness !== undefined)
    problems.push(
      ...duplicateProblems(harness, ["harness"], changeSurfaceKey, (item) => JSON.stringify(item)),
    );

  const tasks = asArray(at(root, ["tasks"])) ?? [];
  problems.push(
    ...duplicateProblems(
      tasks,
      ["tasks"],
      (task) => (isRecord(task) ? asString(task.id) : undefined),
      (task) => `task id ${JSON.stringify((task as Record<string, unknown>).id)}`,
    ),
  );
  tasks.forEach((task, index) => {
    if (!isRecord(task)) return;
    const expected = asArray(task.expectedFiles);
    if (expected !== undefined)
      problems.push(
        ...duplicateProblems(
          expected,
          ["tasks", index, "expectedFiles"],
          changeSurfaceKey,
          (item) => JSON.stringify(item),
        ),
      );
    const graders = asArray(task.graders);
    if (graders !== undefined)
      problems.push(
        ...duplicateProblems(
          graders,
          ["tasks", index, "graders"],
          graderId,
          (grader) => `grader id ${JSON.stringify(graderId(grader))}`,
        ),
      );
  });

  // Host-dependent rules only apply to a known host; an unknown one is reported on its own.
  const knownHost = (value: unknown) => {
    const text = asString(value);
    return text !== undefined && (HOSTS as readonly string[]).includes(text) ? text : undefined;
  };
  const host = knownHost(at(root, ["runtime", "host"]));
  const runtimeModel = asString(at(root, ["runtime", "model"]));
  const variants = asArray(at(root, ["variants"])) ?? [];
  problems.push(
    ...duplicateProblems(
      variants,
      ["variants"],
      // Variant ids name directories, which are case-insensitive on macOS and Windows.
      (variant) => (isRecord(variant) ? asString(variant.id)?.toLowerCase() : undefined),
      (variant) => `variant id ${JSON.stringify((variant as Record<string, unknown>).id)}`,
    ),
  );
  const identities: Array<string | undefined> = variants.map((variant, index) => {
    if (!isRecord(variant)) return undefined;
    const composition = asString(variant.composition);
    const profile = asString(variant.runtimeProfile);
    const agentText = asString(variant.agent);
    const agent = agentText === undefined ? undefined : parseAgentReference(agentText);
    const field = (name: string) => formatJsonPath(["variants", index, name]);
    if (agent !== undefined && !agent.ok)
      problems.push({ path: field("agent"), message: agent.problem });
    // The variant's own host when it sets one (undefined when that is not a host), else the experiment's.
    const variantHost = "host" in variant ? knownHost(variant.host) : host;
    const scripted = variantHost === "scripted";
    const hostName = "host" in variant ? `its host ${JSON.stringify(variantHost)}` : "runtime.host";
    if (variantHost !== undefined) {
      if (scripted && !("agent" in variant))
        problems.push({
          path: field("agent"),
          message:
            'is required for the scripted host: "nop", "oracle:<patch path>" or the path of an agent module',
        });
      if (!scripted && agentText !== undefined)
        problems.push({
          path: field("agent"),
          message: `is only for the "scripted" host (${hostName} is ${JSON.stringify(variantHost)}); remove it`,
        });
      if (scripted && profile !== undefined)
        problems.push({
          path: field("runtimeProfile"),
          message: "runtime profiles belong to real hosts; the scripted host has none, remove it",
        });
      if (scripted)
        for (const name of ["model", "maxTurns", "permissionMode"])
          if (name in variant)
            problems.push({
              path: field(name),
              message: `the scripted host has no ${name} (its agent is a module); remove it`,
            });
      if (
        variantHost === "qoder" &&
        profile !== undefined &&
        !(V1_RUNTIME_PROFILES as readonly string[]).includes(profile)
      )
        problems.push({
          path: field("runtimeProfile"),
          message: `${JSON.stringify(profile)} is not a qoder runtime profile; expected one of ${V1_RUNTIME_PROFILES.map((p) => JSON.stringify(p)).join(", ")}`,
        });
      if (!scripted && host === "scripted")
        problems.push({
          path: field("host"),
          message: `${JSON.stringify(variantHost)} is a real host, and a real host runs under the experiment's tool policy (runtime.tools, disallowedTools, maxTurns, model), which a scripted runtime does not have: make runtime the real host's and give the scripted variants "host": "scripted"`,
        });
      if (!scripted && host !== undefined && host !== "scripted" && variantHost !== host)
        if (!("model" in variant))
          problems.push({
            path: field("model"),
            message: `is required: runtime.model ${JSON.stringify(runtimeModel ?? "")} is a ${host} model and this variant runs on ${variantHost}; name the ${variantHost} model`,
          });
    }
    if (composition === undefined) return undefined;
    const agentKey = agent?.ok ? agentIdentity(agent.agent) : (agentText ?? "");
    // On qoder, no profile means the default profile: the two spellings are one variant.
    const effectiveProfile = profile ?? (variantHost === "qoder" ? V1_RUNTIME_PROFILES[0] : "");
    const runtimeKey = ["host", "model", "maxTurns", "timeoutMs"].map((name) =>
      name in variant ? variant[name] : at(root, ["runtime", name]),
    );
    // Another variant's harness files make another setup of the same composition name.
    const harnessKey = "harness" in variant ? variant.harness : null;
    return JSON.stringify([composition, harnessKey, effectiveProfile, agentKey, runtimeKey]);
  });
  identities.forEach((identity, index) => {
    if (identity === undefined) return;
    const earlier = identities.indexOf(identity);
    if (earlier < index)
      problems.push({
        path: formatJsonPath(["variants", index]),
        message: `has the same composition (from the same harness files), runtime profile and agent as variants[${earlier}], on the same host and model with the same limits; variants must differ in at least one of them`,
      });
  });

  const baseline = at(root, ["baseline"]);
  if (typeof baseline === "string" && variants.length > 0) {
    const ids = variants.map((v) => (isRecord(v) ? asString(v.id) : undefined));
    const known = ids.filter((id) => id !== undefined).map((id) => JSON.stringify(id));
    if (!ids.includes(baseline))
      problems.push({
        path: "baseline",
        message: `${JSON.stringify(baseline)} is not a variant id${known.length > 0 ? `; expected one of ${known.join(", ")}` : ""}`,
      });
  }

  if (host !== undefined && host !== "scripted")
    problems.push(...toolPolicyProblems(root, ["runtime"]));
  const commands = asArray(at(root, ["runtime", "validationCommands"]));
  if (commands !== undefined)
    problems.push(
      ...duplicateProblems(
        commands,
        ["runtime", "validationCommands"],
        (command) => (Array.isArray(command) ? JSON.stringify(command) : undefined),
        (command) => `command ${JSON.stringify(command)}`,
      ),
    );
  return problems;
}
