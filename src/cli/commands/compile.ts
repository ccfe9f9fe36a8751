import { readFile } from "node:fs/promises";
import { resolve as resolvePath } from "node:path";
import type { Command } from "commander";
import type { HostId } from "../../hosts/index.js";
import type { HarnessIrBundle, Realization } from "../../ir/index.js";
import type { Diagnostic, SourceInput } from "../../language/index.js";
import { fileReadProblem, readHarnessSource } from "../../shared/index.js";
import { type CliIO, EXIT, type SetExitCode, UsageError } from "../io.js";

/** What `compile` and `resolve` run, loaded when they run (not for `--help` or `--version`). */
async function stages() {
  const [ir, language, resolver, hosts, semver] = await Promise.all([
    import("../../ir/index.js"),
    import("../../language/index.js"),
    import("../../resolver/index.js"),
    import("../../hosts/index.js"),
    import("semver"),
  ]);
  return {
    compareStrength: ir.compareStrength,
    compileHarness: language.compileHarness,
    formatDiagnostic: language.formatDiagnostic,
    resolveComposition: resolver.resolveComposition,
    isHostId: hosts.isHostId,
    HOST_IDS: hosts.HOST_IDS,
    semver: semver.default,
  };
}
type Stages = Awaited<ReturnType<typeof stages>>;

interface CompileOptions {
  json?: boolean;
}

interface ResolveCommandOptions extends CompileOptions {
  composition: string;
  host?: string;
}

export function registerCompileCommands(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("compile")
    .description("compile .harness files into an IR bundle (files may refer to each other)")
    .argument("<files...>", ".harness files, relative to the current directory")
    .option("--json", "print the bundle (or the diagnostics) as one JSON document on stdout")
    .action(async (files: string[], options: CompileOptions) => {
      setExit(await runCompile(files, options, io));
    });

  program
    .command("resolve")
    .description("compile .harness files and resolve one composition into a revision")
    .argument("<files...>", ".harness files, relative to the current directory")
    .requiredOption("--composition <id>", "the composition to resolve")
    .option(
      "--host <host>",
      "resolve for this host instead of the composition's target (a host of docs/hosts.md; a wrong name lists them)",
    )
    .option(
      "--json",
      "print {revision, report} (or the diagnostics) as one JSON document on stdout",
    )
    .action(async (files: string[], options: ResolveCommandOptions) => {
      setExit(await runResolve(files, options, io));
    });
}

async function readSources(files: readonly string[], io: CliIO): Promise<SourceInput[]> {
  return Promise.all(
    files.map(async (file) => {
      try {
        return { uri: file, text: await readFile(resolvePath(io.cwd, file), "utf8") };
      } catch (error) {
        throw new UsageError(`${file}: ${fileReadProblem(error, ".harness files")}`);
      }
    }),
  );
}

type CompiledOrExit = { ok: true; bundle: HarnessIrBundle } | { ok: false; exitCode: number };

/** Compiles and prints diagnostics: warnings always to stderr, errors as JSON or human text. */
async function compileFiles(
  files: readonly string[],
  json: boolean,
  io: CliIO,
): Promise<CompiledOrExit> {
  const sources = await readSources(files, io);
  const loaded = await stages();
  const { compileHarness } = loaded;
  // Components' sources are read relative to their .harness file, as the file is named here.
  const { bundle, diagnostics } = compileHarness(sources, {
    readSource: (uri, path) => readHarnessSource(resolvePath(io.cwd, uri), path),
  });
  const texts = new Map(sources.map((source) => [source.uri, source.text]));
  if (bundle === undefined) {
    if (json) io.stdout(`${JSON.stringify({ diagnostics }, null, 2)}\n`);
    else io.stderr(renderDiagnostics(diagnostics, texts, loaded));
    return { ok: false, exitCode: EXIT.fail };
  }
  if (diagnostics.length > 0) io.stderr(renderDiagnostics(diagnostics, texts, loaded));
  return { ok: true, bundle };
}

