// A small stdio MCP server with one tool, the shop's exchange rates. It depends on nothing but
// Node, so it runs in the trial's sandbox as it is: newline-delimited JSON-RPC on stdin/stdout.
import { createInterface } from "node:readline";

// The rates the shop's finance team published (a real server would read them from a service).
const RATES = { "USD:EUR": 0.9137, "EUR:USD": 1.0945, "GBP:EUR": 1.1702 };

const TOOLS = [
  {
    name: "exchange_rate",
    description: "The shop's current exchange rate between two ISO 4217 currencies.",
    inputSchema: {
      type: "object",
      properties: { from: { type: "string" }, to: { type: "string" } },
      required: ["from", "to"],
    },
  },
];

function answer(id, result) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);
}

function fail(id, code, message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n`);
}

function callTool(params) {
  if (params?.name !== "exchange_rate")
    return { isError: true, content: [{ type: "text", text: `no tool ${params?.name}` }] };
  const { from, to } = params.arguments ?? {};
  const rate = RATES[`${from}:${to}`];
  if (rate === undefined)
    return { isError: true, content: [{ type: "text", text: `no rate for ${from} to ${to}` }] };
  return { content: [{ type: "text", text: JSON.stringify({ from, to, rate }) }] };
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === "") continue;
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    fail(null, -32700, "parse error");
    continue;
  }
  const { id, method, params } = message;
  if (id === undefined) continue; // a notification (notifications/initialized)
  if (method === "initialize")
    answer(id, {
      protocolVersion: params?.protocolVersion ?? "2025-06-18",
      capabilities: { tools: {} },
      serverInfo: { name: "shop-rates", version: "1.0.0" },
    });
  else if (method === "tools/list") answer(id, { tools: TOOLS });
  else if (method === "tools/call") answer(id, callTool(params));
  else if (method === "ping") answer(id, {});
  else fail(id, -32601, `no method ${method}`);
}
