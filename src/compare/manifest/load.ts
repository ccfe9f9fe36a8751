// Loading a manifest: read, parse, check everything (schema, cross-field policy, files,
// `--trials`, compositions) and report every problem with its field path; on success,
// the one experiment model.
import { createHash } from "node:crypto";
import { lstat, readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type { z } from "zod";
import { VITEST_ENTRY } from "../../graders/index.js";
import {
  duplicateKeyProblems,
  fileReadProblem,
  type InputProblem,
  isRecord,
  jsonErrorLocation,
} from "../../shared/index.js";
import { type Experiment, HOSTS } from "../experiment.js";
import { parseAgentReference } from "./agents.js";
import { experimentFromV1, experimentFromV2, experimentWarnings } from "./build.js";
import {
  type CatalogLoader,
  type CompositionCatalog,
  type CompositionReference,
  compositionReferenceProblems,
} from "./compositions.js";
import { type PathReference, pathReferencesProblems } from "./files.js";
import { forgeDocuments, forgePolicyProblems } from "./forge.js";
import { expandMatrix, namedForMatrix, variantCount } from "./matrix.js";
import { portablePathProblem } from "./paths.js";
import { v1PolicyProblems, v2PolicyProblems } from "./policy.js";
import { problemsFromIssues, valueAt } from "./problems.js";
import { type HarnessCompareV1, harnessCompareV1Schema, V1_SCHEMA_VERSION } from "./schema-v1.js";
import { type HarnessCompareV2, harnessCompareV2Schema, V2_SCHEMA_VERSION } from "./schema-v2.js";

export const MANIFEST_SCHEMA_VERSIONS = [V1_SCHEMA_VERSION, V2_SCHEMA_VERSION] as const;

export type ManifestDocument = HarnessCompareV1 | HarnessCompareV2;

export interface LoadManifestOptions {
  /** `--trials`: run fewer trials than the manifest asks for (never more). */
  trialsOverride?: number;
  /** Compositions the harness files define, to check variants against. */
  catalog?: CompositionCatalog;
  /** Or: a callback that compiles the harness files into a catalog (used when `catalog` is absent). */
  loadCatalog?: CatalogLoader;
}

export type LoadManifestResult =
  | {
      ok: true;
      experiment: Experiment;
      /** The parsed document as written (no defaults filled in). */
      manifest: ManifestDocument;
      /** SHA-256 (hex) of the manifest file's bytes. */
      manifestHash: string;
      problems: [];
      /** Valid but questionable settings (e.g. fewer trials than the verdict needs). */
      warnings: InputProblem[];
    }
  | {
      ok: false;
      /** Absolute path of the manifest file. */
      manifestPath: string;
      problems: InputProblem[];
      warnings: InputProblem[];
    };

const FILE = "(file)";

function fail(manifestPath: string, problems: InputProblem[]): LoadManifestResult {
  return { ok: false, manifestPath, problems, warnings: [] };
}

function stringAt(root: unknown, path: ReadonlyArray<string | number>): string | undefined {
  const value = valueAt(root, path).value;
  return typeof value === "string" ? value : undefined;
}

function pathReferences(version: string, root: unknown): PathReference[] {
  const references: PathReference[] = [];
  const add = (
    path: ReadonlyArray<string | number>,
    field: string,
    kind: PathReference["kind"],
    what: string,
    regularContentsOnly = false,
  ) => {
    const value = stringAt(root, path);
    if (value !== undefined)
      references.push({
        field,
        path: value,
        kind,
        what,
        ...(regularContentsOnly ? { regularContentsOnly } : {}),
      });
  };
  if (version === V1_SCHEMA_VERSION) {
    add(["harness"], "harness", "file", "harness file");
    add(["task", "fixture"], "task.fixture", "directory", "fixture", true);
    add(["task", "prompt"], "task.prompt", "file", "prompt");
    add(["task", "grader", "contract"], "task.grader.contract", "file", "grader contract");
    return references;
  }
  const harness = valueAt(root, ["harness"]).value;
  if (Array.isArray(harness))
    for (let index = 0; index < harness.length; index += 1)
      add(["harness", index], `harness[${index}]`, "file", "harness file");
  else add(["harness"], "harness", "file", "harness file");
  const tasks = valueAt(root, ["tasks"]).value;
  if (Array.isArray(tasks))
    tasks.forEach((task, index) => {
      add(["tasks", index, "fixture"], `tasks[${index}].fixture`, "directory", "fixture", true);
      add(["tasks", index, "prompt"], `tasks[${index}].prompt`, "file", "prompt");
      add(["tasks", index, "forge", "seed"], `tasks[${index}].forge.seed`, "file", "forge seed");
      const graders = isRecord(task) && Array.isArray(task.graders) ? task.graders : [];
      graders.forEach((grader, g) => {
        if (isRecord(grader) && grader.kind === "readme-package-v1")
          add(
            ["tasks", index, "graders", g, "contract"],
            `tasks[${index}].graders[${g}].contract`,
            "file",
            "grader contract",
          );
        if (isRecord(grader) && grader.kind === "tests" && Array.isArray(grader.hidden))
          for (let h = 0; h < grader.hidden.length; h += 1)
            add(
              ["tasks", index, "graders", g, "hidden", h],
              `tasks[${index}].graders[${g}].hidden[${h}]`,
              "file",
              "hidden test",
            );
        if (isRecord(grader) && grader.kind === "forge-state")
          add(
            ["tasks", index, "graders", g, "expected"],
            `tasks[${index}].graders[${g}].expected`,
            "file",
            "expected state",
          );
      });
    });
  const variants = valueAt(root, ["variants"]).value;
  if (Array.isArray(variants))
    variants.forEach((_, index) => {
      const own = valueAt(root, ["variants", index, "harness"]).value;
      if (Array.isArray(own))
        for (let h = 0; h < own.length; h += 1)
          add(
            ["variants", index, "harness", h],
            `variants[${index}].harness[${h}]`,
            "file",
            "harness file",
          );
      else
        add(["variants", index, "harness"], `variants[${index}].harness`, "file", "harness file");
      const agent = stringAt(root, ["variants", index, "agent"]);
      if (agent === undefined) return;
      const parsed = parseAgentReference(agent);
      if (!parsed.ok || parsed.agent.kind === "nop") return;
      references.push({
        field: `variants[${index}].agent`,
        path: parsed.agent.kind === "oracle" ? parsed.agent.patch : parsed.agent.module,
        kind: "file",
        what: parsed.agent.kind === "oracle" ? "oracle patch" : "agent module",
      });
    });
  return references;
}

function compositionReferences(version: string, root: unknown): CompositionReference[] {
  const references: CompositionReference[] = [];
  if (version === V1_SCHEMA_VERSION) {
    const host = validHost(version, stringAt(root, ["runtime", "host"]));
    for (const role of ["baseline", "candidate"]) {
      const composition = stringAt(root, ["variants", role]);
      if (composition !== undefined)
        references.push({
          field: `variants.${role}`,
          composition,
          ...(host === undefined ? {} : { host: { id: host, field: "runtime.host" } }),
        });
    }
    return references;
  }
  const variants = valueAt(root, ["variants"]).value;
  const runtimeHost = validHost(version, stringAt(root, ["runtime", "host"]));
  if (Array.isArray(variants))
    variants.forEach((variant, index) => {
      const composition = stringAt(root, ["variants", index, "composition"]);
      if (composition === undefined) return;
      const ownHost = isRecord(variant) && Object.hasOwn(variant, "host");
      const host = ownHost
        ? validHost(version, stringAt(root, ["variants", index, "host"]))
        : runtimeHost;
      references.push({
        field: `variants[${index}].composition`,
        composition,
        ...(host === undefined
          ? {}
          : { host: { id: host, field: ownHost ? `variants[${index}].host` : "runtime.host" } }),
      });
    });
  return references;
}

function harnessPaths(
  root: unknown,
  at: ReadonlyArray<string | number> = ["harness"],
): string[] | undefined {
  const harness = valueAt(root, at).value;
  const list = typeof harness === "string" ? [harness] : Array.isArray(harness) ? harness : [];
  if (list.length === 0) return undefined;
  if (!list.every((item) => typeof item === "string" && portablePathProblem(item) === undefined))
    return undefined;
  return list as string[];
}

/**
 * Each variant's composition against the catalog of its harness files (its own `harness`, or the
 * experiment's): one catalog per set of files, each set compiled once. A set with a problem of
 * its own (a missing file) is not compiled.
 */
async function compositionProblems(
  root: unknown,
  version: string,
  manifestDir: string,
  found: readonly InputProblem[],
  options: LoadManifestOptions,
): Promise<InputProblem[]> {
  if (!options.catalog && !options.loadCatalog) return [];
  const problems: InputProblem[] = [];
  const catalogs = new Map<string, CompositionCatalog | undefined>();
  const catalogOf = async (field: string, at: ReadonlyArray<string | number>) => {
    const paths = harnessPaths(root, at);
    if (paths === undefined) return undefined;
    if (found.some((p) => p.path === field || p.path.startsWith(`${field}[`))) return undefined;
    const files = paths.map((file) => resolve(manifestDir, file));
    const key = JSON.stringify(files);
    if (catalogs.has(key)) return { files, catalog: catalogs.get(key) };
    // The caller's catalog stands for the experiment's files (tests pass one without files).
    let catalog = field === "harness" ? options.catalog : undefined;
    if (catalog === undefined && options.loadCatalog !== undefined) {
      const loaded = await options.loadCatalog(files);
      if (loaded.ok) catalog = loaded.catalog;
      else
        problems.push(
          ...loaded.problems.map((p) => ({ ...p, path: field === "harness" ? p.path : field })),
        );
    }
    catalogs.set(key, catalog);
    return { files, catalog };
  };
  for (const reference of compositionReferences(version, root)) {
    const index = /^variants\[(\d+)\]/.exec(reference.field)?.[1];
    const own =
      index !== undefined &&
      valueAt(root, ["variants", Number(index), "harness"]).value !== undefined;
    const set = own
      ? await catalogOf(`variants[${index}].harness`, ["variants", Number(index), "harness"])
      : await catalogOf("harness", ["harness"]);
    if (set?.catalog !== undefined)
      problems.push(
        ...compositionReferenceProblems([reference], set.files, manifestDir, set.catalog),
      );
  }
  return problems;
}

function trialsOverrideProblems(root: unknown, override: number | undefined): InputProblem[] {
  if (override === undefined) return [];
  if (!Number.isInteger(override) || override < 1)
    return [
      { path: "--trials", message: `${override} is not allowed; expected a positive integer` },
    ];
  const count = valueAt(root, ["trials", "count"]).value;
  // An invalid count is reported on its own field; comparing with it would only add noise.
  if (typeof count === "number" && Number.isInteger(count) && count >= 1 && override > count)
    return [
      {
        path: "--trials",
        message: `${override} is more than trials.count (${count}) in the manifest; --trials may only lower the count`,
      },
    ];
  return [];
}

/**
 * The document a run records: as written (its matrix, not the expansion). The expanded one was
 * checked; the written one differs only in `variants`, so it parses too, else the checked one.
 */
function recordedDocument(
  schema: z.ZodType,
  written: unknown,
  checked: ManifestDocument,
): ManifestDocument {
  const parsed = schema.safeParse(written);
  return parsed.success ? (parsed.data as ManifestDocument) : checked;
}

/** A v2 document lists 2 to 16 variants once its matrix is expanded. */
function variantCountProblems(root: unknown): InputProblem[] {
  const count = variantCount(root);
  const hasMatrix = isRecord(root) && Object.hasOwn(root, "matrix");
  if (count === undefined)
    return isRecord(root) && !Object.hasOwn(root, "variants")
      ? [{ path: "variants", message: "is required: list the variants, or give a matrix" }]
      : [];
  if (count >= 2 && count <= 16) return [];
  return [
    {
      path: "variants",
      message: `expected 2 to 16 variants${hasMatrix ? ` (with the matrix's, there are ${count})` : ""}`,
    },
  ];
}

/** The runtime host when it is valid for the version; a wrong host is reported on its own. */
function validHost(version: string, host: string | undefined): string | undefined {
  if (host === undefined) return undefined;
  if (version === V1_SCHEMA_VERSION) return host === "qoder" ? host : undefined;
  return (HOSTS as readonly string[]).includes(host) ? host : undefined;
}

/** Extra guidance for fields whose plain "expected …" message does not say where to go. */
const V1_HINTS: Record<string, string> = {
  "runtime.host":
    "harness-compare.v1 runs on qoder only; write a harness-compare.v2 manifest for other hosts",
  "trials.order": 'harness-compare.v1 always shuffles; harness-compare.v2 also allows "sequential"',
};

function withHints(problems: InputProblem[], hints: Record<string, string>): InputProblem[] {
  return problems.map((problem) => {
    const hint = hints[problem.path];
    return hint === undefined
      ? problem
      : { path: problem.path, message: `${problem.message} (${hint})` };
  });
}

function dedupe(problems: readonly InputProblem[]): InputProblem[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.path}\u0000${problem.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

async function readPrompts(
  experimentPrompts: ReadonlyArray<{ field: string; file: string }>,
): Promise<{ prompts: Map<string, string>; problems: InputProblem[] }> {
  const prompts = new Map<string, string>();
  const problems: InputProblem[] = [];
  for (const { field, file } of experimentPrompts) {
    if (prompts.has(file)) continue;
    try {
      prompts.set(file, utf8.decode(await readFile(file)));
    } catch (error) {
      const reason =
        error instanceof TypeError
          ? "is not UTF-8 text"
          : `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`;
      problems.push({ path: field, message: `${file} ${reason}` });
    }
  }
  return { prompts, problems };
}

/**
 * Loads a `harness-compare.v1` or `.v2` manifest. Never throws for bad input: every
 * problem found (schema, policy, files, `--trials`, compositions) comes back at once,
 * each with its JSON path.
 */
export async function loadManifest(
  path: string,
  options: LoadManifestOptions = {},
): Promise<LoadManifestResult> {
  const manifestPath = resolve(path);
  const manifestDir = dirname(manifestPath);
  let bytes: Buffer;
  try {
    bytes = await readFile(manifestPath);
  } catch (error) {
    return fail(manifestPath, [
      { path: FILE, message: fileReadProblem(error, "a manifest JSON file") },
    ]);
  }
  const manifestHash = createHash("sha256").update(bytes).digest("hex");
  let text: string;
  try {
    // Editors on Windows may prepend a byte-order mark; it is not part of the JSON.
    text = utf8.decode(bytes).replace(/^\uFEFF/, "");
  } catch {
    return fail(manifestPath, [{ path: FILE, message: "is not UTF-8 text" }]);
  }
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    // A setup, not an experiment: the commonest first mistake.
    if (
      manifestPath.endsWith(".harness") ||
      /^\s*(component|composition|plugin|binding)\s/m.test(text)
    )
      return fail(manifestPath, [
        {
          path: FILE,
          message:
            'this is a .harness source (an agent setup), not an experiment; pass an experiment manifest (JSON) that names it under "harness" (see docs/manifest.md, or `harness init` for a working one)',
        },
      ]);
    return fail(manifestPath, [
      { path: jsonErrorLocation(text), message: `not valid JSON: ${message}` },
    ]);
  }
  const duplicates = duplicateKeyProblems(text);
  if (duplicates.length > 0) return fail(manifestPath, duplicates);
  if (!isRecord(root))
    return fail(manifestPath, [
      { path: "(root)", message: "expected a JSON object (a harness-compare manifest)" },
    ]);
  const version = root.schemaVersion;
  if (version !== V1_SCHEMA_VERSION && version !== V2_SCHEMA_VERSION) {
    const allowed = MANIFEST_SCHEMA_VERSIONS.map((v) => JSON.stringify(v)).join(", ");
    return fail(manifestPath, [
      {
        path: "schemaVersion",
        message:
          version === undefined
            ? `is required; expected one of ${allowed}`
            : `${JSON.stringify(version)} is not supported; expected one of ${allowed}`,
      },
    ]);
  }

  const schema: z.ZodType =
    version === V1_SCHEMA_VERSION ? harnessCompareV1Schema : harnessCompareV2Schema;
  // The document as written is what a run records; everything is checked on its expansion.
  const written = root;
  const matrix = version === V2_SCHEMA_VERSION ? expandMatrix(root) : undefined;
  if (matrix !== undefined) root = matrix.root;
  const parsed = schema.safeParse(root);
  const problems: InputProblem[] = [...(matrix?.problems ?? [])];
  if (matrix?.expandedAll) problems.push(...variantCountProblems(root));
  if (!parsed.success) {
    const fromSchema = problemsFromIssues(parsed.error.issues, schema, root);
    problems.push(
      ...(version === V1_SCHEMA_VERSION ? withHints(fromSchema, V1_HINTS) : fromSchema),
    );
  }
  problems.push(
    ...(version === V1_SCHEMA_VERSION
      ? v1PolicyProblems(root)
      : [...v2PolicyProblems(root), ...forgePolicyProblems(root)]),
  );
  problems.push(...(await pathReferencesProblems(manifestDir, pathReferences(version, root))));
  problems.push(...trialsOverrideProblems(root, options.trialsOverride));

  problems.push(...(await compositionProblems(root, version, manifestDir, problems, options)));

  // The forge documents are read once the manifest itself is sound: their problems name files
  // the manifest points at, which must exist first.
  const forge =
    problems.length === 0 && parsed.success && version === V2_SCHEMA_VERSION
      ? await forgeDocuments(parsed.data as HarnessCompareV2, manifestDir)
      : undefined;
  if (forge !== undefined) problems.push(...forge.problems);
  const expanded = matrix?.expanded ?? new Map<number, string>();
  if (problems.length > 0 || !parsed.success)
    return fail(manifestPath, dedupe(namedForMatrix(problems, expanded)));

  const document = parsed.data as ManifestDocument;
  const promptFields =
    document.schemaVersion === V1_SCHEMA_VERSION
      ? [{ field: "task.prompt", file: resolve(manifestDir, document.task.prompt) }]
      : document.tasks.map((task, index) => ({
          field: `tasks[${index}].prompt`,
          file: resolve(manifestDir, task.prompt),
        }));
  const read = await readPrompts(promptFields);
  if (read.problems.length > 0) return fail(manifestPath, read.problems);
  const context = {
    manifestPath,
    manifestDir,
    trialCount: options.trialsOverride ?? document.trials.count,
    prompts: read.prompts,
    ...(forge === undefined ? {} : { forgeStates: forge.states, expectedStates: forge.expected }),
    variantFields: new Map([...expanded].map(([index, id]) => [index, `matrix[${id}]`])),
  };
  const experiment =
    document.schemaVersion === V1_SCHEMA_VERSION
      ? experimentFromV1(document, context)
      : experimentFromV2(document, context);
  const runners = await testRunnerProblems(experiment);
  if (runners.length > 0) return fail(manifestPath, runners);
  return {
    ok: true,
    experiment,
    manifest: recordedDocument(schema, written, document),
    manifestHash,
    problems: [],
    warnings: experimentWarnings(experiment),
  };
}

/**
 * A tests grader whose runner is not in its task's fixture: every trial would fail its tests for
 * a reason that is the experiment's, not the agent's. (node's test runner is Node itself.)
 */
async function testRunnerProblems(experiment: Experiment): Promise<InputProblem[]> {
  const problems: InputProblem[] = [];
  for (const task of experiment.tasks)
    for (const [index, grader] of task.graders.entries()) {
      if (grader.kind !== "tests" || grader.runner !== "vitest") continue;
      const entry = grader.argv?.[0] ?? VITEST_ENTRY;
      const found = await lstat(resolve(task.fixtureDir, entry)).then(
        (info) => info.isFile(),
        () => false,
      );
      if (!found)
        problems.push({
          path: `${task.manifestField}.graders[${index}]${grader.argv === undefined ? "" : ".argv[0]"}`,
          message: `the vitest runner starts ${entry}, which is not a file in the fixture of task ${task.id}: install vitest into the fixture (npm ci --ignore-scripts --no-bin-links there), or give argv the entry's path`,
        });
    }
  return problems;
}
