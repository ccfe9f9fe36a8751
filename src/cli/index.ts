export { type CliIO, EXIT, processIO, UsageError } from "./io.js";
export { buildProgram, runCli } from "./main.js";
