// Helpers for the forge tests: seeds, a replay server for recorded forge responses.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { RepoState } from "../../src/scoring/index.js";

/** A small repository in the spirit of the forge benchmark's seed. */
export function sampleSeed(): RepoState {
  return {
    labels: [
      { name: "bug", color: "#d73a4a", description: "Something isn't working" },
      { name: "docs", color: "0075CA" },
      { name: "priority: high", color: "#b60205", description: "" },
    ],
    issues: [
      {
        number: 1,
        title: "Parser drops the last line",
        body: "Steps:\r\n1. parse\r\n2. look",
        state: "open",
        labels: ["bug"],
        assignees: ["alice"],
        comments: [
          { author: "bob", body: "Seen it too" },
          { author: "bob", body: "Seen it too" },
        ],
      },
      { number: 2, title: "Document the CLI", state: "closed", labels: ["docs"] },
      {
        number: 4,
        title: "Crash on empty input",
        body: "",
        state: "open",
        labels: ["bug", "priority: high"],
      },
    ],
    pullRequests: [
      {
        number: 3,
        title: "Fix the parser",
        body: "Fixes #1",
        state: "open",
        labels: ["bug"],
        reviews: [
          {
            author: "carol",
            kind: "request-changes",
            body: "Please add a test",
            comments: [{ author: "carol", body: "here" }],
          },
        ],
      },
      {
        number: 5,
        title: "Old docs change",
        state: "merged",
        comments: [{ author: "alice", body: "thanks" }],
      },
      { number: 6, title: "Abandoned", state: "closed" },
    ],
  };
}

/** `count` issues after the sample's numbers, alternating open and closed. */
export function manyIssues(count: number, from = 100): NonNullable<RepoState["issues"]> {
  return Array.from({ length: count }, (_, i) => ({
    number: from + i,
    title: `Generated issue ${i}`,
    body: `Body ${i}`,
    state: i % 2 === 0 ? ("open" as const) : ("closed" as const),
    labels: i % 3 === 0 ? ["bug"] : [],
    comments: i % 5 === 0 ? [{ author: "dave", body: `comment on ${i}` }] : [],
  }));
}

export interface Exchange {
  method: string;
  /** Path with the query string the client must send (recorded parameters must all be present). */
  path: string;
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Served once, then skipped (a rate-limited first attempt). */
  once?: boolean;
}

export interface ReplayServer {
  url: string;
  requests: { method: string; url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

/**
 * Serves recorded responses over loopback. A request matches an exchange with the same
 * method and path whose recorded query parameters it all carries (the most specific one
 * wins); `origin` in bodies and headers (e.g. https://api.github.com) becomes this server's.
 */
export async function startReplay(exchanges: Exchange[], origin?: string): Promise<ReplayServer> {
  const requests: ReplayServer["requests"] = [];
  let url = "";
  const used = new Set<Exchange>();
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers });
    const asked = new URL(req.url ?? "/", "http://x");
    let best: Exchange | undefined;
    let bestScore = -1;
    for (const exchange of exchanges) {
      if (used.has(exchange)) continue;
      const recorded = new URL(exchange.path, "http://x");
      if (exchange.method.toUpperCase() !== req.method || recorded.pathname !== asked.pathname)
        continue;
      const params = [...recorded.searchParams];
      if (!params.every(([key, value]) => asked.searchParams.get(key) === value)) continue;
      if (params.length > bestScore) [best, bestScore] = [exchange, params.length];
    }
    const rewrite = (text: string) => (origin ? text.split(origin).join(url) : text);
    if (!best) {
      res.writeHead(501, { "content-type": "application/json" });
      res.end(JSON.stringify({ message: `no recording for ${req.method} ${req.url}` }));
      return;
    }
    if (best.once) used.add(best);
    const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
    for (const [key, value] of Object.entries(best.headers ?? {})) headers[key] = rewrite(value);
    res.writeHead(best.status, headers);
    res.end(best.body === undefined ? "" : rewrite(JSON.stringify(best.body)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A sleep that records what it was asked to wait and returns at once. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  return { waits, sleep: async (ms) => void waits.push(ms) };
}
