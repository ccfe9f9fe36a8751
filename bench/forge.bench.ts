// `npm run bench -- forge`: per-trial start-up of the local forge (start, seed 60 issues,
// 3 pull requests and 20 comments, first API request answered) against starting a bare
// Node HTTP server and answering its first request, both in this run with the same client
// (fetch) on loopback. Goal: ratio <= 3. Also: a capture of that repository over HTTP.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { captureRepoState, startForge } from "../src/forge/index.js";
import type { RepoState } from "../src/scoring/index.js";

const GOAL = 3;
const WARMUP = 5;
const RUNS = 41;

function seed(): RepoState {
  const issues = Array.from({ length: 60 }, (_, i) => ({
    number: i + 1,
    title: `Issue ${i + 1}: the parser drops a line`,
    body: `Steps to reproduce ${i + 1}\n\n1. parse\n2. look`,
    state: i % 4 === 0 ? ("closed" as const) : ("open" as const),
    labels: i % 3 === 0 ? ["bug"] : ["docs"],
    assignees: i % 5 === 0 ? ["alice"] : [],
    comments: i < 20 ? [{ author: "bob", body: `Comment ${i}` }] : [],
  }));
  const pullRequests = Array.from({ length: 3 }, (_, i) => ({
    number: 61 + i,
    title: `Fix ${i}`,
    body: `Fixes #${i + 1}`,
    state: "open" as const,
    labels: ["bug"],
    reviews: i === 0 ? [{ author: "carol", kind: "approved" as const, body: "ok" }] : [],
  }));
  return {
    labels: [
      { name: "bug", color: "#d73a4a", description: "Something isn't working" },
      { name: "docs", color: "#0075ca" },
    ],
    issues,
    pullRequests,
  };
}

async function bareServer(): Promise<number> {
  const started = performance.now();
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end("[]");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await (await fetch(`http://127.0.0.1:${port}/api/v1/repos/o/r/issues?limit=1`)).text();
  const elapsed = performance.now() - started;
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  return elapsed;
}

async function forgeStartup(state: RepoState): Promise<number> {
  const started = performance.now();
  const forge = await startForge({ seed: state });
  await (await fetch(`${forge.apiUrl}/repos/${forge.owner}/${forge.repo}/issues?limit=1`)).text();
  const elapsed = performance.now() - started;
  await forge.close();
  return elapsed;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function measure(run: () => Promise<number>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await run());
  return median(times);
}

export async function run(): Promise<void> {
  const state = seed();
  // Interleave the two so machine load affects both alike.
  const bare: number[] = [];
  const forge: number[] = [];
  for (let round = 0; round < 3; round++) {
    bare.push(await measure(bareServer));
    forge.push(await measure(() => forgeStartup(state)));
  }
  const floor = median(bare);
  const startup = median(forge);
  const ratio = startup / floor;
  console.log(
    `forge start-up (start, seed 60 issues / 3 PRs / 20 comments, first request): ${startup.toFixed(2)} ms`,
  );
  console.log(`bare node:http start-up (start, first request): ${floor.toFixed(2)} ms`);
  console.log(`ratio ${ratio.toFixed(2)} (goal <= ${GOAL}) ${ratio <= GOAL ? "ok" : "OVER GOAL"}`);

  const running = await startForge({ seed: state });
  const captures: number[] = [];
  for (let i = 0; i < WARMUP + 21; i++) {
    const started = performance.now();
    const result = await captureRepoState({
      kind: "gitea",
      url: running.url,
      repo: `${running.owner}/${running.repo}`,
    });
    if (!result.ok) throw new Error(result.error.message);
    if (i >= WARMUP) captures.push(performance.now() - started);
  }
  await running.close();
  console.log(
    `capture of that repository over HTTP (Gitea adapter, 50 per page): ${median(captures).toFixed(2)} ms`,
  );
}
