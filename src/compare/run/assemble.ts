// Assembly for a run: compile the experiment's .harness files once and resolve every
// variant's composition for the runtime host into a revision and its run preamble.
import { readFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { FORGE_MCP_SERVER } from "../../forge/index.js";
import {
  buildRunPreamble,
  type HostId,
  isSetupMechanism,
  type SetupMechanism,
} from "../../hosts/index.js";
import {
  type ComponentContract,
  canonicalJson,
  type DegradationPolicy,
  type HarnessIrBundle,
  type HarnessRevision,
  type ResolutionReport,
  type Strength,
  sha256Hex,
} from "../../ir/index.js";
import { compileHarness, type Diagnostic, formatDiagnostic } from "../../language/index.js";
import { resolveComposition } from "../../resolver/index.js";
import { type InputProblem, readHarnessSource } from "../../shared/index.js";
import {
  type Experiment,
  FORGE_ACCESS_SETTING,
  FORGE_ACCESS_VALUES,
  FORGE_ONLY_SETTING,
  FORGE_TOOL_SETTING,
  type ForgeAccess,
  type ForgeArm,
  harnessFilesOf,
  type RuntimeSpec,
  runtimeOf,
  type VariantSpec,
} from "../experiment.js";

interface CompiledHarnessFiles {
  ok: true;
  bundle: HarnessIrBundle;
  /** Absolute paths of the components' sources (files or folders) the compilation read. */
  sourcePaths: string[];
  /** Each component's source, by component id: its absolute path. */
  componentSources: Map<string, string>;
  /** `sha256:` over the files' relative names and bytes: pins the exact harness text. */
  harnessHash: string;
  /** `sha256:` over the files' bytes and the components' sources, not where they lie. */
  setupHash: string;
}

export type CompileFilesResult =
  | CompiledHarnessFiles
  | { ok: false; problems: InputProblem[]; diagnostics: Diagnostic[] };

/** Reads and compiles `.harness` files together; uris are the paths relative to `baseDir`. */
export async function compileHarnessFiles(
  files: readonly string[],
  baseDir: string,
): Promise<CompileFilesResult> {
  const sources: Array<{ uri: string; text: string }> = [];
  for (const file of files) {
    const uri = relative(baseDir, file).split("\\").join("/") || file;
    try {
      sources.push({ uri, text: await readFile(file, "utf8") });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      return {
        ok: false,
        diagnostics: [],
        problems: [{ path: "harness", message: `${uri} cannot be read (${code})` }],
      };
    }
  }
  const sourcePaths = new Set<string>();
  const componentSources = new Map<string, string>();
  const compiled = compileHarness(sources, {
    readSource: (uri, path, componentId) => {
      const file = resolve(baseDir, uri);
      const absolute = resolve(dirname(file), path);
      sourcePaths.add(absolute);
      componentSources.set(componentId, absolute);
      return readHarnessSource(file, path);
    },
  });
  if (compiled.bundle === undefined) {
    const errors = compiled.diagnostics.filter((d) => d.severity === "error");
    return {
      ok: false,
      diagnostics: errors,
      problems: errors.map((d) => ({
        path: "harness",
        message: formatDiagnostic(d, sources.find((s) => s.uri === d.uri)?.text),
      })),
    };
  }
  const texts = sources.map((s) => ({ uri: s.uri, sha256: sha256Hex(s.text) }));
  // Components' source files are part of the setup: a changed skill is another harness. (A
  // program without sources hashes as it always did, so earlier runs still resume.)
  const sourceHashes = compiled.bundle.components.flatMap((c) =>
    c.source === undefined ? [] : [{ component: c.id, files: c.source.files }],
  );
  const harnessHash = `sha256:${sha256Hex(canonicalJson(sourceHashes.length === 0 ? texts : { files: texts, sources: sourceHashes }))}`;
  const setupHash = `sha256:${sha256Hex(canonicalJson({ files: texts.map((t) => t.sha256), sources: sourceHashes }))}`;
  return {
    ok: true,
    bundle: compiled.bundle,
    harnessHash,
    setupHash,
    sourcePaths: [...sourcePaths].sort(),
    componentSources,
  };
}

export interface AssembledVariant {
  variantId: string;
  revision: HarnessRevision;
  /**
   * The content of the `.harness` files it was compiled from and of its components' sources,
   * wherever they lie (the same setup read from another folder hashes the same).
   */
  setupHash: string;
  report: ResolutionReport;
  preamble: string;
  /** Components whose realization degraded (the report says why). */
  degraded: string[];
  /** How the agent reaches a forge task's repository (`configure { forge.access = … }`). */
  forgeArm: ForgeArm;
  /** A `cli` forge tool: the component whose program each forge trial installs for the agent. */
  forgeProgram?: PlannedForgeProgram;
  /** The components the executor hands to the host itself (materialized for each trial). */
  setup: PlannedSetupComponent[];
}

/** A component of a variant's setup as the resolution planned it, before a trial materializes it. */
export interface PlannedSetupComponent {
  contract: ComponentContract;
  mechanism: SetupMechanism;
  strength: Strength;
  onDegrade: DegradationPolicy;
  /** Absolute path of its source as compiled (a file or a folder), when it has one. */
  sourcePath?: string;
}

/** A component with a `cli` program that is a variant's forge tool, before a trial materializes it. */
export interface PlannedForgeProgram {
  contract: ComponentContract & { cli: NonNullable<ComponentContract["cli"]> };
  /** Absolute path of its source as compiled, when it has one. */
  sourcePath?: string;
}

/** The realizations a trial must materialize: those whose mechanism hands the component itself over. */
function plannedSetup(
  revision: HarnessRevision,
  bundle: HarnessIrBundle,
  componentSources: ReadonlyMap<string, string>,
): PlannedSetupComponent[] {
  const contracts = new Map(bundle.components.map((c) => [c.id, c]));
  const composition = bundle.compositions.find((c) => c.id === revision.composition.id);
  const planned: PlannedSetupComponent[] = [];
  for (const realization of revision.realization) {
    const mechanism = realization.materializedMechanism;
    if (realization.action === "failed" || !isSetupMechanism(mechanism)) continue;
    const contract = contracts.get(realization.componentId);
    if (contract === undefined) continue;
    const requirement = composition?.requirements.find(
      (r) => r.componentId === realization.componentId,
    );
    const sourcePath = componentSources.get(contract.id);
    planned.push({
      contract,
      mechanism,
      strength: realization.realized,
      onDegrade: requirement?.onDegrade ?? "report",
      ...(contract.source === undefined || sourcePath === undefined ? {} : { sourcePath }),
    });
  }
  return planned;
}

/**
 * The revision's forge arm from its `forge.access`, `forge.tool` and `forge.only` settings, or
 * what is wrong with them. A `forge.tool` names a component of the setup: an MCP server the host
 * is given itself (mechanism `mcp-server`), or a tool with a `cli` program.
 */
function forgeArmOf(
  revision: HarnessRevision,
  bundle: HarnessIrBundle,
  setup: readonly PlannedSetupComponent[],
  componentSources: ReadonlyMap<string, string>,
): { ok: true; arm: ForgeArm; program?: PlannedForgeProgram } | { ok: false; problem: string } {
  const setting = (key: string) => revision.settings.find((s) => s.key === key)?.value;
  const access = setting(FORGE_ACCESS_SETTING);
  const tool = setting(FORGE_TOOL_SETTING);
  const only = setting(FORGE_ONLY_SETTING);
  if (access !== undefined && !(FORGE_ACCESS_VALUES as readonly unknown[]).includes(access.value))
    return {
      ok: false,
      problem: `sets ${FORGE_ACCESS_SETTING} to ${JSON.stringify(access.value)}; allowed: ${FORGE_ACCESS_VALUES.map((v) => JSON.stringify(v)).join(", ")}`,
    };
  if (only !== undefined && only.type !== "boolean")
    return {
      ok: false,
      problem: `sets ${FORGE_ONLY_SETTING} to ${JSON.stringify(only.value)}; it is true or false`,
    };
  const onlyTool = only?.value === true;
  const host = revision.target.host;
  const commandArm = (what: string) =>
    host === "codex"
      ? `${what}: Codex runs its commands in its own sandbox beside its model endpoint (which adds the model's key), so commands that reach the forge would reach that too; give a Codex variant an MCP arm (forge.access = "mcp", or forge.tool naming an MCP server)`
      : undefined;
  if (tool === undefined) {
    if (access?.value === "tool")
      return {
        ok: false,
        problem: `sets ${FORGE_ACCESS_SETTING} = "tool" without ${FORGE_TOOL_SETTING}: name the component the agent reaches the forge with (${FORGE_TOOL_SETTING} = "<component>")`,
      };
    const refused =
      access?.value === "cli" ? commandArm(`sets ${FORGE_ACCESS_SETTING} = "cli"`) : undefined;
    if (refused !== undefined) return { ok: false, problem: refused };
    return { ok: true, arm: { access: (access?.value ?? "mcp") as ForgeAccess, only: onlyTool } };
  }
  if (tool.type !== "string" || tool.value === "")
    return {
      ok: false,
      problem: `sets ${FORGE_TOOL_SETTING} to ${JSON.stringify(tool.value)}; it names a component of the composition`,
    };
  if (access !== undefined && access.value !== "tool")
    return {
      ok: false,
      problem: `sets ${FORGE_TOOL_SETTING} = ${JSON.stringify(tool.value)} and ${FORGE_ACCESS_SETTING} = ${JSON.stringify(access.value)}: the agent reaches the forge one way; remove ${FORGE_ACCESS_SETTING} (${FORGE_TOOL_SETTING} implies "tool")`,
    };
  const id = tool.value;
  const realization = revision.realization.find((r) => r.componentId === id);
  const contract = bundle.components.find((c) => c.id === id);
  if (realization === undefined || contract === undefined || realization.action === "failed")
    return {
      ok: false,
      problem: `sets ${FORGE_TOOL_SETTING} = ${JSON.stringify(id)}, which is not a component this composition ${realization === undefined ? "includes or requires" : `realizes for ${revision.target.host} (its realization failed)`}`,
    };
  if (contract.mcp !== undefined) {
    if (!setup.some((c) => c.contract.id === id && c.mechanism === "mcp-server"))
      return {
        ok: false,
        problem: `sets ${FORGE_TOOL_SETTING} = ${JSON.stringify(id)}, an MCP server the host is not given itself: bind it with mechanism mcp-server for ${revision.target.host} (binding ${id} for ${revision.target.host} { mechanism mcp-server strength wired })`,
      };
    return {
      ok: true,
      arm: { access: "tool", tool: { component: id, kind: "mcp-server" }, only: onlyTool },
    };
  }
  if (contract.cli !== undefined) {
    const refused =
      commandArm(`sets ${FORGE_TOOL_SETTING} = ${JSON.stringify(id)}, a program`) ??
      (host === "qoder"
        ? `sets ${FORGE_TOOL_SETTING} = ${JSON.stringify(id)}, a program: Qoder runs only without the sandbox, where its shell starts from the system's own PATH, not the program's folder; give a Qoder variant forge.access = "mcp" or "cli"`
        : undefined);
    if (refused !== undefined) return { ok: false, problem: refused };
    const sourcePath = componentSources.get(id);
    return {
      ok: true,
      arm: { access: "tool", tool: { component: id, kind: "cli" }, only: onlyTool },
      program: {
        contract: { ...contract, cli: contract.cli },
        ...(contract.source === undefined || sourcePath === undefined ? {} : { sourcePath }),
      },
    };
  }
  return {
    ok: false,
    problem: `sets ${FORGE_TOOL_SETTING} = ${JSON.stringify(id)}, a component that is neither an MCP server (mcp { … }) nor a program (cli { … })`,
  };
}

export type AssembleResult =
  | {
      ok: true;
      bundle: HarnessIrBundle;
      harnessHash: string;
      /** Absolute paths of the components' sources (a queue's bundle carries them). */
      sourcePaths: string[];
      variants: Map<string, AssembledVariant>;
    }
  | { ok: false; problems: InputProblem[] };

/** Compiles the harness and resolves each variant; a failed resolution is a problem naming the variant's field. */
export async function assembleExperiment(
  experiment: Experiment,
  options: {
    /** Resolve variants that give the agent the same setup without refusing them (`harness ci` says so itself). */
    sameSetupsAllowed?: boolean;
  } = {},
): Promise<AssembleResult> {
  const main = await compileHarnessFiles(experiment.harnessFiles, experiment.manifestDir);
  if (!main.ok) return { ok: false, problems: main.problems };
  // A variant with harness files of its own (another version of the setup) is compiled from them;
  // each set of files once.
  const sets = new Map<string, CompiledHarnessFiles | { ok: false; problems: InputProblem[] }>([
    [JSON.stringify(experiment.harnessFiles), main],
  ]);
  const variants = new Map<string, AssembledVariant>();
  const problems: InputProblem[] = [];
  const ownHashes: Record<string, string> = {};
  const sourcePaths = new Set(main.sourcePaths);
  for (const variant of experiment.variants) {
    const files = harnessFilesOf(experiment, variant);
    const key = JSON.stringify(files);
    if (!sets.has(key)) sets.set(key, await compileHarnessFiles(files, experiment.manifestDir));
    const compiled = sets.get(key)!;
    if (!compiled.ok) {
      problems.push(
        ...compiled.problems.map((p) => ({
          path: `${variant.manifestField}.harness`,
          message: `${p.path === "harness" ? "" : `${p.path}: `}${p.message}`,
        })),
      );
      continue;
    }
    if (variant.harnessFiles !== undefined) ownHashes[variant.id] = compiled.harnessHash;
    for (const path of compiled.sourcePaths) sourcePaths.add(path);
    const host = runtimeOf(experiment, variant).host;
    const { revision, report } = resolveComposition(compiled.bundle, variant.composition, {
      host,
    });
    if (revision === undefined) {
      const errors = report.errors.join("; ");
      problems.push({
        path: variant.compositionField,
        message: `composition "${variant.composition}" does not resolve for host ${host}: ${errors || report.status}`,
      });
      continue;
    }
    const setup = plannedSetup(revision, compiled.bundle, compiled.componentSources);
    const forge = forgeArmOf(revision, compiled.bundle, setup, compiled.componentSources);
    if (!forge.ok) {
      problems.push({
        path: variant.compositionField,
        message: `composition "${variant.composition}" ${forge.problem}`,
      });
      continue;
    }
    const clash = setup.find(
      (c) => c.mechanism === "mcp-server" && c.contract.id === FORGE_MCP_SERVER,
    );
    if (clash !== undefined && experiment.tasks.some((t) => t.forge !== undefined)) {
      problems.push({
        path: variant.compositionField,
        message: `composition "${variant.composition}" has an MCP server component named "${FORGE_MCP_SERVER}", the name of the forge's own server in this experiment's forge tasks; rename the component`,
      });
      continue;
    }
    variants.set(variant.id, {
      variantId: variant.id,
      revision,
      setupHash: compiled.setupHash,
      report,
      preamble: buildRunPreamble(revision, compiled.bundle),
      degraded: revision.realization
        .filter((r) => r.action === "degraded")
        .map((r) => r.componentId),
      forgeArm: forge.arm,
      ...(forge.program === undefined ? {} : { forgeProgram: forge.program }),
      setup,
    });
  }
  // A calibration compares the baseline with itself on purpose.
  if (experiment.calibration === undefined && !options.sameSetupsAllowed)
    problems.push(...sameSetups(experiment, variants));
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    bundle: main.bundle,
    // A run whose variants all use the experiment's files hashes as it always did.
    harnessHash:
      Object.keys(ownHashes).length === 0
        ? main.harnessHash
        : `sha256:${sha256Hex(canonicalJson({ harness: main.harnessHash, variants: ownHashes }))}`,
    sourcePaths: [...sourcePaths].sort(),
    variants,
  };
}

