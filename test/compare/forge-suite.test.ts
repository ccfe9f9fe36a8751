// The shipped forge suite (examples/forge-suite): its shape (20 tasks in four tiers, prompts that
// make the agent find its target), its oracle solving every task on both arms through
// `compare run`, and the nop agent passing none of them.
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HarnessCompareV2, loadManifest } from "../../src/compare/index.js";
import { renderTerminalSummary } from "../../src/report/index.js";
import type { RepoState } from "../../src/scoring/index.js";
import { runManifest } from "../support/experiment.js";

const SUITE = fileURLToPath(new URL("../../examples/forge-suite/", import.meta.url));

let base: string;
let manifest: HarnessCompareV2;
let seed: RepoState;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-forge-suite-"));
  manifest = JSON.parse(await readFile(join(SUITE, "experiment.json"), "utf8"));
  seed = JSON.parse(await readFile(join(SUITE, "seed.json"), "utf8"));
});
afterAll(() => rm(base, { recursive: true, force: true }));

describe("the forge suite's tasks", () => {
  it("has 20 tasks: 4 read, 6 single mutation, 6 find-then-act, 4 multi-step", () => {
    const tiers = manifest.tasks.map((task) => task.tier);
    expect(tiers).toHaveLength(20);
    expect({
      read: tiers.filter((t) => t === "read").length,
      single: tiers.filter((t) => t === "single-mutation").length,
      find: tiers.filter((t) => t === "find-then-act").length,
      multi: tiers.filter((t) => t === "multi-step").length,
    }).toEqual({ read: 4, single: 6, find: 6, multi: 4 });
  });

  it("has a seed in the benchmark's spirit: labels, a dozen issues open and closed, three pull requests, a review, several authors", () => {
    expect(seed.labels?.length).toBeGreaterThanOrEqual(5);
    expect(seed.issues?.length).toBe(12);
    expect(new Set(seed.issues?.map((i) => i.state))).toEqual(new Set(["open", "closed"]));
    expect(seed.pullRequests?.length).toBe(3);
    expect(seed.pullRequests?.some((p) => (p.reviews ?? []).length > 0)).toBe(true);
    const authors = new Set(
      [...(seed.issues ?? []), ...(seed.pullRequests ?? [])].flatMap((e) =>
        (e.comments ?? []).map((c) => c.author),
      ),
    );
    expect(authors.size).toBeGreaterThanOrEqual(3);
  });

  it("never quotes a find-then-act target's exact title in its prompt", async () => {
    const titles = new Map(
      [...(seed.issues ?? []), ...(seed.pullRequests ?? [])].map((e) => [e.number, e.title]),
    );
    const findTasks = manifest.tasks.filter((task) => task.tier === "find-then-act");
    expect(findTasks).toHaveLength(6);
    for (const task of findTasks) {
      const prompt = (await readFile(join(SUITE, task.prompt), "utf8")).toLowerCase();
      const grader = task.graders.find((g) => g.kind === "forge-state");
      const targets = new Set(
        (grader?.kind === "forge-state" ? (grader.changes ?? []) : []).flatMap((change) =>
          "number" in change ? [change.number] : [],
        ),
      );
      expect(targets.size, task.id).toBeGreaterThan(0);
      for (const number of targets) {
        expect(prompt, `${task.id} quotes #${number}'s title`).not.toContain(
          titles.get(number)?.toLowerCase(),
        );
        expect(prompt, `${task.id} names #${number}`).not.toMatch(new RegExp(`#${number}\\b`));
      }
    }
  });

  it("validates as shipped, the Claude Code experiment too", async () => {
    for (const name of ["experiment.json", "experiment.claude.json"]) {
      const loaded = await loadManifest(join(SUITE, name));
      expect(loaded.ok ? [] : loaded.problems, name).toEqual([]);
    }
  });
});

describe("the forge suite run offline", () => {
  it("ends in a verdict with the oracle passing all 20 tasks on both arms, and prints a per-tier table", async () => {
    const { verdict, outDir } = await runManifest(join(SUITE, "experiment.json"), {
      outDir: join(base, "suite-out"),
    });
    for (const variant of ["mcp", "http"]) {
      const trials = verdict.trials.filter((t) => t.variant === variant);
      expect(trials.map((t) => [t.task, t.outcome]).filter(([, o]) => o !== "passed")).toEqual([]);
      expect(trials).toHaveLength(20);
    }
    expect(["accept", "reject", "need_more_work"]).toContain(verdict.status);
    const summary = renderTerminalSummary(verdict, outDir);
    for (const tier of ["read", "single-mutation", "find-then-act", "multi-step"])
      expect(summary).toMatch(new RegExp(`^tier ${tier}: mcp \\d+/\\d+ .* · http \\d+/\\d+`, "m"));
    const md = await readFile(join(outDir, "verdict.md"), "utf8");
    expect(md).toContain("## Per tier");
  });

  it("gives the nop agent no task, mutation or read", async () => {
    const dir = join(base, "nop");
    await cp(SUITE, dir, { recursive: true });
    await writeFile(
      join(dir, "experiment.json"),
      JSON.stringify({
        ...manifest,
        variants: [
          { id: "nop-mcp", composition: "scripted-mcp", agent: "nop" },
          { id: "nop-http", composition: "scripted-http", agent: "nop" },
        ],
        baseline: "nop-mcp",
      }),
    );
    const { verdict } = await runManifest(join(dir, "experiment.json"), {
      outDir: join(base, "nop-out"),
    });
    expect(verdict.trials).toHaveLength(40);
    expect(verdict.trials.filter((t) => t.outcome !== "failed")).toEqual([]);
    const mutation = verdict.trials.find((t) => t.task === "mark-duplicate");
    expect(mutation?.explanation).toMatch(/^failed checks: forge-state: not done: issue #5/);
  });
});
