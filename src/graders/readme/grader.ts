import { randomBytes } from "node:crypto";
import { lstat, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { commandEnvironment } from "../../sandbox/index.js";
import { npmArgv } from "../../shared/index.js";
import { type CommandEvidence, commandEvidence, describeOutcome } from "../output.js";
import { evaluateScope } from "../scope.js";
import { resolveInsideTrial } from "../trial-paths.js";
import type { Grade, GradeCheck, GradeContext, Grader } from "../types.js";
import { weightedScore } from "../types.js";
import {
  checkBehaviorEvidence,
  checkClaims,
  checkInstallation,
  checkPublicApi,
  checkStructure,
  type ExportProbe,
  makeCheck,
  README_PACKAGE_WEIGHTS,
} from "./checks.js";
import type { ReadmePackageContract } from "./contract.js";
import { type ImportedName, packageImports } from "./imported-names.js";
import { checkLinks } from "./links.js";
import {
  parseReadme,
  type ReadmeCodeBlock,
  type ReadmeDocument,
  sectionCodeBlocks,
} from "./markdown.js";
import { displaySandboxArgv, type PermissionModelRun, runPermissionModelNode } from "./sandbox.js";
import { type ScreenFinding, screenExample } from "./screen.js";

export const README_PACKAGE_GRADER_ID = "readme-package-v1";

/** The heading whose section holds the examples that must run. */
const QUICK_START_HEADING = "Quick Start";

/** A README larger than this is not graded (it is not a README a person reads). */
const MAX_README_BYTES = 2 * 1024 * 1024;

export interface ReadmePackageGraderOptions {
  /** Per Quick Start block (default 30 s). */
  quickStartTimeoutMs?: number;
  /** For `npm test` (default 60 s). */
  packageTestTimeoutMs?: number;
  /** For the process that reads the package's exports (default 30 s). */
  exportProbeTimeoutMs?: number;
  /** Node binary for the sandboxed runs (default: the one running the harness). */
  nodeExecutable?: string;
}

interface PackageInfo {
  name?: string;
  problem?: string;
}

async function readPackageInfo(realRoot: string): Promise<PackageInfo> {
  const located = await resolveInsideTrial(realRoot, "package.json");
  if (!located.ok) return { problem: `package.json: ${located.message}` };
  try {
    // Parsing JSON runs no code; the file is agent-reachable data and is treated as such.
    const parsed: unknown = JSON.parse(await readFile(located.absolute, "utf8"));
    const name = (parsed as { name?: unknown } | null)?.name;
    if (typeof name !== "string" || !/^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name))
      return { problem: "package.json has no valid name" };
    return { name };
  } catch (error) {
    return { problem: `package.json is not valid JSON: ${(error as Error).message}` };
  }
}

const PROBE_MARKER = "@@harness-exports@@";

/**
 * The export-reading program, run in a separate permission-model process: the package
 * entry is agent-reachable code and must never be imported into the grader itself.
 * It imports the package by its own name, so Node resolves it through `exports`. The package's
 * code runs in the same process and could print a report of its own; the report the grader
 * takes carries a nonce the probe reads from stdin before that code loads, so it cannot know it.
 */
function exportProbeSource(packageName: string): string {
  return [
    'import { readFileSync } from "node:fs";',
    'const nonce = readFileSync(0, "utf8").trim();',
    "const write = process.stdout.write.bind(process.stdout);",
    `const report = (value) => write(${JSON.stringify(PROBE_MARKER)} + nonce + JSON.stringify(value) + "\\n", () => process.exit(0));`,
    "try {",
    `  const namespace = await import(${JSON.stringify(packageName)});`,
    "  report({ ok: true, exports: Object.keys(namespace).sort() });",
    "} catch (error) {",
    '  report({ ok: false, error: (error?.code ? error.code + ": " : "") + (error?.message ?? String(error)) });',
    "}",
  ].join("\n");
}

