import { stat } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { Command } from "commander";
import type { ForgeKind } from "../../forge/index.js";
import type { RepoState } from "../../scoring/index.js";
import { InvalidInputError, readJsonFile, writeFileAtomic } from "../../shared/index.js";
import { type CliIO, EXIT, jsonErrorDocument, type SetExitCode, UsageError } from "../io.js";
import { positiveInt, wholeNumber } from "../options.js";

/** What `forge` runs, loaded when it runs (not for `harness --help` or `--version`). */
async function stages() {
  const [forge, scoring] = await Promise.all([
    import("../../forge/index.js"),
    import("../../scoring/index.js"),
  ]);
  return { ...forge, validateRepoState: scoring.validateRepoState };
}

interface CaptureFlags {
  kind: string;
  url?: string;
  repo: string;
  tokenEnv?: string;
  out: string;
  pageSize?: number;
  rateLimitWait?: number;
  json?: boolean;
}

interface ServeFlags {
  seed: string;
  repo?: string;
  user?: string;
  author?: string;
  port?: number;
  git?: string;
  json?: boolean;
}

const REPO_NAME = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function registerForgeCommands(program: Command, io: CliIO, setExit: SetExitCode): void {
  const forge = program
    .command("forge")
    .description(
      "capture a forge repository's issue/PR state, or serve a local Gitea-compatible forge",
    );

  forge
    .command("capture")
    .description(
      "write a repository's labels, issues, pull requests, comments and reviews as a RepoState (exit 0 ok, 1 capture failed, 2 usage)",
    )
    .requiredOption("--kind <kind>", "gitea or github")
    .option(
      "--url <url>",
      "Gitea: the instance root; GitHub: the REST API root (default: GitHub's public API, api.github.com)",
    )
    .requiredOption("--repo <owner/name>", "the repository")
    .option(
      "--token-env <VAR>",
      "the variable holding the token (default GITEA_TOKEN or GITHUB_TOKEN)",
    )
    .requiredOption("--out <file>", "where the state goes (written whole or not at all)")
    .option(
      "--page-size <n>",
      "items asked for per page (Gitea 50, GitHub 100)",
      positiveInt("--page-size", 100),
    )
    .option(
      "--rate-limit-wait <seconds>",
      "the most the capture waits for rate limits in all (default 120)",
      wholeNumber("--rate-limit-wait", 0, 3600),
    )
    .option("--json", "print a result document on stdout")
    .action(async (flags: CaptureFlags) => setExit(await runCapture(flags, io)));

  forge
    .command("serve")
    .description(
      "serve a local Gitea-compatible forge on 127.0.0.1 seeded from a RepoState; prints {url, token, owner, repo, user} and serves until SIGINT/SIGTERM",
    )
    .requiredOption(
      "--seed <state.json>",
      "the repository state to start from (as forge capture writes it)",
    )
    .option("--repo <owner/name>", "the seeded repository (default harness/sandbox)")
    .option("--user <login>", "the user the token authenticates as (default agent)")
    .option(
      "--author <login>",
      "who opened the seeded issues and pull requests (default maintainer)",
    )
    .option(
      "--port <n>",
      "port on 127.0.0.1 (default: any free one)",
      wholeNumber("--port", 0, 65535),
    )
    .option("--git <repository>", "a git repository whose branches back the pull requests (copied)")
    .option("--json", "the JSON line is all stdout holds (it always is)")
    .action(async (flags: ServeFlags) => setExit(await runServe(flags, io)));
}

async function captureInputs(flags: CaptureFlags, io: CliIO) {
  if (flags.kind !== "gitea" && flags.kind !== "github")
    throw new UsageError(`--kind must be gitea or github, got ${JSON.stringify(flags.kind)}`);
  const kind: ForgeKind = flags.kind;
  if (!REPO_NAME.test(flags.repo))
    throw new UsageError(`--repo must be owner/name, got ${JSON.stringify(flags.repo)}`);
  if (kind === "gitea" && flags.url === undefined)
    throw new UsageError(
      "--url is required for --kind gitea (the instance root, e.g. https://gitea.example.com)",
    );
  if (flags.url !== undefined && !/^https?:\/\/[^/]/.test(flags.url))
    throw new UsageError(
      `--url must be an http:// or https:// URL, got ${JSON.stringify(flags.url)}`,
    );
  const { DEFAULT_TOKEN_ENV } = await stages();
  const tokenEnv = flags.tokenEnv ?? DEFAULT_TOKEN_ENV[kind];
  if (!VARIABLE.test(tokenEnv))
    throw new UsageError(
      `--token-env must be a variable name (letters, digits, _), got ${JSON.stringify(tokenEnv)}`,
    );
  const token = (io.env ?? process.env)[tokenEnv] || undefined;
  return { kind, tokenEnv, token, out: resolve(io.cwd, flags.out) };
}

