// What a regrade changed, computed from the trials of the old and new verdicts alone.
import { describe, expect, it } from "vitest";
import {
  changeDirection,
  formatRegradeReport,
  type RegradeTrial,
  summarizeRegrade,
} from "../../src/compare/index.js";
import { formatChangeLine, formatTrialChanges } from "../../src/report/index.js";

type Outcome = RegradeTrial["outcome"];

function trial(
  artifactDir: string,
  outcome: Outcome,
  score: number | null,
  explanation = outcome === "passed" ? "all graders passed" : "failed checks: check/exit-code",
): RegradeTrial {
  return { artifactDir, variant: artifactDir.split("/")[0] ?? "", outcome, score, explanation };
}

/** Five baseline trials (3 passed) and five candidate trials (1 passed). */
function recorded(): RegradeTrial[] {
  return [
    trial("baseline/t/trial-001", "passed", 100),
    trial("baseline/t/trial-002", "passed", 100),
    trial("baseline/t/trial-003", "passed", 100),
    trial("baseline/t/trial-004", "failed", 40),
    trial("baseline/t/trial-005", "failed", 40),
    trial("candidate/t/trial-001", "passed", 100),
    trial("candidate/t/trial-002", "failed", 50),
    trial("candidate/t/trial-003", "failed", 50),
    trial("candidate/t/trial-004", "failed", 50),
    trial("candidate/t/trial-005", "failed", 50),
  ];
}

function replace(trials: RegradeTrial[], ...changed: RegradeTrial[]): RegradeTrial[] {
  return trials.map((t) => changed.find((c) => c.artifactDir === t.artifactDir) ?? t);
}

const variants = ["candidate", "baseline"];

describe("changeDirection", () => {
  it("counts a pass gained as up and a pass lost as down, whatever the scores", () => {
    expect(
      changeDirection({ outcome: "failed", score: 90 }, { outcome: "passed", score: 80 }),
    ).toBe("up");
    expect(
      changeDirection({ outcome: "passed", score: 80 }, { outcome: "failed", score: 90 }),
    ).toBe("down");
    expect(
      changeDirection(
        { outcome: "infrastructure_error", score: null },
        { outcome: "passed", score: 100 },
      ),
    ).toBe("up");
    expect(
      changeDirection(
        { outcome: "passed", score: 100 },
        { outcome: "infrastructure_error", score: null },
      ),
    ).toBe("down");
  });

  it("ranks the same outcome by score, and reports no change when nothing moved", () => {
    expect(
      changeDirection({ outcome: "failed", score: 40 }, { outcome: "failed", score: 45 }),
    ).toBe("up");
    expect(
      changeDirection({ outcome: "passed", score: 100 }, { outcome: "passed", score: 95 }),
    ).toBe("down");
    expect(
      changeDirection({ outcome: "failed", score: 40 }, { outcome: "failed", score: 40 }),
    ).toBeNull();
  });

  it("calls a move between failed and infrastructure error neither up nor down", () => {
    expect(
      changeDirection(
        { outcome: "failed", score: 40 },
        { outcome: "infrastructure_error", score: null },
      ),
    ).toBe("other");
    expect(
      changeDirection(
        { outcome: "infrastructure_error", score: null },
        { outcome: "failed", score: 40 },
      ),
    ).toBe("other");
  });
});