/** The probe's one report; none, or more than one, is no answer. */
function parseProbe(stdout: string, nonce: string): ExportProbe | undefined {
  const marker = `${PROBE_MARKER}${nonce}`;
  const lines = stdout.split("\n").filter((l) => l.startsWith(marker));
  if (lines.length !== 1) return undefined;
  try {
    const value = JSON.parse(lines[0]!.slice(marker.length)) as {
      ok?: unknown;
      exports?: unknown;
      error?: unknown;
    };
    const exports = Array.isArray(value.exports)
      ? value.exports.filter((e): e is string => typeof e === "string")
      : [];
    return {
      ok: value.ok === true,
      exports,
      ...(typeof value.error === "string" ? { error: value.error } : {}),
    };
  } catch {
    return undefined;
  }
}

interface QuickStartBlockEvidence {
  block: number;
  line: number;
  lang: string;
  /** Whether the block sits under the Quick Start heading (every runnable example is run). */
  quickStart: boolean;
  passed: boolean;
  problem?: string;
  screen: ScreenFinding[];
  run?: CommandEvidence;
}

interface Session {
  context: GradeContext;
  realRoot: string;
  node: PermissionModelRun;
  replacements: Map<string, string>;
  packageInfo: PackageInfo;
}

/** Fence languages whose blocks are JavaScript or TypeScript, whose imports are checked. */
const SCRIPT_LANGUAGES = new Set([
  "js",
  "javascript",
  "mjs",
  "cjs",
  "jsx",
  "ts",
  "typescript",
  "mts",
  "cts",
  "tsx",
]);

/** A name an example imports from the package, with the README line it is on. */
interface ExampleImport extends ImportedName {
  /** 1-based README line. */
  readmeLine: number;
}

/** Every name the README's script examples import from the package entry. */
function exampleImports(
  document: ReadmeDocument,
  contract: ReadmePackageContract,
  packageName: string | undefined,
): ExampleImport[] {
  if (packageName === undefined) return [];
  const languages = new Set([
    ...SCRIPT_LANGUAGES,
    ...contract.exampleLanguages.map((l) => l.toLowerCase()),
  ]);
  const found: ExampleImport[] = [];
  for (const block of document.codeBlocks) {
    if (block.lang === null || !languages.has(block.lang)) continue;
    for (const name of packageImports(block.value, packageName).names)
      found.push({ ...name, readmeLine: block.line + name.line });
  }
  return found;
}

/** Writes a file that must not exist yet, refusing to follow a symlink planted under that name. */
async function writeNewFile(path: string, content: string): Promise<string | undefined> {
  try {
    await writeFile(path, content, { flag: "wx" });
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "EEXIST"
      ? `${path.split(/[\\/]/).pop()} already exists in the repository`
      : `could not write the example file (${code ?? String(error)})`;
  }
}

/**
 * The `quick-start` check: the Quick Start section must hold at least one example in an allowed
 * language, and every example in an allowed language anywhere in the README must run and exit 0
 * (an example outside the Quick Start that fails is as misleading as one inside it).
 */
async function gradeQuickStart(
  document: ReadmeDocument,
  contract: ReadmePackageContract,
  session: Session,
  timeoutMs: number,
): Promise<GradeCheck> {
  const section = sectionCodeBlocks(document, QUICK_START_HEADING);
  if (section === null)
    return makeCheck("quick-start", false, `no "${QUICK_START_HEADING}" heading`, { blocks: [] });
  const languages = new Set(contract.exampleLanguages.map((l) => l.toLowerCase()));
  const isRunnable = (b: ReadmeCodeBlock) => b.lang !== null && languages.has(b.lang);
  const inQuickStart = new Set(section.blocks.filter(isRunnable));
  const runnable = document.codeBlocks.filter(isRunnable);
  const skipped = section.blocks
    .filter((b) => !inQuickStart.has(b))
    .map((b) => ({ line: b.line, lang: b.lang }));
  if (inQuickStart.size === 0)
    return makeCheck(
      "quick-start",
      false,
      `no ${[...languages].join("/")} code block under "${section.heading.text}" (line ${section.heading.line})`,
      { heading: section.heading.text, blocks: [], skipped },
    );
  const blocks: QuickStartBlockEvidence[] = [];
  for (const [index, block] of runnable.entries()) {
    blocks.push(await runExample(block, index + 1, inQuickStart.has(block), session, timeoutMs));
  }
  const failed = blocks.filter((b) => !b.passed);
  const where = (b: QuickStartBlockEvidence) =>
    `${b.quickStart ? "" : "example outside Quick Start, "}block ${b.block} (README line ${b.line})`;
  return makeCheck(
    "quick-start",
    failed.length === 0,
    failed.length === 0
      ? `${blocks.length} example block(s) ran and exited 0 (${inQuickStart.size} under Quick Start)`
      : failed.map((b) => `${where(b)}: ${b.problem}`).join("; "),
    { heading: section.heading.text, blocks, skipped },
  );
}

