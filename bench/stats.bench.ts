// `npm run bench -- stats`: the error rates and power behind docs/statistics.md, by seeded
// simulation. Part 1 compares candidate methods for the fixed design over the grid of the
// simulation tests (tasks 1/3/10/20 × trials 5/10 × pass rates 0.5, 0.2 and mixed); part 2
// checks several candidates at the Bonferroni level; part 3 compares sequential designs with the
// fixed one (error rates under continuous monitoring, power, trials used). Rates are percent of
// simulated experiments; ± is one Monte-Carlo standard error at the nominal 2.5 %.
// `--runs N` sets the runs per null row (default 4000; power rows use a quarter).
import { mulberry32 } from "../src/compare/index.js";
import {
  binomialLowerTail,
  binomialUpperTail,
  DEFAULT_PAIRED_POLICY,
  estimatePower,
  fixedTest,
  normalQuantile,
  type PowerScenario,
  type SequentialResult,
  scoreStatistic,
  sequentialSignTest,
  stratifiedDifference,
  stratifiedExactTails,
  type TrialPair,
  type TwoByTwo,
} from "../src/stats/index.js";

const runsArg = process.argv.indexOf("--runs");
const NULL_RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 4000;
const POWER_RUNS = Math.max(200, Math.round(NULL_RUNS / 4));
const ALPHA = 0.05;

/** Seeded, so every run of the bench prints the same tables. */
const seeded = (seed: number) => mulberry32(seed);

type Decision = "up" | "down" | null;
/** A candidate method for the fixed design: strata and alpha (two-sided) to a decision. */
type Method = (strata: TwoByTwo[], alpha: number) => Decision;

const z = (alpha: number) => normalQuantile(1 - alpha / 2);

/** Mantel–Haenszel risk difference with Sato's variance (Sato 1989), a Wald interval. */
function mantelHaenszelSato(strata: TwoByTwo[], alpha: number): Decision {
  let numerator = 0;
  let weights = 0;
  let p = 0;
  let q = 0;
  for (const t of strata) {
    const n = t.trials1 + t.trials0;
    const w = (t.trials1 * t.trials0) / n;
    numerator += (t.successes1 * t.trials0 - t.successes0 * t.trials1) / n;
    weights += w;
    p +=
      (t.trials1 * t.trials1 * t.successes0 -
        t.trials0 * t.trials0 * t.successes1 +
        (t.trials1 * t.trials0 * (t.trials0 - t.trials1)) / 2) /
      (n * n);
    q +=
      (t.successes1 * (t.trials0 - t.successes0) + t.successes0 * (t.trials1 - t.successes1)) /
      (2 * n);
  }
  const d = numerator / weights;
  const se = Math.sqrt((d * p + q) / (weights * weights));
  return d - z(alpha) * se > 0 ? "up" : d + z(alpha) * se < 0 ? "down" : null;
}

const METHODS: Record<string, Method> = {
  "MOVER–Wilson (before)": (strata, alpha) => {
    const r = stratifiedDifference(strata, alpha);
    return r.lower > 0 ? "up" : r.upper < 0 ? "down" : null;
  },
  "MH–Sato Wald": mantelHaenszelSato,
  "MN score": (strata, alpha) => {
    const s = scoreStatistic(strata, 0);
    return s > z(alpha) ? "up" : s < -z(alpha) ? "down" : null;
  },
  "exact conditional": (strata, alpha) => {
    const t = stratifiedExactTails(strata);
    return t.upper <= alpha / 2 ? "up" : t.lower <= alpha / 2 ? "down" : null;
  },
  "exact + score (chosen)": (strata, alpha) => {
    const r = fixedTest(strata, alpha);
    return r.lower > 0 ? "up" : r.upper < 0 ? "down" : null;
  },
};

const RATES: Record<string, (task: number) => number> = {
  "0.5": () => 0.5,
  "0.2": () => 0.2,
  mixed: (task) => [0.1, 0.5, 0.9, 0.3, 0.7][task % 5] as number,
};

interface Design {
  tasks: number;
  trials: number;
  rate: string;
}

const DESIGNS: Design[] = [1, 3, 10, 20].flatMap((tasks) =>
  [5, 10].flatMap((trials) => Object.keys(RATES).map((rate) => ({ tasks, trials, rate }))),
);

