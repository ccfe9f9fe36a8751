// `harness init [dir] [--host h]`: writes a small working experiment to start from.
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { isPathInside, shellQuote } from "../../shared/index.js";
import { INIT_HOSTS, type InitHost, initFiles, nextCommands } from "../init-template.js";
import { type CliIO, EXIT, type SetExitCode, UsageError } from "../io.js";

export function registerInitCommand(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("init")
    .description(
      "write a small working experiment to edit: a fixture with a failing test, two setups, a manifest, and a README explaining each file",
    )
    .argument("[dir]", "where to write it (created; must be empty or absent)", "harness-experiment")
    .option(
      "--host <host>",
      `the host the experiment runs on: ${INIT_HOSTS.join(", ")} (scripted runs offline)`,
      "scripted",
    )
    .action(async (dirArg: string, options: { host: string }) => {
      if (!(INIT_HOSTS as readonly string[]).includes(options.host))
        throw new UsageError(
          `--host must be one of ${INIT_HOSTS.join(", ")}, got ${JSON.stringify(options.host)}`,
        );
      const dir = resolve(io.cwd, dirArg);
      const existing = await readdir(dir).catch((error: NodeJS.ErrnoException) =>
        error.code === "ENOENT" ? [] : error,
      );
      if (existing instanceof Error)
        throw new UsageError(`${dir} cannot be used (${existing.code ?? existing.message})`);
      if (existing.length > 0)
        throw new UsageError(
          `${dir} is not empty (${existing.length} entr${existing.length === 1 ? "y" : "ies"}); init writes only into an empty or new directory, so nothing of yours is overwritten`,
        );
      const shown = relative(io.cwd, dir) || ".";
      const harness = harnessCommand(dir);
      const files = initFiles(options.host as InitHost, harness);
      for (const [path, content] of Object.entries(files)) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), content, { flag: "wx" });
      }
      io.stdout(
        [
          `wrote ${Object.keys(files).length} files to ${shown}/ (see ${shown}/README.md)`,
          "next:",
          ...nextCommands(options.host as InitHost, harness).map((line) =>
            line.startsWith("cd ") ? `  cd ${shellWord(dir)}` : `  ${line}`,
          ),
          "",
        ].join("\n"),
      );
      setExit(EXIT.ok);
    });
}

/** This package's own directory (dist/cli/commands → the package root). */
const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

/**
 * How to run this harnesslab from the experiment's directory: `npx harness` where the experiment
 * lies in the project that has it installed, else the program's own path. (Outside such a project
 * `npx harness` fetches an unrelated npm package of that name.)
 */
function harnessCommand(experimentDir: string): string {
  const parts = PACKAGE_ROOT.split(sep);
  const modules = parts.lastIndexOf("node_modules");
  if (modules > 0) {
    const project = parts.slice(0, modules).join(sep) || sep;
    if (isPathInside(project, experimentDir)) return "npx harness";
  }
  return `node ${shellWord(join(PACKAGE_ROOT, "dist", "cli", "bin.js"))}`;
}

/** A word for sh, quoted only when it needs to be. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : shellQuote(text);
}
