import { readdir, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import type { Command } from "commander";
import {
  InvalidInputError,
  jsonErrorLocation,
  readTextFile,
  validateWith,
  writeFileAtomic,
} from "../../shared/index.js";
import { type CliIO, EXIT, type SetExitCode, UsageError } from "../io.js";

/** What `report` runs, loaded when it runs (not for `harness --help` or `--version`). */
async function stages() {
  const [compare, report] = await Promise.all([
    import("../../compare/index.js"),
    import("../../report/index.js"),
  ]);
  return { ...compare, ...report };
}

const FORMATS = ["md", "html", "json"] as const;

interface ReportOptions {
  format: string;
  verdict: string;
  output?: string;
}

/** `verdict.regrade-001.json` → `validation.regrade-001.json`: the checks that verdict was graded with. */
function validationFileFor(verdictFile: string): string {
  const match = /^verdict\.(.+)\.json$/.exec(basename(verdictFile));
  return match ? `validation.${match[1]}.json` : "validation.json";
}

async function requireRunDirectory(outDir: string): Promise<void> {
  const info = await stat(outDir).catch((error: NodeJS.ErrnoException) => error);
  if (info instanceof Error) {
    throw new UsageError(
      info.code === "ENOENT"
        ? `${outDir}: no such directory; give the --out directory of a finished comparison run`
        : `${outDir}: cannot read the directory (${info.code ?? info.message})`,
    );
  }
  if (!info.isDirectory())
    throw new UsageError(
      `${outDir}: not a directory; give the --out directory of a finished comparison run`,
    );
}

/** True while a live `compare run` (or regrade) holds the directory's lock. */
async function runInProgress(outDir: string): Promise<boolean> {
  const { createRunLock, ExperimentInputError } = await import("../../compare/index.js");
  try {
    await createRunLock(outDir, { takeOverStale: false }).assertNotHeldByLiveRun();
    return false;
  } catch (error) {
    if (error instanceof ExperimentInputError) return true;
    throw error;
  }
}

async function requireVerdictFile(outDir: string, verdictPath: string): Promise<void> {
  const { RUN_LOCK_FILE } = await import("../../compare/index.js");
  const info = await stat(verdictPath).catch(() => null);
  if (info?.isFile()) return;
  const names = await readdir(outDir).catch(() => [] as string[]);
  const present = names.filter((name) => /^verdict(\..+)?\.json$/.test(name)).sort();
  let hint: string;
  if (await runInProgress(outDir))
    hint = `a run is in progress in ${outDir} (a live \`compare run\` or \`compare regrade\` holds ${join(outDir, RUN_LOCK_FILE)}); its verdict is written when it ends: run \`harness report\` again then${present.length > 0 ? `. Verdicts already there: ${present.join(", ")}` : ""}`;
  else if (present.length > 0) hint = `verdicts in ${outDir}: ${present.join(", ")}`;
  else if (!names.includes("manifest.json") && !names.includes(RUN_LOCK_FILE))
    hint = `no comparison run was started in ${outDir} (it has no manifest.json); give the --out directory of a run`;
  else
    hint =
      "a run writes verdict.json when it ends; a run that was killed left none: finish it with `harness compare run … --resume`";
  throw new UsageError(`${verdictPath}: ${info ? "not a file" : "no verdict file here"} (${hint})`);
}

async function readVerdict(verdictPath: string) {
  const { verdictDocumentSchema } = await stages();
  const source = await readTextFile(verdictPath);
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (error) {
    throw new InvalidInputError(
      verdictPath,
      [{ path: jsonErrorLocation(source), message: `not valid JSON: ${(error as Error).message}` }],
      "not valid JSON",
    );
  }
  const checked = validateWith(verdictDocumentSchema, json);
  if (!checked.ok)
    throw new InvalidInputError(
      verdictPath,
      checked.problems,
      "not a verdict written by harnesslab",
    );
  return { verdict: checked.value, source };
}

/** The report goes through a temporary sibling and a rename: a reader never sees half of it. */
async function writeReport(target: string, text: string): Promise<void> {
  try {
    await writeFileAtomic(target, text);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "its directory does not exist"
        : code === "EISDIR"
          ? "it is a directory"
          : (code ?? String(error));
    throw new UsageError(`${target}: cannot write the report (${why})`);
  }
}

/** Links in the report point at trial folders of the run; from elsewhere they need a prefix. */
function linkBaseFor(outputFile: string | null, outDir: string): string {
  if (outputFile === null) return "";
  const path = relative(dirname(outputFile), outDir);
  return path === "" ? "" : `${path.split(sep).join("/")}/`;
}

export function registerReportCommand(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("report")
    .description("re-render a finished comparison run from its artifacts")
    .argument("<out-dir>", "the --out directory of a finished run")
    .option("--format <format>", "md, html or json", "md")
    .option(
      "--verdict <file>",
      "the verdict file to render (relative to <out-dir>), e.g. verdict.regrade-001.json",
      "verdict.json",
    )
    .option("--output <file>", "write the report to this file instead of stdout")
    .action(async (outDirArg: string, options: ReportOptions) => {
      if (!(FORMATS as readonly string[]).includes(options.format))
        throw new UsageError(
          `--format must be one of ${FORMATS.join(", ")}, got ${JSON.stringify(options.format)}`,
        );
      const outDir = resolve(io.cwd, outDirArg);
      await requireRunDirectory(outDir);
      const verdictPath = resolve(outDir, options.verdict);
      await requireVerdictFile(outDir, verdictPath);
      const output = options.output === undefined ? null : resolve(io.cwd, options.output);
      if (output === verdictPath)
        throw new UsageError(`--output ${output}: that is the verdict being rendered`);

      const { verdict, source } = await readVerdict(verdictPath);
      const { renderMarkdownReport, renderVerdictHtml } = await stages();
      const linkBase = linkBaseFor(output, outDir);
      let text: string;
      // The file's own bytes: validated, but not re-serialised (which would reorder keys and
      // fill in defaults), so the output is the verdict.json a reader would diff against.
      if (options.format === "json") text = source;
      else if (options.format === "md") text = renderMarkdownReport(verdict, { linkBase });
      else
        text = await renderVerdictHtml(outDir, verdict, validationFileFor(verdictPath), {
          linkBase,
        });

      if (output === null) io.stdout(text);
      else {
        await writeReport(output, text);
        io.stderr(`wrote ${output}\n`);
      }
      setExit(EXIT.ok);
    });
}