describe("summarizeRegrade", () => {
  it("says no trial changed when every outcome and score is the same", () => {
    const summary = summarizeRegrade({
      before: recorded(),
      after: recorded(),
      variants,
      baseline: "baseline",
    });
    expect(summary).toEqual({ changes: [], up: 0, down: 0, other: 0, passRates: [] });
    expect(formatChangeLine(summary)).toBe("no trial changed");
    expect(formatTrialChanges(summary)).toEqual([]);
  });

  it("prints the issue's example: one up, one down, and the baseline's pass rate", () => {
    const after = replace(
      recorded(),
      trial("baseline/t/trial-002", "failed", 60),
      trial("candidate/t/trial-003", "failed", 70),
    );
    const summary = summarizeRegrade({ before: recorded(), after, variants, baseline: "baseline" });
    expect(formatChangeLine(summary)).toBe(
      "2 trials changed: 1 up, 1 down; baseline pass rate 0.60 → 0.40",
    );
    expect(formatTrialChanges(summary)).toEqual([
      "  baseline/t/trial-002: passed (100) → failed (60)",
      "  candidate/t/trial-003: failed (50) → failed (70)",
    ]);
  });

  it("lists every variant whose pass rate moved, the baseline first even when listed last", () => {
    const after = replace(
      recorded(),
      trial("candidate/t/trial-002", "passed", 100),
      trial("candidate/t/trial-004", "passed", 100),
      trial("baseline/t/trial-004", "passed", 100),
    );
    const summary = summarizeRegrade({ before: recorded(), after, variants, baseline: "baseline" });
    expect(summary.passRates.map((r) => r.variant)).toEqual(["baseline", "candidate"]);
    expect(formatChangeLine(summary)).toBe(
      "3 trials changed: 3 up, 0 down; baseline pass rate 0.60 → 0.80; candidate pass rate 0.20 → 0.60",
    );
    // Baseline's trials first, then by folder.
    expect(summary.changes.map((c) => c.artifactDir)).toEqual([
      "baseline/t/trial-004",
      "candidate/t/trial-002",
      "candidate/t/trial-004",
    ]);
  });

  it("says so when only scores moved", () => {
    const after = replace(recorded(), trial("candidate/t/trial-005", "failed", 55));
    const summary = summarizeRegrade({ before: recorded(), after, variants, baseline: "baseline" });
    expect(formatChangeLine(summary)).toBe("1 trial changed: 1 up, 0 down; no pass rate changed");
  });

  it("leaves infrastructure errors out of pass rates and explains a trial that became one", () => {
    const after = replace(
      recorded(),
      trial(
        "baseline/t/trial-004",
        "infrastructure_error",
        null,
        "grader_failed: the recorded patch does not apply: corrupt patch at line 3",
      ),
    );
    const summary = summarizeRegrade({ before: recorded(), after, variants, baseline: "baseline" });
    // 3 passed of 4 completed instead of 3 of 5.
    expect(formatChangeLine(summary)).toBe(
      "1 trial changed: 0 up, 0 down, 1 other; baseline pass rate 0.60 → 0.75",
    );
    expect(formatTrialChanges(summary)).toEqual([
      "  baseline/t/trial-004: failed (40) → infrastructure_error (—) — grader_failed: the recorded patch does not apply: corrupt patch at line 3",
    ]);
  });

  it("shows a pass rate with no completed trial as a dash", () => {
    const only = [trial("baseline/t/trial-001", "passed", 100)];
    const summary = summarizeRegrade({
      before: only,
      after: [trial("baseline/t/trial-001", "infrastructure_error", null, "grader_failed: x")],
      variants: ["baseline"],
      baseline: "baseline",
    });
    expect(formatChangeLine(summary)).toBe(
      "1 trial changed: 0 up, 1 down; baseline pass rate 1.00 → —",
    );
  });
});

describe("formatRegradeReport", () => {
  it("prints notes, the contracts used, the change line, each changed trial, then both verdicts", () => {
    const after = replace(recorded(), trial("candidate/t/trial-001", "failed", 90));
    const lines = formatRegradeReport({
      stem: "verdict.regrade-001",
      notes: ["the .harness files changed since the run"],
      contracts: [
        {
          task: "t",
          grader: "readme-package-v1",
          path: "/x/strict.json",
          contractHash: `sha256:${"b".repeat(64)}`,
          source: "option",
          runContractHash: `sha256:${"a".repeat(64)}`,
        },
        {
          task: "u",
          grader: "readme-package-v1",
          path: "/x/contract.json",
          contractHash: `sha256:${"a".repeat(64)}`,
          source: "manifest",
          runContractHash: `sha256:${"a".repeat(64)}`,
        },
      ],
      summary: summarizeRegrade({ before: recorded(), after, variants, baseline: "baseline" }),
      previous: { status: "accept", reason: "candidate is better" },
      verdict: { status: "reject", reason: "candidate is worse" },
    });
    expect(lines).toEqual([
      "note: the .harness files changed since the run",
      `grader contract t/readme-package-v1: /x/strict.json sha256:${"b".repeat(64)} (from --grader-contract; the run used sha256:${"a".repeat(64)})`,
      `grader contract u/readme-package-v1: /x/contract.json sha256:${"a".repeat(64)} (from the manifest; same as the run)`,
      "1 trial changed: 0 up, 1 down; candidate pass rate 0.20 → 0.00",
      "  candidate/t/trial-001: passed (100) → failed (90)",
      "previous verdict: accept — candidate is better",
      "new verdict (verdict.regrade-001.json): reject — candidate is worse",
    ]);
  });
});