function drawStrata(d: Design, effect: number, random: () => number): TwoByTwo[] {
  const rate = RATES[d.rate] as (task: number) => number;
  return Array.from({ length: d.tasks }, (_, task) => {
    const p0 = effect > 0 ? Math.min(rate(task), 1 - effect) : rate(task);
    const p1 = Math.min(1, Math.max(0, p0 + effect));
    let successes1 = 0;
    let successes0 = 0;
    for (let i = 0; i < d.trials; i++) {
      if (random() < p1) successes1 += 1;
      if (random() < p0) successes0 += 1;
    }
    return { successes1, trials1: d.trials, successes0, trials0: d.trials };
  });
}

const pct = (x: number) => (100 * x).toFixed(1);
const standardError = (runs: number) => 100 * Math.sqrt((0.025 * 0.975) / runs);

function table(headers: string[], rows: string[][]): void {
  console.log(`| ${headers.join(" | ")} |`);
  console.log(`|${headers.map(() => "---").join("|")}|`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
}

function fixedDesignTable(): void {
  console.log(
    `\n### Fixed design: false accept / false reject with equal variants, power at +0.3 (${NULL_RUNS} runs per null cell, ${POWER_RUNS} per power cell; ±${standardError(NULL_RUNS).toFixed(2)} points at 2.5 %)\n`,
  );
  const names = Object.keys(METHODS);
  const rows: string[][] = [];
  const pooled = names.map(() => ({ accept: 0, reject: 0, runs: 0, worst: 0 }));
  for (const [di, d] of DESIGNS.entries()) {
    const row = [`${d.tasks} × ${d.trials}, p = ${d.rate}`];
    names.forEach((name, mi) => {
      const method = METHODS[name] as Method;
      const random = seeded(1 + di);
      let accept = 0;
      let reject = 0;
      for (let r = 0; r < NULL_RUNS; r++) {
        const decided = method(drawStrata(d, 0, random), ALPHA);
        if (decided === "up") accept += 1;
        if (decided === "down") reject += 1;
      }
      const powerRandom = seeded(1000 + di);
      let power = 0;
      for (let r = 0; r < POWER_RUNS; r++)
        if (method(drawStrata(d, 0.3, powerRandom), ALPHA) === "up") power += 1;
      const p = pooled[mi] as (typeof pooled)[number];
      p.accept += accept;
      p.reject += reject;
      p.runs += NULL_RUNS;
      p.worst = Math.max(p.worst, accept / NULL_RUNS, reject / NULL_RUNS);
      row.push(
        `${pct(accept / NULL_RUNS)} / ${pct(reject / NULL_RUNS)} / ${pct(power / POWER_RUNS)}`,
      );
    });
    rows.push(row);
  }
  rows.push([
    "**all designs: mean (worst)**",
    ...pooled.map((p) => `${pct(p.accept / p.runs)} / ${pct(p.reject / p.runs)} (${pct(p.worst)})`),
  ]);
  table(["design (tasks × trials, pass rate)", ...names.map((n) => `${n}: FA / FR / power`)], rows);
}

/** Several candidates at the Bonferroni level, all equal to the baseline: any false accept. */
function severalCandidatesTable(): void {
  console.log(
    `\n### Several candidates, every one equal to the baseline (chosen method, each at α/k; ${NULL_RUNS} runs)\n`,
  );
  const rows: string[][] = [];
  for (const k of [1, 3, 5])
    for (const d of [
      { tasks: 1, trials: 10, rate: "0.5" },
      { tasks: 10, trials: 5, rate: "0.5" },
      { tasks: 20, trials: 5, rate: "mixed" },
    ]) {
      const random = seeded(77 + k * 13 + d.tasks);
      let anyAccept = 0;
      let anyReject = 0;
      for (let r = 0; r < NULL_RUNS; r++) {
        const rate = RATES[d.rate] as (task: number) => number;
        const baseline = Array.from({ length: d.tasks }, (_, task) => {
          let s = 0;
          for (let i = 0; i < d.trials; i++) if (random() < rate(task)) s += 1;
          return s;
        });
        let accepted = false;
        let rejected = false;
        for (let c = 0; c < k; c++) {
          const strata = baseline.map((s0, task) => {
            let s1 = 0;
            for (let i = 0; i < d.trials; i++) if (random() < rate(task)) s1 += 1;
            return { successes1: s1, trials1: d.trials, successes0: s0, trials0: d.trials };
          });
          const result = fixedTest(strata, ALPHA / k);
          if (result.lower > 0) accepted = true;
          if (result.upper < 0) rejected = true;
        }
        if (accepted) anyAccept += 1;
        if (rejected) anyReject += 1;
      }
      rows.push([
        String(k),
        `${d.tasks} × ${d.trials}, p = ${d.rate}`,
        pct(anyAccept / NULL_RUNS),
        pct(anyReject / NULL_RUNS),
      ]);
    }
  table(["candidates", "design", "any false accept %", "any false reject %"], rows);
}

/** Pocock-type spending (Lan and DeMets 1983): α·ln(1 + (e − 1)t). */
const pocock = (t: number, sideAlpha: number) => sideAlpha * Math.log(1 + (Math.E - 1) * t);

/**
 * A mixture e-process (anytime-valid): for each side, the likelihood ratio of the win share q
 * against 1/2 averaged over q uniform on the side's half, which is a test supermartingale under
 * "no task differs"; a side is shown when it reaches 1/sideAlpha (Ville's inequality).
 */
function eProcess(
  pairs: readonly TrialPair[],
  sideAlpha: number,
): { decided: Decision; at: number } {
  let wins = 0;
  let losses = 0;
  // ∫_{1/2}^{1} (2q)^W (2(1−q))^L · 2 dq = 2^{K+1} · W! L! / (K+1)! · P(Bin(K+1, 1/2) ≤ W).
  const e = (w: number, l: number) => {
    const k = w + l;
    const point = binomialUpperTail(k, w, 0.5) - binomialUpperTail(k, w + 1, 0.5);
    return (2 / ((k + 1) * point)) * binomialLowerTail(k + 1, w, 0.5);
  };
  for (const [i, pair] of pairs.entries()) {
    if (pair !== null && pair.candidatePassed !== pair.baselinePassed) {
      if (pair.candidatePassed) wins += 1;
      else losses += 1;
      if (e(wins, losses) >= 1 / sideAlpha) return { decided: "up", at: i + 1 };
      if (e(losses, wins) >= 1 / sideAlpha) return { decided: "down", at: i + 1 };
    }
  }
  return { decided: null, at: pairs.length };
}

type Sequential = (pairs: TrialPair[], sideAlpha: number) => { decided: Decision; at: number };

const fromResult = (r: SequentialResult, planned: number) => ({
  decided: r.decided,
  at: r.decidedAtPair ?? planned,
});

const SEQUENTIAL: Record<string, Sequential> = {
  "O'Brien–Fleming (chosen)": (pairs, a) =>
    fromResult(sequentialSignTest(pairs, pairs.length, a), pairs.length),
  "Pocock-type": (pairs, a) =>
    fromResult(sequentialSignTest(pairs, pairs.length, a, pocock), pairs.length),
  "mixture e-process": eProcess,
};

function sequentialTable(): void {
  const runs = Math.max(500, Math.round(NULL_RUNS / 4));
  console.log(
    `\n### Sequential designs, looked at after every pair (round-major order; ${runs} runs per cell)\n`,
  );
  console.log(
    "Each cell: accept % / reject % / mean share of planned trials run. The fixed design (exact + score) runs them all.\n",
  );
  const scenarios = [
    { label: "equal", p0: 0.5, effect: 0 },
    { label: "+0.3", p0: 0.5, effect: 0.3 },
    { label: "−0.3", p0: 0.5, effect: -0.3 },
    { label: "+0.2 from 0.2", p0: 0.2, effect: 0.2 },
  ];
  const rows: string[][] = [];
  for (const d of [
    { tasks: 20, trials: 10 },
    { tasks: 20, trials: 5 },
    { tasks: 10, trials: 10 },
  ])
    for (const [si, s] of scenarios.entries()) {
      const row = [`${d.tasks} × ${d.trials}`, `${s.label} (p₀ = ${s.p0})`];
      for (const [name, design] of Object.entries(SEQUENTIAL)) {
        const random = seeded(500 + si * 7 + d.tasks + d.trials + name.length);
        let accept = 0;
        let reject = 0;
        let used = 0;
        for (let r = 0; r < runs; r++) {
          const pairs: TrialPair[] = [];
          for (let trial = 0; trial < d.trials; trial++)
            for (let task = 0; task < d.tasks; task++)
              pairs.push({
                candidatePassed: random() < s.p0 + s.effect,
                baselinePassed: random() < s.p0,
              });
          const result = design(pairs, ALPHA / 2);
          if (result.decided === "up") accept += 1;
          if (result.decided === "down") reject += 1;
          used += result.at / pairs.length;
        }
        row.push(`${pct(accept / runs)} / ${pct(reject / runs)} / ${pct(used / runs)}`);
      }
      const fixed: PowerScenario = {
        tasks: d.tasks,
        trialsPerCell: d.trials,
        candidates: 1,
        baselineRate: s.p0,
        effect: s.effect,
        policy: DEFAULT_PAIRED_POLICY,
      };
      const estimate = estimatePower(fixed, runs, seeded(900 + si + d.tasks + d.trials));
      row.push(`${pct(estimate.accept)} / ${pct(estimate.reject)} / 100.0`);
      rows.push(row);
    }
  table(["design", "truth", ...Object.keys(SEQUENTIAL), "fixed (exact + score)"], rows);
}

/**
 * The guarantee covers "no task differs"; with differences that cancel out (half the tasks
 * +δ, half −δ, so the equal-weight difference is 0) an accept or reject is also wrong. Checked here.
 */
function cancellingTable(): void {
  const runs = Math.max(500, Math.round(NULL_RUNS / 2));
  console.log(
    `\n### Differences that cancel out (tasks alternately +δ and −δ around 0.5; ${runs} runs per cell)\n`,
  );
  const rows: string[][] = [];
  for (const d of [
    { tasks: 10, trials: 5 },
    { tasks: 20, trials: 5 },
    { tasks: 20, trials: 10 },
  ])
    for (const delta of [0.2, 0.4]) {
      const rate = (task: number) => 0.5 + (task % 2 === 0 ? delta : -delta);
      const random = seeded(3000 + d.tasks * d.trials + Math.round(delta * 10));
      let accept = 0;
      let reject = 0;
      let seqAccept = 0;
      let seqReject = 0;
      for (let r = 0; r < runs; r++) {
        const strata: TwoByTwo[] = [];
        const pairs: TrialPair[] = [];
        const outcomes = Array.from({ length: d.tasks }, (_, task) =>
          Array.from({ length: d.trials }, () => ({
            candidatePassed: random() < rate(task),
            baselinePassed: random() < 0.5,
          })),
        );
        for (const trials of outcomes)
          strata.push({
            successes1: trials.filter((t) => t.candidatePassed).length,
            trials1: d.trials,
            successes0: trials.filter((t) => t.baselinePassed).length,
            trials0: d.trials,
          });
        for (let trial = 0; trial < d.trials; trial++)
          for (const trials of outcomes) pairs.push(trials[trial] as TrialPair);
        const fixed = fixedTest(strata, ALPHA);
        if (fixed.lower > 0) accept += 1;
        if (fixed.upper < 0) reject += 1;
        const sequential = sequentialSignTest(pairs, pairs.length, ALPHA / 2);
        if (sequential.decided === "up") seqAccept += 1;
        if (sequential.decided === "down") seqReject += 1;
      }
      rows.push([
        `${d.tasks} × ${d.trials}`,
        `±${delta}`,
        `${pct(accept / runs)} / ${pct(reject / runs)}`,
        `${pct(seqAccept / runs)} / ${pct(seqReject / runs)}`,
      ]);
    }
  table(["design", "δ", "fixed (exact + score): FA / FR %", "sequential: FA / FR %"], rows);
}

export async function run(): Promise<void> {
  const started = performance.now();
  fixedDesignTable();
  severalCandidatesTable();
  sequentialTable();
  cancellingTable();
  console.log(`\n(${((performance.now() - started) / 1000).toFixed(0)} s)`);
}