/** Screens one example, writes it into the trial, runs it contained, and removes it. */
async function runExample(
  block: ReadmeCodeBlock,
  number: number,
  quickStart: boolean,
  session: Session,
  timeoutMs: number,
): Promise<QuickStartBlockEvidence> {
  const evidence: QuickStartBlockEvidence = {
    block: number,
    line: block.line,
    lang: block.lang ?? "",
    quickStart,
    passed: false,
    screen: [],
  };
  const screen = screenExample(block.value, session.packageInfo.name);
  evidence.screen = screen.findings;
  if (!screen.ok) {
    evidence.problem = `rejected before running: ${screen.findings
      .map((f) => `${f.message} (line ${f.line})`)
      .join("; ")}`;
    return evidence;
  }
  const fileName = `.harness-example-${number}.mjs`;
  const filePath = join(session.realRoot, fileName);
  const writeProblem = await writeNewFile(filePath, block.value);
  if (writeProblem !== undefined) {
    evidence.problem = writeProblem;
    return evidence;
  }
  try {
    const result = await runPermissionModelNode([fileName], { ...session.node, timeoutMs });
    evidence.run = commandEvidence(result, session.replacements);
    evidence.run.argv = displaySandboxArgv(evidence.run.argv);
    evidence.passed = !result.timedOut && !result.aborted && result.exitCode === 0;
    if (!evidence.passed) {
      const thrown = evidence.run.stderrTail.match(/^\w*(?:Error|Exception)\b[^\n]*/m)?.[0];
      evidence.problem = `${describeOutcome(result, timeoutMs)}${thrown ? `: ${thrown.slice(0, 300)}` : ""}`;
    }
  } finally {
    await rm(filePath, { force: true });
  }
  return evidence;
}

async function probeExports(
  session: Session,
  timeoutMs: number,
): Promise<{ probe: ExportProbe; evidence: unknown }> {
  const name = session.packageInfo.name;
  if (name === undefined)
    return {
      probe: { ok: false, exports: [], error: session.packageInfo.problem ?? "no package name" },
      evidence: null,
    };
  const nonce = randomBytes(16).toString("hex");
  const result = await runPermissionModelNode(
    ["--input-type=module", "--eval", exportProbeSource(name)],
    { ...session.node, timeoutMs, input: `${nonce}\n` },
  );
  const evidence = commandEvidence(result, session.replacements);
  // The probe source itself is ours and long; keep evidence about the outcome, not our code.
  evidence.argv = displaySandboxArgv(evidence.argv).map((arg) =>
    arg.includes(PROBE_MARKER) ? "<export probe>" : arg,
  );
  const parsed = parseProbe(result.stdout, nonce);
  if (parsed !== undefined) return { probe: parsed, evidence };
  return {
    probe: { ok: false, exports: [], error: describeOutcome(result, timeoutMs) },
    evidence,
  };
}

async function gradePackageTests(session: Session, timeoutMs: number): Promise<GradeCheck> {
  const argv = npmArgv(["test"]);
  const result = await session.context.sandbox.run(argv, {
    cwd: session.realRoot,
    writable: [session.realRoot],
    protect: [join(session.realRoot, ".git")],
    env: commandEnvironment(),
    timeoutMs,
    maxOutputBytes: 64 * 1024,
    privateDir: session.context.scratchDir,
    ...(session.context.signal === undefined ? {} : { signal: session.context.signal }),
  });
  const passed = !result.timedOut && !result.aborted && result.exitCode === 0;
  return makeCheck(
    "package-tests",
    passed,
    `npm test ${describeOutcome(result, timeoutMs)}`,
    commandEvidence(result, session.replacements),
  );
}

