// `npm run bench -- compile`: the cost of compiling `.harness` source against the cost of reading
// the result. For each size, a generated program is compiled and the emitted bundle's JSON is
// parsed, both in the same run, and the ratio of their medians is printed. "Emitted JSON" is what
// `harness compile --json` prints (pretty, two-space indent); the ratio against compact JSON is
// shown too, as the stricter figure. Goal: ratio <= 10 and time growing linearly with size.
import { performance } from "node:perf_hooks";
import { compileHarness } from "../src/language/index.js";

const SIZES = [10_000, 50_000, 100_000];
const WARMUP = 3;
/** At least 7 rounds; small sizes get more, as their sub-millisecond parses are noisier. */
const repetitionsFor = (lines: number) => Math.max(7, Math.ceil(200_000 / lines));

/** One block of a realistic program: two components, three bindings, a plugin, a composition. */
function block(i: number): string {
  return `// area ${i}
component map-${i} {
  kind skill
  description "Map the modules of area ${i} before editing; list what the change touches."
  input { task repository }
  output { module-map-${i} }
  permissions { workspace read model allow }
}
/* the guard of area ${i} */
component guard-${i} {
  kind policy
  description "Change only files of area ${i}."
  permissions { workspace write network deny }
}
binding map-${i} for [qoder, claude-code] {
  mechanism skill-package
  strength advisory
  notes "Loaded as a skill where the host has skills."
}
binding guard-${i} for claude-code { mechanism permission-callback strength enforced }
plugin pack-${i} {
  version "1.${i % 50}.${i}"
  provides [ component.map-${i}, component.guard-${i} ]
}
composition area-${i} {
  target claude-code
  include [ plugin.pack-${i}@^1 ]
  require map-${i} { minimum advisory }
  require guard-${i} {
    preferred enforced
    minimum advisory
    on-degrade report
  }
  configure {
    runtime.max-turns = ${20 + (i % 30)}
    runtime.timeout = ${5 + (i % 20)}m
    runtime.label = "area ${i}"
    runtime.checkpoints = ${i % 2 === 0}
  }
}
`;
}

export function generateProgram(lines: number): string {
  const parts: string[] = [];
  let count = 0;
  for (let i = 0; count < lines; i++) {
    const text = block(i);
    parts.push(text);
    count += text.split("\n").length - 1;
  }
  return parts.join("");
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(action: () => void): number {
  const started = performance.now();
  action();
  return performance.now() - started;
}

export async function run(): Promise<void> {
  const rows: string[] = [];
  rows.push(
    "| lines | source MB | compile ms | JSON MB (pretty) | JSON.parse ms | ratio | ratio vs compact JSON |",
    "|---:|---:|---:|---:|---:|---:|---:|",
  );
  for (const lines of SIZES) {
    const source = generateProgram(lines);
    const first = compileHarness(source);
    if (first.bundle === undefined) {
      throw new Error(`generated program does not compile: ${first.diagnostics[0]?.message}`);
    }
    const pretty = JSON.stringify(first.bundle, null, 2);
    const compact = JSON.stringify(first.bundle);
    const compileTimes: number[] = [];
    const parseTimes: number[] = [];
    const compactTimes: number[] = [];
    for (let round = 0; round < WARMUP + repetitionsFor(lines); round++) {
      const compile = time(() => compileHarness(source));
      const parse = time(() => JSON.parse(pretty));
      const parseCompact = time(() => JSON.parse(compact));
      if (round < WARMUP) continue;
      compileTimes.push(compile);
      parseTimes.push(parse);
      compactTimes.push(parseCompact);
    }
    const compileMs = median(compileTimes);
    const parseMs = median(parseTimes);
    const compactMs = median(compactTimes);
    rows.push(
      `| ${lines} | ${(source.length / 1e6).toFixed(2)} | ${compileMs.toFixed(1)} | ${(pretty.length / 1e6).toFixed(2)} | ${parseMs.toFixed(1)} | ${(compileMs / parseMs).toFixed(2)} | ${(compileMs / compactMs).toFixed(2)} |`,
    );
  }
  console.log(rows.join("\n"));
}