async function runCapture(flags: CaptureFlags, io: CliIO): Promise<number> {
  const { kind, tokenEnv, token, out } = await captureInputs(flags, io);
  const { captureRepoState } = await stages();
  const parent = await stat(dirname(out)).catch(() => undefined);
  if (!parent?.isDirectory())
    throw new UsageError(`--out: the directory ${dirname(flags.out)} does not exist`);
  const result = await captureRepoState({
    kind,
    repo: flags.repo,
    token,
    tokenEnv,
    ...(flags.url !== undefined ? { url: flags.url } : {}),
    ...(flags.pageSize !== undefined ? { pageSize: flags.pageSize } : {}),
    ...(flags.rateLimitWait !== undefined
      ? { maxRateLimitWaitMs: flags.rateLimitWait * 1000 }
      : {}),
  });
  if (!result.ok) {
    io.stderr(`harness forge capture: ${result.error.message}\n`);
    if (flags.json) io.stdout(jsonErrorDocument(EXIT.fail, result.error.message));
    return EXIT.fail;
  }
  await writeFileAtomic(out, `${JSON.stringify(result.state, null, 2)}\n`);
  const counts = {
    labels: result.state.labels?.length ?? 0,
    issues: result.state.issues?.length ?? 0,
    pullRequests: result.state.pullRequests?.length ?? 0,
  };
  const summary = `captured ${flags.repo} from ${kind}: ${counts.labels} labels, ${counts.issues} issues, ${counts.pullRequests} pull requests (${result.requests} requests) → ${flags.out}\n`;
  if (flags.json) {
    io.stdout(
      `${JSON.stringify({ ok: true, out, requests: result.requests, ...counts }, null, 2)}\n`,
    );
    io.stderr(summary);
  } else io.stdout(summary);
  return EXIT.ok;
}

async function readSeed(file: string, cwd: string): Promise<RepoState> {
  const { validateRepoState } = await stages();
  const path = resolve(cwd, file);
  const json = await readJsonFile(path).catch((error: unknown) => {
    if (error instanceof InvalidInputError)
      throw new InvalidInputError(file, error.problems, error.problems[0]?.message);
    throw error;
  });
  const validated = validateRepoState(json);
  if (!validated.ok)
    throw new InvalidInputError(
      file,
      validated.problems,
      "not a RepoState (schemas/repo-state.schema.json)",
    );
  return validated.value;
}

async function runServe(flags: ServeFlags, io: CliIO): Promise<number> {
  const { startForge } = await stages();
  if (flags.repo !== undefined && !REPO_NAME.test(flags.repo))
    throw new UsageError(`--repo must be owner/name, got ${JSON.stringify(flags.repo)}`);
  const seed = await readSeed(flags.seed, io.cwd);
  const forge = await startForge({
    seed,
    ...(flags.repo !== undefined ? { repo: flags.repo } : {}),
    ...(flags.user !== undefined ? { user: flags.user } : {}),
    ...(flags.author !== undefined ? { author: flags.author } : {}),
    ...(flags.port !== undefined ? { port: flags.port } : {}),
    ...(flags.git !== undefined ? { git: resolve(io.cwd, flags.git) } : {}),
  }).catch((error: unknown) => {
    if (error instanceof InvalidInputError && error.source === "seed")
      throw new InvalidInputError(flags.seed, error.problems, "not a usable seed");
    throw error;
  });
  const { url, token, owner, repo, user, cloneUrl } = forge;
  io.stdout(
    `${JSON.stringify({ url, token, owner, repo, user, ...(cloneUrl ? { cloneUrl } : {}) })}\n`,
  );
  io.stderr(`forge: serving ${owner}/${repo} at ${url} as ${user} (Ctrl-C or SIGTERM stops)\n`);
  await new Promise<void>((done) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      done();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await forge.close();
  io.stderr(`forge: stopped after ${forge.writeLog().length} writes\n`);
  return EXIT.ok;
}
