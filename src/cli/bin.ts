#!/usr/bin/env node
// `harness --version` answers before the CLI loads: a version check in a script or a CI step
// costs what starting Node costs. Everything else goes through the full program.
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { version } = JSON.parse(
    readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
  ) as { version: string };
  process.stdout.write(`${version}\n`);
} else {
  const { runCli } = await import("./main.js");
  process.exitCode = await runCli(args);
}
