// `harness ci`: the setup under test at a pull request's base against the working tree, as one
// paired comparison (docs/ci.md).
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Command } from "commander";
import type { CiCommentInput, CiForge } from "../../compare/index.js";
import { InvalidInputError, problemCount } from "../../shared/index.js";
import { type CliIO, EXIT, type SetExitCode, UsageError } from "../io.js";
import { positiveInt, wholeNumber } from "../options.js";
import { maxCostOption, maxTokensOption, type RunOptions, runLoadedExperiment } from "./compare.js";

/** `infrastructure_error`: the comparison could not be made (exit 3, apart from a reject's 1). */
const EXIT_INFRASTRUCTURE = 3;

interface CiOptions extends Omit<RunOptions, "calibrate" | "trials" | "queue" | "keepForgeRepos"> {
  baselineRef: string;
  variant?: string;
  failOn: "reject" | "need_more_work";
  forge?: "github" | "gitea";
  apiUrl?: string;
  repo?: string;
  pr?: number;
  tokenEnv?: string;
  reportUrl?: string;
  headSha?: string;
  cache?: string;
}

export function registerCiCommand(program: Command, io: CliIO, setExit: SetExitCode): void {
  program
    .command("ci")
    .description(
      "compare the setup under test as it is at a base ref with the working tree: one paired verdict for a pull request",
    )
    .argument("<manifest>", "a harness-compare.v2 manifest whose variant is the setup under test")
    .requiredOption(
      "--baseline-ref <ref>",
      "the git ref of the base (e.g. origin/main); read with git, never checked out",
    )
    .option("--variant <id>", "the variant under test, when the manifest has several")
    .option(
      "--out <dir>",
      "where artifacts go: empty or absent, outside every fixture",
      "harness-ci",
    )
    .option(
      "--fail-on <status>",
      "exit 1 on this status or worse: reject (default), or need_more_work",
      (value: string) => {
        if (value !== "reject" && value !== "need_more_work")
          throw new UsageError(
            `--fail-on: ${JSON.stringify(value)} is not reject or need_more_work`,
          );
        return value;
      },
      "reject",
    )
    .option(
      "--concurrency <n>",
      "trials run at once (overrides the manifest)",
      positiveInt("--concurrency", 16),
    )
    .option(
      "--stop-early",
      "stop starting trials once no outcome of the remaining ones can change the verdict's status",
    )
    .option(
      "--retry-infra <n>",
      "run a trial again, up to n times, after an infrastructure error that may pass on retry",
      wholeNumber("--retry-infra", 0, 10),
    )
    .addOption(maxCostOption())
    .addOption(maxTokensOption())
    .option("--resume", "finish an interrupted ci run in --out")
    .option(
      "--cache <dir>",
      "keep the base's trials in <dir> and take them from there on the next run of the same base (sealed with $HARNESSLAB_CACHE_KEY)",
    )
    .option(
      "--unsafe-no-sandbox",
      "run the agent's code without an OS sandbox: it gets your user, files and network",
    )
    .option(
      "--forge <kind>",
      "post the verdict to the pull request: github or gitea (with --api-url, --repo, --pr, --token-env)",
      (value: string) => {
        if (value !== "github" && value !== "gitea")
          throw new UsageError(`--forge: ${JSON.stringify(value)} is not github or gitea`);
        return value;
      },
    )
    .option(
      "--api-url <url>",
      "the forge's API root (https://api.github.com, https://gitea.example.com/api/v1)",
    )
    .option("--repo <owner/name>", "the repository the pull request is in")
    .option("--pr <n>", "the pull request's number", positiveInt("--pr", Number.MAX_SAFE_INTEGER))
    .option(
      "--token-env <name>",
      "the environment variable holding the forge token (never printed or written)",
    )
    .option(
      "--report-url <url>",
      "where the comment says the whole report is (e.g. the job's artifacts)",
    )
    .option(
      "--head-sha <sha>",
      "the pull request's head commit this checkout was made from (the event's); a newer head on the forge means a newer run will report, so this one posts nothing",
    )
    .option("--json", "print the verdict document as JSON on stdout (progress stays on stderr)")
    .action(async (manifest: string, options: CiOptions) =>
      setExit(
        await runCi(manifest, options, io).catch((error: unknown) => {
          // Input problems are exit 2 (the CLI says them); anything else means the comparison
          // could not be made, which is not a reject.
          if (error instanceof UsageError || error instanceof InvalidInputError) throw error;
          io.stderr(`harness ci: ${error instanceof Error ? error.message : String(error)}\n`);
          return EXIT_INFRASTRUCTURE;
        }),
      ),
    );
}

async function sha256OfFile(path: string): Promise<string | undefined> {
  try {
    return createHash("sha256")
      .update(await readFile(path))
      .digest("hex");
  } catch {
    return undefined;
  }
}

