import { readdir, stat } from "node:fs/promises";
import { basename, dirname, relative, resolve, sep } from "node:path";
import type { Command } from "commander";
import { loadTrialDetails, verdictDocumentSchema } from "../../compare/index.js";
import { renderHtmlReport, renderMarkdownReport } from "../../report/index.js";
import {
  InvalidInputError,
  readJsonFile,
  validateWith,
  writeFileAtomic,
} from "../../shared/index.js";
import { type CliIO, EXIT, UsageError } from "../io.js";
import type { SetExitCode } from "../main.js";

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

async function requireVerdictFile(outDir: string, verdictPath: string): Promise<void> {
  const info = await stat(verdictPath).catch(() => null);
  if (info?.isFile()) return;
  const present = (await readdir(outDir).catch(() => [] as string[]))
    .filter((name) => /^verdict(\..+)?\.json$/.test(name))
    .sort();
  const hint =
    present.length > 0
      ? `verdicts in ${outDir}: ${present.join(", ")}`
      : "a run writes verdict.json when its last trial is done; finish an interrupted run with `harness compare run … --resume`";
  throw new UsageError(`${verdictPath}: ${info ? "not a file" : "no verdict file here"} (${hint})`);
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

      const checked = validateWith(verdictDocumentSchema, await readJsonFile(verdictPath));
      if (!checked.ok)
        throw new InvalidInputError(
          verdictPath,
          checked.problems,
          "not a verdict written by harnesslab",
        );
      const verdict = checked.value;
      const linkBase = linkBaseFor(output, outDir);
      let text: string;
      if (options.format === "json") text = `${JSON.stringify(verdict, null, 2)}\n`;
      else if (options.format === "md") text = renderMarkdownReport(verdict, { linkBase });
      else {
        const details = await loadTrialDetails(outDir, verdict, validationFileFor(verdictPath));
        text = renderHtmlReport(verdict, details, { linkBase });
      }

      if (output === null) io.stdout(text);
      else {
        await writeReport(output, text);
        io.stderr(`wrote ${output}\n`);
      }
      setExit(EXIT.ok);
    });
}