function finish(checks: GradeCheck[]): Grade {
  return {
    grader: README_PACKAGE_GRADER_ID,
    checks,
    score: weightedScore(checks),
    passed: checks.every((c) => c.passed),
  };
}

/**
 * The `readme-package-v1` grader (docs/graders.md). Agent-written code (the README's examples,
 * the package entry, the package's tests) only ever runs in child processes; examples and
 * the export probe run under Node's permission model with read-only access to the trial.
 */
export function createReadmePackageGrader(
  contract: ReadmePackageContract,
  options: ReadmePackageGraderOptions = {},
): Grader {
  const quickStartTimeoutMs = options.quickStartTimeoutMs ?? 30_000;
  const packageTestTimeoutMs = options.packageTestTimeoutMs ?? 60_000;
  const exportProbeTimeoutMs = options.exportProbeTimeoutMs ?? 30_000;
  const nodeExecutable = options.nodeExecutable ?? process.execPath;
  return {
    id: README_PACKAGE_GRADER_ID,
    async grade(context: GradeContext): Promise<Grade> {
      const scope = evaluateScope(
        context.changedFiles,
        context.expectedFiles,
        "exact",
        README_PACKAGE_WEIGHTS.scope,
      );
      const realRoot = await realpath(context.trialRoot);
      const readme = await resolveInsideTrial(realRoot, "README.md");
      const stats = readme.ok ? await lstat(readme.absolute) : undefined;
      if (!readme.ok || stats === undefined || !stats.isFile() || stats.size > MAX_README_BYTES) {
        const why = !readme.ok
          ? readme.message.replace(/^README\.md /, "")
          : !stats?.isFile()
            ? "is not a regular file"
            : `is larger than ${MAX_README_BYTES} bytes`;
        // Without a README nothing else can be judged; only scope is reported beside it.
        return finish([scope, makeCheck("readme-exists", false, `README.md ${why}`)]);
      }
      const document = parseReadme(await readFile(readme.absolute, "utf8"));
      const packageInfo = await readPackageInfo(realRoot);
      const session: Session = {
        context,
        realRoot,
        packageInfo,
        node: {
          nodeExecutable,
          realRoot,
          timeoutMs: quickStartTimeoutMs,
          sandbox: context.sandbox,
          privateDir: context.scratchDir,
          ...(context.signal === undefined ? {} : { signal: context.signal }),
        },
        replacements: new Map([
          [context.trialRoot, "<trial-root>"],
          [realRoot, "<trial-root>"],
        ]),
      };
      const structure = checkStructure(document, contract);
      const links = await checkLinks(document.links, realRoot, contract.forbidRemoteLinks);
      const linksCheck = makeCheck(
        "links",
        links.failures.length === 0,
        links.failures.length === 0
          ? `${links.checked} local link(s) resolve${links.remote > 0 ? `, ${links.remote} remote allowed` : ""}`
          : links.failures.map((f) => `${f.url} (line ${f.line}): ${f.problem}`).join("; "),
        links,
      );
      const installation = checkInstallation(document, packageInfo.name);
      const exportsProbe = await probeExports(session, exportProbeTimeoutMs);
      const publicApi = checkPublicApi(
        document,
        contract,
        exportsProbe.probe,
        exportsProbe.evidence,
        exampleImports(document, contract, packageInfo.name),
      );
      const behavior = checkBehaviorEvidence(document, contract);
      const quickStart = await gradeQuickStart(document, contract, session, quickStartTimeoutMs);
      const packageTests = await gradePackageTests(session, packageTestTimeoutMs);
      const claims = checkClaims(document, contract);
      // An aborted grading is not a verdict on the agent: let the caller classify it.
      context.signal?.throwIfAborted();
      return finish([
        scope,
        structure,
        linksCheck,
        installation,
        publicApi,
        behavior,
        quickStart,
        packageTests,
        claims,
      ]);
    },
  };
}
