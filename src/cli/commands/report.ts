import type { Command } from "commander";
import { type CliIO, EXIT } from "../io.js";
import type { SetExitCode } from "../main.js";

export function registerReportCommand(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("report")
    .description("re-render a finished comparison run (not available yet)")
    .allowUnknownOption()
    .argument("[args...]")
    .action(() => {
      io.stderr("harness report: not available yet in this version of harnesslab.\n");
      setExit(EXIT.usage);
    });
}