/** `--forge` and the four options it needs, checked before anything runs; the token from its variable. */
function forgeOf(options: CiOptions, io: CliIO) {
  const given = [options.apiUrl, options.repo, options.pr, options.tokenEnv].some(
    (v) => v !== undefined,
  );
  if (options.forge === undefined) {
    if (given)
      throw new UsageError("--api-url, --repo, --pr and --token-env go with --forge github|gitea");
    return undefined;
  }
  const missing = [
    ["--api-url", options.apiUrl],
    ["--repo", options.repo],
    ["--pr", options.pr],
    ["--token-env", options.tokenEnv],
  ].flatMap(([name, value]) => (value === undefined ? [name as string] : []));
  if (missing.length > 0)
    throw new UsageError(`--forge ${options.forge} needs ${missing.join(", ")}`);
  if (!/^[^/\s]+\/[^/\s]+$/.test(options.repo as string))
    throw new UsageError(`--repo: ${JSON.stringify(options.repo)} is not owner/name`);
  if (!/^https?:\/\//.test(options.apiUrl as string))
    throw new UsageError(`--api-url: ${JSON.stringify(options.apiUrl)} is not an http(s) URL`);
  const env = io.env ?? process.env;
  const token = env[options.tokenEnv as string];
  if (token === undefined || token === "")
    throw new UsageError(
      `--token-env: ${options.tokenEnv} is not set; set it to a token that may comment on pull requests and set commit statuses in ${options.repo}`,
    );
  // The pull request's own code runs next (a scripted agent in a worker thread sees this
  // process's environment): the token leaves it once read, and the run gets an environment
  // without it.
  delete process.env[options.tokenEnv as string];
  return {
    withoutToken: Object.fromEntries(
      Object.entries(env).filter(([name]) => name !== options.tokenEnv),
    ) as NodeJS.ProcessEnv,
    kind: options.forge,
    apiUrl: options.apiUrl as string,
    repo: options.repo as string,
    pr: options.pr as number,
    token,
  };
}

/**
 * The run's environment without the forge token or the cache's secret (both leave this process's
 * environment too: the pull request's code runs next), and the cache's key when --cache is given.
 */
async function runSecrets(
  io: CliIO,
  forge: { withoutToken: NodeJS.ProcessEnv } | undefined,
  cache: string | undefined,
  compare: typeof import("../../compare/index.js"),
): Promise<{ env: NodeJS.ProcessEnv; cacheKey?: Buffer }> {
  const env = { ...(forge?.withoutToken ?? io.env ?? process.env) };
  const withSecret = { ...env };
  delete env[compare.CACHE_KEY_VARIABLE];
  delete process.env[compare.CACHE_KEY_VARIABLE];
  if (cache === undefined) return { env };
  try {
    const { key, source } = await compare.loadTrialCacheKey(
      withSecret,
      compare.defaultStateDir(withSecret),
    );
    io.stderr(`harness ci: trial cache ${cache}, sealed with the key from ${source}\n`);
    return { env, cacheKey: key };
  } catch (error) {
    throw new UsageError(`--cache: ${(error as Error).message}`);
  }
}

async function runCi(manifestArg: string, options: CiOptions, io: CliIO): Promise<number> {
  const compare = await import("../../compare/index.js");
  const forge = forgeOf(options, io);
  const cache = options.cache === undefined ? undefined : resolve(io.cwd, options.cache);
  const secrets = await runSecrets(io, forge, cache, compare);
  // A pull request from a fork: the token cannot write to it, and its code is not the team's.
  const pull =
    forge === undefined
      ? undefined
      : await compare.pullRequestHead(forge).catch((error: unknown) => {
          throw error instanceof compare.CiForgeError
            ? new UsageError(`--pr ${forge.pr}: cannot read the pull request: ${error.message}`)
            : error;
        });
  if (forge !== undefined && pull?.fork) {
    say(
      io,
      options,
      { status: "skipped", reason: "fork" },
      `pull request #${forge.pr} comes from a fork (${pull.headRepo}): harness ci posts nothing there and runs nothing`,
    );
    return EXIT.ok;
  }
  if (
    forge !== undefined &&
    pull !== undefined &&
    options.headSha !== undefined &&
    options.headSha !== pull.sha
  ) {
    say(
      io,
      options,
      { status: "skipped", reason: "stale" },
      `pull request #${forge.pr}'s head is now ${pull.sha.slice(0, 12)}, not ${options.headSha.slice(0, 12)} (--head-sha): the run for the newer head reports; this one posts nothing and runs nothing`,
    );
    return EXIT.ok;
  }
  const prepared = await compare
    .prepareCi({
      manifestPath: resolve(io.cwd, manifestArg),
      baselineRef: options.baselineRef,
      ...(options.variant === undefined ? {} : { variant: options.variant }),
    })
    .catch((error: unknown) => {
      // What git cannot give (no repository, no such ref, no setup at the base) is the input's.
      throw error instanceof compare.CiGitError ? new UsageError(error.message) : error;
    });
  try {
    const loaded = await compare.loadManifest(prepared.manifestPath, {
      loadCatalog: compare.loadHarnessCatalog,
    });
    if (!loaded.ok)
      throw new InvalidInputError(
        manifestArg,
        loaded.problems,
        problemCount(loaded.problems.length),
      );
    const { experiment } = loaded;
    const assembled = await compare.assembleExperiment(experiment, { sameSetupsAllowed: true });
    if (!assembled.ok)
      throw new InvalidInputError(
        manifestArg,
        assembled.problems,
        problemCount(assembled.problems.length),
      );
    const [base, head] = [compare.CI_BASELINE, compare.CI_CANDIDATE].map((id) => {
      const variant = experiment.variants.find((v) => v.id === id)!;
      return { variant, assembled: assembled.variants.get(id)! };
    });
    const agentHash = (agent: (typeof experiment.variants)[number]["agent"]) =>
      agent?.kind === "module"
        ? sha256OfFile(agent.modulePath)
        : agent?.kind === "oracle"
          ? sha256OfFile(agent.patchFile)
          : Promise.resolve(agent?.kind);
    const changes = compare.setupChanges(base!.assembled, head!.assembled, {
      ...(await Promise.all([agentHash(base!.variant.agent), agentHash(head!.variant.agent)]).then(
        ([b, h]) => ({
          ...(b === undefined ? {} : { base: b }),
          ...(h === undefined ? {} : { head: h }),
        }),
      )),
    });
    io.stderr(
      `harness ci: ${prepared.variant} at ${options.baselineRef} (${prepared.baseCommit.slice(0, 12)}) against the working tree\n`,
    );
    for (const line of compare.setupChangeLines(changes)) io.stderr(`  ${line}\n`);
    const report = {
      variant: prepared.variant,
      baseRef: options.baselineRef,
      baseCommit: prepared.baseCommit,
      changes,
    };
    if (changes.same) {
      say(
        io,
        options,
        { status: "no_change", revision: changes.headRevision },
        `no change in the setup of ${prepared.variant}: the base and the working tree resolve to ${changes.headRevision}; no trial was run`,
      );
      if (forge !== undefined && pull !== undefined)
        return publish(io, forge, pull.sha, report, "no_change", options, "no change in the setup");
      return EXIT.ok;
    }
    const ran = await runLoadedExperiment(
      experiment,
      loaded,
      options,
      { ...io, env: secrets.env },
      undefined,
      cache === undefined
        ? undefined
        : { trialCache: { dir: cache, variants: [compare.CI_BASELINE], key: secrets.cacheKey! } },
    );
    if (ran.interrupted !== undefined) return ran.interrupted;
    const code = exitForCi(ran.verdict.status, options.failOn);
    if (forge === undefined || pull === undefined) return code;
    const posted = await publish(
      io,
      forge,
      pull.sha,
      { ...report, verdict: ran.verdict, report: options.reportUrl ?? `${ran.outDir}/verdict.md` },
      ran.verdict.status,
      options,
      ran.verdict.reason.split(";")[0] ?? ran.verdict.status,
    );
    return posted === EXIT.ok ? code : posted;
  } finally {
    await prepared.cleanup();
  }
}

/** A result without a verdict: a line, or with --json a small JSON document. */
function say(io: CliIO, options: CiOptions, json: Record<string, string>, text: string): void {
  io.stdout(options.json ? `${JSON.stringify(json)}\n` : `${text}\n`);
}

/** Posts the status and the comment; a forge that refuses is the run's infrastructure error. */
async function publish(
  io: CliIO,
  forge: CiForge,
  sha: string,
  input: CiCommentInput,
  status: string,
  options: CiOptions,
  summary: string,
): Promise<number> {
  const compare = await import("../../compare/index.js");
  try {
    // The status first: it is the gate, and a comment the forge refuses must not leave it unset.
    await compare.setCommitStatus(forge, sha, {
      state: compare.ciStatusState(status, options.failOn, forge.kind),
      context: `harnesslab/${input.variant}`,
      description: summary,
      ...(options.reportUrl === undefined ? {} : { targetUrl: options.reportUrl }),
    });
    const comment = await compare.upsertComment(
      forge,
      compare.ciCommentMarker(input.variant),
      compare.ciCommentBody(input),
    );
    io.stderr(
      `${comment.edited ? "edited" : "posted"} the comment on pull request #${forge.pr} of ${forge.repo}, and the status on ${sha.slice(0, 12)}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    io.stderr(`harness ci: could not post to the pull request: ${(error as Error).message}\n`);
    return EXIT_INFRASTRUCTURE;
  }
}

/** accept 0; need_more_work 0 (1 with --fail-on need_more_work); reject 1; infrastructure_error 3. */
export function exitForCi(status: string, failOn: CiOptions["failOn"]): number {
  if (status === "accept") return EXIT.ok;
  if (status === "need_more_work") return failOn === "need_more_work" ? EXIT.fail : EXIT.ok;
  if (status === "reject") return EXIT.fail;
  return EXIT_INFRASTRUCTURE;
}
