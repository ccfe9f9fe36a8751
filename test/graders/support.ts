import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Grade, GradeContext, ReadmePackageContract } from "../../src/graders/index.js";
import { loadReadmeContract } from "../../src/graders/index.js";
import { testSandbox } from "../support/sandbox.js";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const fixtureDir = join(repoRoot, "examples/readme-compare/fixture");
export const contractPath = join(repoRoot, "examples/readme-compare/contract.json");
const goodReadmePath = join(repoRoot, "test/graders/fixtures/good-readme.md");

export function goodReadme(): Promise<string> {
  return readFile(goodReadmePath, "utf8");
}

export function exampleContract(): Promise<ReadmePackageContract> {
  return loadReadmeContract(contractPath);
}

const created: string[] = [];

/** Removes every temporary directory made by the helpers (call from afterEach/afterAll). */
export async function cleanupTemporaryDirs(): Promise<void> {
  await Promise.all(created.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

export async function temporaryDir(prefix = "hl-graders-"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export interface TrialOptions {
  /** README.md content; `null` writes no README. */
  readme: string | null;
  changedFiles?: string[];
  expectedFiles?: string[];
  /** Extra files to write into the copy (relative path → content), e.g. a broken test. */
  files?: Record<string, string>;
}

/** A fresh copy of the example fixture with a README written into it, and its grade context. */
export async function makeTrial(options: TrialOptions): Promise<GradeContext> {
  const root = await temporaryDir("hl-readme-trial-");
  await cp(fixtureDir, root, { recursive: true });
  if (options.readme !== null) await writeFile(join(root, "README.md"), options.readme);
  for (const [path, content] of Object.entries(options.files ?? {}))
    await writeFile(join(root, path), content);
  return {
    trialRoot: root,
    changedFiles: options.changedFiles ?? ["README.md"],
    expectedFiles: options.expectedFiles ?? ["README.md"],
    finalText: "",
    scratchDir: await temporaryDir("hl-readme-scratch-"),
    sandbox: await testSandbox(),
  };
}

export function failedCheckIds(grade: Grade): string[] {
  return grade.checks.filter((c) => !c.passed).map((c) => c.id);
}

export function check(grade: Grade, id: string) {
  const found = grade.checks.find((c) => c.id === id);
  if (found === undefined) throw new Error(`grade has no check ${id}`);
  return found;
}

/** Replaces the body of the README's Quick Start code block. */
export function withQuickStart(readme: string, code: string): string {
  const start = readme.indexOf("## Quick Start");
  const open = readme.indexOf("```js\n", start);
  const close = readme.indexOf("\n```", open + 6);
  if (start === -1 || open === -1 || close === -1)
    throw new Error("README has no Quick Start block");
  return `${readme.slice(0, open)}\`\`\`js\n${code}${readme.slice(close)}`;
}

/** Replaces text that must be present exactly (guards helper drift against the good README). */
export function replaceExact(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`text does not contain ${JSON.stringify(from)}`);
  return text.split(from).join(to);
}