function renderDiagnostics(
  diagnostics: readonly Diagnostic[],
  texts: ReadonlyMap<string, string>,
  { formatDiagnostic }: Stages,
): string {
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  const warnings = diagnostics.length - errors;
  const rendered = diagnostics.map((d) => formatDiagnostic(d, texts.get(d.uri)));
  const summary = [
    errors > 0 ? plural(errors, "error") : undefined,
    warnings > 0 ? plural(warnings, "warning") : undefined,
  ]
    .filter((part) => part !== undefined)
    .join(", ");
  return `${rendered.join("\n\n")}\n\n${summary}\n`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

async function runCompile(files: string[], options: CompileOptions, io: CliIO): Promise<number> {
  const json = options.json === true;
  const compiled = await compileFiles(files, json, io);
  if (!compiled.ok) return compiled.exitCode;
  const { bundle } = compiled;
  if (json) {
    io.stdout(`${JSON.stringify(bundle, null, 2)}\n`);
    return EXIT.ok;
  }
  const versions = new Set(bundle.plugins.map((plugin) => plugin.id)).size;
  io.stdout(
    `compiled ${plural(files.length, "file")}: ${plural(bundle.components.length, "component")}, ` +
      `${plural(bundle.bindings.length, "binding")}, ${plural(versions, "plugin")} ` +
      `(${plural(bundle.plugins.length, "version")}), ${plural(bundle.compositions.length, "composition")}` +
      `${bundle.compositions.length > 0 ? `: ${bundle.compositions.map((c) => c.id).join(", ")}` : ""}\n`,
  );
  return EXIT.ok;
}

async function runResolve(
  files: string[],
  options: ResolveCommandOptions,
  io: CliIO,
): Promise<number> {
  const loaded = await stages();
  const { HOST_IDS, isHostId, resolveComposition } = loaded;
  let host: HostId | undefined;
  if (options.host !== undefined) {
    if (!isHostId(options.host)) {
      throw new UsageError(
        `--host ${JSON.stringify(options.host)} is not a known host; use one of ${HOST_IDS.join(", ")}`,
      );
    }
    host = options.host;
  }
  const json = options.json === true;
  const compiled = await compileFiles(files, json, io);
  if (!compiled.ok) return compiled.exitCode;
  const { bundle } = compiled;
  if (!bundle.compositions.some((composition) => composition.id === options.composition)) {
    const available = bundle.compositions.map((composition) => composition.id);
    throw new UsageError(
      `--composition ${JSON.stringify(options.composition)} is not declared in ${files.join(", ")}; ` +
        (available.length > 0
          ? `use one of ${available.join(", ")}`
          : "it declares no composition"),
    );
  }
  const result = resolveComposition(
    bundle,
    options.composition,
    host === undefined ? {} : { host },
  );
  const resolved = result.report.status === "resolved";
  if (json) {
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return resolved ? EXIT.ok : EXIT.fail;
  }
  const { report, revision } = result;
  const lines: string[] = [];
  if (revision !== undefined) {
    lines.push(
      `resolved composition ${report.compositionId} for host ${report.target}: revision ${revision.revisionId}`,
    );
  } else {
    lines.push(`composition ${report.compositionId} for host ${report.target} failed to resolve`);
  }
  lines.push(...renderRealizations(report.realizations));
  if (revision !== undefined) {
    const permissions = revision.permissions.map((p) => `${p.domain} ${p.access}`).join(", ");
    lines.push(`permissions: ${permissions === "" ? "(none)" : permissions}`);
    const settings = revision.settings.map((s) => `${s.key} = ${JSON.stringify(s.value.value)}`);
    if (settings.length > 0) lines.push(`settings: ${settings.join(", ")}`);
  }
  io.stdout(`${lines.join("\n")}\n`);
  if (!resolved) {
    const fixes = report.realizations
      .filter((r) => r.action === "failed")
      .map((r) => fixFor(r, bundle, loaded));
    io.stderr(
      `${[...report.errors.map((error) => `error: ${error}`), ...fixes.map((fix) => `fix: ${fix}`)].join("\n")}\n`,
    );
    return EXIT.fail;
  }
  return EXIT.ok;
}

/**
 * What to change for a requirement that failed: what the composition includes, the requirement,
 * or the binding. (The reason and error texts themselves match the reference implementation's
 * word for word.)
 */
function fixFor(
  r: Realization,
  bundle: HarnessIrBundle,
  { compareStrength, semver }: Stages,
): string {
  if (r.reason === "component not provided") {
    // Each providing plugin once, at the major version of its newest release.
    const providers = new Map<string, string>();
    for (const plugin of bundle.plugins)
      if (plugin.provides.includes(r.componentId)) {
        const seen = providers.get(plugin.id);
        if (seen === undefined || semver.gt(plugin.version, seen))
          providers.set(plugin.id, plugin.version);
      }
    const include =
      providers.size > 0
        ? `include a plugin that provides it (${[...providers].map(([id, version]) => `\`plugin.${id}@^${semver.major(version)}\``).join(" or ")} in the composition's \`include\`)`
        : `add it to the \`provides\` of a plugin the composition includes (no plugin provides it yet)`;
    return `${r.componentId}: ${include}, or drop the \`require ${r.componentId}\` (docs/language.md#strengths-degradation-and-resolution)`;
  }
  const belowMinimum = compareStrength(r.realized, r.requestedMinimum) < 0;
  const wanted = belowMinimum ? r.requestedMinimum : (r.requestedPreferred ?? r.requestedMinimum);
  const requirement = belowMinimum
    ? `lower its \`minimum\` to '${r.realized}'`
    : `lower its \`preferred\` to '${r.realized}' or make it \`on-degrade report\``;
  const binding =
    r.declaredMechanism === null
      ? `bind ${r.componentId} for this host (\`binding ${r.componentId} for <host> { mechanism … strength … }\`)`
      : `bind it for this host with a mechanism its executor realizes at '${wanted}' or stronger`;
  return `${r.componentId}: ${requirement} in the composition, or ${binding} (docs/language.md#strengths-degradation-and-resolution)`;
}

function renderRealizations(realizations: readonly Realization[]): string[] {
  const width = Math.max(0, ...realizations.map((r) => r.componentId.length));
  return realizations.map((r) => {
    const via = r.materializedMechanism === null ? "" : ` via ${r.materializedMechanism}`;
    const reason = r.reason === undefined ? "" : ` (${r.reason})`;
    return `  ${r.action.padEnd(9)} ${r.componentId.padEnd(width)}  ${r.realized}${via}${reason}`;
  });
}
