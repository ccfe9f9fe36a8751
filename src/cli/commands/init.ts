// `harness init [dir] [--host h]`: writes a small working experiment to start from.
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import type { Command } from "commander";
import { INIT_HOSTS, type InitHost, initFiles } from "../init-template.js";
import { type CliIO, EXIT, UsageError } from "../io.js";
import type { SetExitCode } from "../main.js";

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
      const files = initFiles(options.host as InitHost, shown);
      for (const [path, content] of Object.entries(files)) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), content, { flag: "wx" });
      }
      const unsafe = options.host === "qoder" ? " --unsafe-no-sandbox" : "";
      io.stdout(
        [
          `wrote ${Object.keys(files).length} files to ${shown}/ (see ${shown}/README.md)`,
          "next:",
          `  harness compare validate ${shown}/experiment.json${unsafe}`,
          `  harness compare run ${shown}/experiment.json --out ${shown}/runs/1${unsafe}`,
          "",
        ].join("\n"),
      );
      setExit(EXIT.ok);
    });
}