/**
 * What a variant's agent is really given: the components with their content, how each is
 * realized, the permissions, the settings and the preamble, with the same runtime and agent.
 * Two compositions with other names (and so other revision ids) can still give exactly this.
 */
function setupKey(variant: VariantSpec, assembled: AssembledVariant, runtime: RuntimeSpec): string {
  const { revision } = assembled;
  return canonicalJson({
    components: revision.resolved.components,
    realization: revision.realization.map((r) => ({
      componentId: r.componentId,
      realized: r.realized,
      mechanism: r.materializedMechanism ?? null,
    })),
    permissions: revision.permissions,
    settings: revision.settings,
    // Its first line names the revision, which differs with the composition's name alone.
    guidance: assembled.preamble.split("\n").slice(1).join("\n"),
    runtimeProfile: variant.runtimeProfile ?? null,
    agent: variant.agent ?? null,
    runtime,
  });
}

/** A problem for each variant that would run exactly the setup of an earlier one. */
function sameSetups(
  experiment: Experiment,
  assembled: ReadonlyMap<string, AssembledVariant>,
): InputProblem[] {
  const problems: InputProblem[] = [];
  const seen = new Map<string, VariantSpec>();
  for (const variant of experiment.variants) {
    const mine = assembled.get(variant.id);
    if (mine === undefined) continue;
    const key = setupKey(variant, mine, runtimeOf(experiment, variant));
    const earlier = seen.get(key);
    if (earlier === undefined) {
      seen.set(key, variant);
      continue;
    }
    const theirs = assembled.get(earlier.id)!;
    const components = mine.revision.realization
      .filter((r) => r.realized !== "unsupported")
      .map((r) => r.componentId);
    problems.push({
      path: variant.compositionField,
      message: `${earlier.isBaseline ? "baseline" : `variant "${earlier.id}"`} and ${variant.isBaseline ? "baseline" : `variant "${variant.id}"`} are the same setup: compositions "${earlier.composition}" (${theirs.revision.revisionId}) and "${variant.composition}" (${mine.revision.revisionId}) give the ${runtimeOf(experiment, variant).host} host the same components (${components.join(", ") || "none"}), realized the same way, with the same permissions, settings, runtime and agent, so the comparison could only measure noise. Make them differ: e.g. move the components only one setup should have into a plugin that only its composition includes (including a plugin enables everything it provides)`,
    });
  }
  return problems;
}
