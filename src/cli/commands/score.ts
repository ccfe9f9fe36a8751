import type { Command } from "commander";
import { type CliIO, EXIT } from "../io.js";
import type { SetExitCode } from "../main.js";

export function registerScoreCommand(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("score")
    .description("score one forge submission (placeholder until the scoring seam lands)")
    .allowUnknownOption()
    .argument("[args...]")
    .action(() => {
      io.stderr("harness score: not available yet.\n");
      setExit(EXIT.usage);
    });
}
