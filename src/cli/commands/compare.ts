import type { Command } from "commander";
import { type CliIO, EXIT } from "../io.js";
import type { SetExitCode } from "../main.js";

export function registerCompareCommands(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("compare")
    .description("run, validate and regrade comparison experiments (not available yet)")
    .allowUnknownOption()
    .argument("[args...]")
    .action(() => {
      io.stderr(
        "harness compare: not available yet in this version of harnesslab (the comparison runner has not landed).\n",
      );
      setExit(EXIT.usage);
    });
}
