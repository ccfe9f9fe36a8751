import { join, resolve } from "node:path";
import type { Command } from "commander";
import { loadTrialDetails, verdictDocumentSchema } from "../../compare/index.js";
import { renderHtmlReport, renderMarkdownReport } from "../../report/index.js";
import { InvalidInputError, readJsonFile, validateWith } from "../../shared/index.js";
import { type CliIO, EXIT, UsageError } from "../io.js";
import type { SetExitCode } from "../main.js";

const FORMATS = ["md", "html", "json"] as const;

export function registerReportCommand(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("report")
    .description("re-render a finished comparison run from its artifacts")
    .argument("<out-dir>", "the --out directory of a finished run")
    .option("--format <format>", "md, html or json", "md")
    .option(
      "--verdict <file>",
      "the verdict file to render, e.g. verdict.regrade-001.json",
      "verdict.json",
    )
    .action(async (outDirArg: string, options: { format: string; verdict: string }) => {
      if (!(FORMATS as readonly string[]).includes(options.format))
        throw new UsageError(
          `--format must be one of ${FORMATS.join(", ")}, got ${JSON.stringify(options.format)}`,
        );
      const outDir = resolve(io.cwd, outDirArg);
      const file = join(outDir, options.verdict);
      const checked = validateWith(verdictDocumentSchema, await readJsonFile(file));
      if (!checked.ok)
        throw new InvalidInputError(file, checked.problems, "not a verdict written by harnesslab");
      const verdict = checked.value;
      if (options.format === "json") io.stdout(`${JSON.stringify(verdict, null, 2)}\n`);
      else if (options.format === "md") io.stdout(renderMarkdownReport(verdict));
      else {
        const validationFile = options.verdict
          .replace(/^verdict\./, "validation.")
          .replace(/^validation\.json$/, "validation.json");
        io.stdout(
          renderHtmlReport(verdict, await loadTrialDetails(outDir, verdict, validationFile)),
        );
      }
      setExit(EXIT.ok);
    });
}
