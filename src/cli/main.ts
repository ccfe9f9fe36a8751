import { createRequire } from "node:module";
import { Command, CommanderError } from "commander";
import { InvalidInputError } from "../shared/index.js";
import { registerCiCommand } from "./commands/ci.js";
import { registerCompareCommands } from "./commands/compare.js";
import { registerCompileCommands } from "./commands/compile.js";
import { registerForgeCommands } from "./commands/forge.js";
import { registerInitCommand } from "./commands/init.js";
import { registerReportCommand } from "./commands/report.js";
import { registerScoreCommand } from "./commands/score.js";
import { registerWorkerCommand } from "./commands/worker.js";
import {
  type CliIO,
  EXIT,
  jsonErrorDocument,
  processIO,
  type SetExitCode,
  UsageError,
} from "./io.js";

const packageJson = createRequire(import.meta.url)("../../package.json") as { version: string };

/** Builds the `harness` program. Each command sets the exit code through `setExit`; nothing calls process.exit. */
function buildProgram(io: CliIO, setExit: SetExitCode): Command {
  const program = new Command("harness")
    .description(
      "Compare coding-agent setups with isolated trials, deterministic graders and an honest verdict.",
    )
    .version(packageJson.version, "-V, --version")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
    })
    .exitOverride();
  registerCompileCommands(program, io, setExit);
  registerCompareCommands(program, io, setExit);
  registerCiCommand(program, io, setExit);
  registerScoreCommand(program, io, setExit);
  registerReportCommand(program, io, setExit);
  registerForgeCommands(program, io, setExit);
  registerInitCommand(program, io, setExit);
  registerWorkerCommand(program, io, setExit);
  for (const command of program.commands) applyCommonBehaviour(command, io);
  return program;
}

function applyCommonBehaviour(command: Command, io: CliIO): void {
  command.exitOverride().configureOutput({
    writeOut: (text) => io.stdout(text),
    writeErr: (text) => io.stderr(text),
  });
  for (const sub of command.commands) applyCommonBehaviour(sub, io);
}

/** `compare`'s subcommands, which a newcomer may type without it (`harness run …`). */
const COMPARE_SUBCOMMANDS = ["run", "validate", "regrade", "plan"];

/** Runs the CLI in-process and returns the exit code (0 ok, 1 negative result, 2 usage/invalid input). */
export async function runCli(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  let exitCode: number = EXIT.ok;
  let stdoutWritten = false;
  const tracked: CliIO = {
    ...io,
    stdout: (text) => {
      stdoutWritten = true;
      io.stdout(text);
    },
  };
  const wantsJson = argv.includes("--json");
  const program = buildProgram(tracked, (code) => {
    exitCode = code;
  });
  const fail = (code: number, message: string, error?: unknown): number => {
    if (wantsJson && !stdoutWritten) io.stdout(jsonErrorDocument(code, message, error));
    return code;
  };
  const first = argv[0];
  if (first !== undefined && COMPARE_SUBCOMMANDS.includes(first)) {
    const message = `unknown command '${first}': did you mean \`harness compare ${first}\`?`;
    io.stderr(`harness: ${message}\n`);
    return fail(EXIT.usage, message);
  }
  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        error.code === "commander.help"
      )
        return EXIT.ok;
      // Commander already printed its message to stderr.
      return fail(EXIT.usage, error.message.replace(/^error: /, ""));
    }
    if (error instanceof UsageError || error instanceof InvalidInputError) {
      io.stderr(`harness: ${error.message}\n`);
      return fail(EXIT.usage, error.message, error);
    }
    io.stderr(
      `harness: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return fail(
      EXIT.fail,
      `unexpected error: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
