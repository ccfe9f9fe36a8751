#!/usr/bin/env node
import { runCli } from "./main.js";

// `harness-compare …` is `harness compare …`.
process.exitCode = await runCli(["compare", ...process.argv.slice(2)]);
