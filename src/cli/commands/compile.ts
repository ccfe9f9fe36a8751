import type { Command } from "commander";
import { type CliIO, EXIT } from "../io.js";
import type { SetExitCode } from "../main.js";

export function registerCompileCommands(program: Command, io: CliIO, setExit: SetExitCode): void {
  for (const name of ["compile", "resolve"]) {
    program
      .command(name)
      .description(`${name} .harness files (not available yet)`)
      .allowUnknownOption()
      .argument("[args...]")
      .action(() => {
        io.stderr(`harness ${name}: not available yet in this version of harnesslab.\n`);
        setExit(EXIT.usage);
      });
  }
}
