// The scripted host's setup: skills and instructions handed over in ctx.setup, a variant's own
// stdio MCP server started in the trial's sandbox and called through the policy, hooks run at
// their events, and everything of it contained like a validation command.
import { createHash } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type ExecutorRunInput,
  type RuntimeReceipt,
  runtimeReceiptSchema,
  ScriptedExecutor,
  type SetupComponent,
} from "../../src/exec/index.js";
import { createToolPolicy } from "../../src/policy/index.js";
import { createTrialWorkspace, type TrialWorkspace } from "../../src/workspace/index.js";
import { isRunning, pidsWorkingIn, testSandbox } from "../support/sandbox.js";

const sandbox = await testSandbox();

let base: string;
let workspace: TrialWorkspace;
let setupDir: string;
let agentCounter = 0;

const TOOLS = ["Read", "Write", "Edit", "Glob", "Grep", "Bash"];

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-setup-"));
  const fixture = join(base, "fixture");
  await mkdir(join(fixture, "src"), { recursive: true });
  await writeFile(join(fixture, "src", "app.js"), "export const x = 1;\n");
  await writeFile(
    join(fixture, "package.json"),
    JSON.stringify({ name: "demo", private: true, scripts: { test: "node check.js" } }),
  );
  await writeFile(join(fixture, "check.js"), "console.log('ok');\n");
  workspace = await createTrialWorkspace(fixture, { tempParent: base });
  setupDir = join(base, "setup");
  await mkdir(setupDir);
});

afterEach(async () => {
  await workspace.cleanup();
  await chmodTree(setupDir);
  await rm(base, { recursive: true, force: true });
});

async function chmodTree(dir: string): Promise<void> {
  await chmod(dir, 0o755).catch(() => {});
}

function sha256(text: string): string {
  return `sha256:${createHash("sha256").update(text).digest("hex")}`;
}

/** Writes a component's source folder (as the trial would have materialized it). */
async function sourceFolder(id: string, files: Record<string, string>) {
  const path = join(setupDir, id);
  for (const [name, content] of Object.entries(files)) {
    await mkdir(join(path, name, ".."), { recursive: true });
    await writeFile(join(path, name), content);
  }
  return {
    path,
    type: "directory" as const,
    files: Object.entries(files)
      .map(([name, content]) => ({ path: name, sha256: sha256(content) }))
      .sort((a, b) => (a.path < b.path ? -1 : 1)),
  };
}

/** A stdio MCP server in plain Node: `tools` maps a tool name to the body of its handler. */
function serverSource(tools: Record<string, string>, startup = ""): string {
  return `import { createInterface } from "node:readline";
import * as fs from "node:fs";
import * as child from "node:child_process";
${startup}
const handlers = { ${Object.entries(tools)
    .map(([name, body]) => `${JSON.stringify(name)}: async (args) => { ${body} }`)
    .join(", ")} };
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
for await (const line of createInterface({ input: process.stdin })) {
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) continue;
  if (method === "initialize") send({ id, result: { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "t", version: "1" } } });
  else if (method === "tools/list") send({ id, result: { tools: Object.keys(handlers).map((name) => ({ name, description: "tool " + name, inputSchema: { type: "object" } })) } });
  else if (method === "tools/call") {
    let text;
    try { text = JSON.stringify(await handlers[params.name](params.arguments ?? {})); }
    catch (error) { send({ id, result: { isError: true, content: [{ type: "text", text: String(error.message) }] } }); continue; }
    send({ id, result: { content: [{ type: "text", text }] } });
  } else send({ id, error: { code: -32601, message: "no " + method } });
}
`;
}

async function mcpComponent(
  id: string,
  tools: Record<string, string>,
  options: { startup?: string; onDegrade?: "fail" | "report" } = {},
): Promise<SetupComponent> {
  const source = await sourceFolder(id, { "server.mjs": serverSource(tools, options.startup) });
  return {
    id,
    kind: "tool",
    mechanism: "mcp-server",
    strength: "wired",
    onDegrade: options.onDegrade ?? "fail",
    source,
    mcp: { command: "node", args: [join(source.path, "server.mjs")], env: {} },
  };
}

async function agentModule(source: string): Promise<string> {
  const path = join(base, `agent-${++agentCounter}.mjs`);
  await writeFile(path, source);
  return path;
}

function runInput(
  agent: string,
  setup: readonly SetupComponent[],
  overrides: Partial<ExecutorRunInput> = {},
): ExecutorRunInput {
  return {
    prompt: "Do the task.",
    preamble: "",
    cwd: workspace.root,
    policy: createToolPolicy({
      trialRoot: workspace.root,
      allowedWrites: ["src/app.js"],
      allowedCommands: [["npm", "test"]],
      tools: TOOLS,
      mcpServers: setup.filter((c) => c.mechanism === "mcp-server").map((c) => c.id),
    }),
    timeoutMs: 30_000,
    scratchDir: workspace.scratchDir,
    sandbox,
    runtime: { tools: TOOLS, allowedTools: [], disallowedTools: [] },
    agent,
    trialIndex: 1,
    variant: "candidate",
    task: "task",
    setup,
    ...overrides,
  };
}

async function run(input: ExecutorRunInput): Promise<RuntimeReceipt> {
  const receipt = await new ScriptedExecutor().run(input);
  expect(runtimeReceiptSchema.parse(receipt)).toEqual(receipt);
  return receipt;
}

describe("scripted host: a variant's skills, instructions and subagents", () => {
  it("hands each to the agent in ctx.setup, with its text and files, and reports it loaded", async () => {
    const skill = await sourceFolder("style", {
      "SKILL.md": "---\nname: house-style\ndescription: How we write.\n---\nWrite `EUR 1.00`.\n",
      "reference/notes.md": "more\n",
    });
    const rulesDir = join(setupDir, "rules");
    await mkdir(rulesDir);
    await writeFile(join(rulesDir, "CLAUDE.md"), "Always run the tests.\n");
    const setup: SetupComponent[] = [
      {
        id: "style",
        kind: "skill",
        mechanism: "native-skill",
        strength: "wired",
        onDegrade: "fail",
        source: { ...skill, skill: { name: "house-style", description: "How we write." } },
      },
      {
        id: "rules",
        kind: "instructions",
        mechanism: "system-instruction",
        strength: "wired",
        onDegrade: "report",
        source: {
          path: join(rulesDir, "CLAUDE.md"),
          type: "file",
          files: [{ path: "CLAUDE.md", sha256: sha256("Always run the tests.\n") }],
        },
      },
    ];
    const agent = await agentModule(
      `export default async ({ setup }) => JSON.stringify(setup.components.map((c) => [c.id, c.mechanism, c.skill?.name ?? null, c.files, c.text]))`,
    );
    const receipt = await run(runInput(agent, setup));
    expect(receipt.status).toBe("completed");
    expect(JSON.parse(receipt.finalText)).toEqual([
      [
        "style",
        "native-skill",
        "house-style",
        ["SKILL.md", "reference/notes.md"],
        "---\nname: house-style\ndescription: How we write.\n---\nWrite `EUR 1.00`.\n",
      ],
      ["rules", "system-instruction", null, ["CLAUDE.md"], "Always run the tests.\n"],
    ]);
    expect(receipt.setup).toEqual([
      { component: "style", mechanism: "native-skill", status: "loaded", hostName: "house-style" },
      { component: "rules", mechanism: "system-instruction", status: "loaded" },
    ]);
  });

  it("a skill whose file is not the one the revision pinned is not loaded: fail ends the trial before the agent", async () => {
    const skill = await sourceFolder("style", {
      "SKILL.md": "---\nname: s\ndescription: d\n---\n",
    });
    await writeFile(join(skill.path, "SKILL.md"), "tampered\n");
    const agent = await agentModule(`export default async () => "ran"`);
    const setup: SetupComponent[] = [
      {
        id: "style",
        kind: "skill",
        mechanism: "native-skill",
        strength: "wired",
        onDegrade: "fail",
        source: skill,
      },
    ];
    const receipt = await run(runInput(agent, setup));
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "setup_failed" });
    expect(receipt.error).toContain(
      "style (native-skill): SKILL.md is not the file the revision pinned",
    );
    expect(receipt.finalText).toBe("");
  });

  it("the agent cannot rewrite a materialized skill through its tools", async () => {
    const skill = await sourceFolder("style", { "SKILL.md": "original\n" });
    const target = join(skill.path, "SKILL.md");
    const agent = await agentModule(`export default async ({ tools }) => {
      const write = await tools.write(${JSON.stringify(target)}, "mine");
      const edit = await tools.edit(${JSON.stringify(target)}, "original", "mine");
      return JSON.stringify([write.ok, write.denied, edit.ok, edit.denied]);
    }`);
    const setup: SetupComponent[] = [
      {
        id: "style",
        kind: "skill",
        mechanism: "native-skill",
        strength: "wired",
        onDegrade: "report",
        source: skill,
      },
    ];
    const receipt = await run(runInput(agent, setup));
    expect(JSON.parse(receipt.finalText)).toEqual([false, true, false, true]);
    expect(await readFile(target, "utf8")).toBe("original\n");
  });
});

describe("scripted host: a variant's stdio MCP server", () => {
  it("is started in the sandbox; its tools are listed, callable under the policy, and reported", async () => {
    const server = await mcpComponent("calc", { add: "return { sum: args.a + args.b };" });
    const agent = await agentModule(`export default async ({ setup, tools }) => {
      const listed = setup.components[0].mcp.tools;
      const answer = await tools.call("mcp__calc__add", { a: 2, b: 40 });
      const other = await tools.call("mcp__other__add", { a: 1, b: 1 });
      const missing = await tools.call("mcp__calc__nope", {});
      return JSON.stringify({ listed, answer, other: [other.ok, other.denied], missing: [missing.ok, missing.denied] });
    }`);
    const receipt = await run(runInput(agent, [server]));
    expect(receipt.status).toBe("completed");
    const result = JSON.parse(receipt.finalText);
    expect(result.listed).toEqual([{ name: "mcp__calc__add", description: "tool add" }]);
    expect(result.answer).toEqual({ ok: true, result: { sum: 42 } });
    // A server the variant does not have: an unknown tool, denied by the policy.
    expect(result.other).toEqual([false, true]);
    // A tool its server does not have: allowed by the policy, failed by the server.
    expect(result.missing).toEqual([false, false]);
    expect(receipt.setup).toEqual([
      { component: "calc", mechanism: "mcp-server", status: "loaded", tools: ["mcp__calc__add"] },
    ]);
    expect(receipt.permissionDenials.map((d) => d.tool)).toEqual(["mcp__other__add"]);
  });

  it("the same tool call in a variant without the server is an unknown tool, denied", async () => {
    const agent = await agentModule(`export default async ({ tools }) => {
      const answer = await tools.call("mcp__calc__add", { a: 2, b: 40 });
      return JSON.stringify([answer.ok, answer.denied, answer.rule]);
    }`);
    const receipt = await run(runInput(agent, []));
    expect(JSON.parse(receipt.finalText)).toEqual([false, true, "unknown-tool"]);
    expect(receipt.setup).toBeUndefined();
  });

  it("a server that crashes on start degrades it: on-degrade fail is setup_failed with its stderr", async () => {
    const crashing = await mcpComponent(
      "calc",
      {},
      {
        startup: `console.error("cannot open the rates database"); process.exit(3);`,
      },
    );
    const agent = await agentModule(`export default async () => "ran"`);
    const receipt = await run(runInput(agent, [crashing]));
    expect(receipt).toMatchObject({ status: "infra_error", infraReason: "setup_failed" });
    expect(receipt.error).toMatch(
      /calc \(mcp-server\): the MCP server did not start.*exited with 3.*cannot open the rates database/s,
    );
    expect(receipt.setup).toEqual([
      expect.objectContaining({ component: "calc", status: "failed" }),
    ]);
  });

  it("with on-degrade report, the failure is recorded and the agent runs without the server", async () => {
    const crashing = await mcpComponent(
      "calc",
      {},
      { startup: "process.exit(1);", onDegrade: "report" },
    );
    const agent = await agentModule(`export default async ({ setup, tools }) => {
      const answer = await tools.call("mcp__calc__add", {});
      return JSON.stringify([setup.components.length, answer.ok, answer.denied]);
    }`);
    const receipt = await run(runInput(agent, [crashing]));
    expect(receipt.status).toBe("completed");
    // Allowed by the policy (the variant has the server), failed: it is not running.
    expect(JSON.parse(receipt.finalText)).toEqual([0, false, false]);
    expect(receipt.setup?.[0]).toMatchObject({ status: "failed" });
  });

  describe("contained like a validation command", () => {
    let http: Server;
    let port: number;
    let hits = 0;
    beforeEach(async () => {
      hits = 0;
      http = createServer((_req, res) => {
        hits++;
        res.end("reached");
      });
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
      port = (http.address() as AddressInfo).port;
    });
    afterEach(async () => {
      await new Promise((resolve) => http.close(resolve));
    });

    it("reaches no network, writes nothing outside the trial (its own source included)", async () => {
      const outside = join(base, "outside.txt");
      const server = await mcpComponent("probe", {
        net: `try { const r = await fetch("http://127.0.0.1:${port}/"); return "reached " + r.status; } catch (e) { return "no network: " + (e.cause?.code ?? e.message); }`,
        escape: `try { fs.writeFileSync(${JSON.stringify(outside)}, "x"); return "wrote"; } catch (e) { return e.code; }`,
        own: `try { fs.writeFileSync(process.env.HARNESSLAB_SOURCE + "/server.mjs", "x"); return "wrote"; } catch (e) { return e.code; }`,
        trial: `fs.writeFileSync("src/app.js", "export const x = 2;\\n"); return "wrote";`,
      });
      server.mcp!.env = {};
      const agent = await agentModule(`export default async ({ tools }) => {
        const out = {};
        for (const name of ["net", "escape", "own", "trial"]) out[name] = (await tools.call("mcp__probe__" + name, {})).result;
        return JSON.stringify(out);
      }`);
      const receipt = await run(runInput(agent, [server]));
      const out = JSON.parse(receipt.finalText);
      expect(out.net).toMatch(/^no network/);
      expect(hits).toBe(0);
      // Outside the trial the sandbox shows only a private scratch: what it wrote there is gone.
      expect(typeof out.escape).toBe("string");
      expect(["EROFS", "EACCES"]).toContain(out.own);
      // The trial is the server's to change, as a validation command's: the patch shows it.
      expect(out.trial).toBe("wrote");
      await expect(readFile(outside)).rejects.toMatchObject({ code: "ENOENT" });
      expect(await readFile(join(server.source!.path, "server.mjs"), "utf8")).toContain(
        "createInterface",
      );
      expect(await readFile(join(workspace.root, "src", "app.js"), "utf8")).toBe(
        "export const x = 2;\n",
      );
    });

    it("nothing it starts outlives the trial", async () => {
      const server = await mcpComponent("spawner", {
        spawn: `const c = child.spawn("node", ["-e", "setInterval(() => {}, 1000)"], { detached: true, stdio: "ignore" }); c.unref(); return "started";`,
      });
      const agent = await agentModule(
        `export default async ({ tools }) => (await tools.call("mcp__spawner__spawn", {})).result`,
      );
      const receipt = await run(runInput(agent, [server]));
      expect(receipt.finalText).toBe("started");
      const left = pidsWorkingIn([workspace.root, workspace.realRoot]).filter(isRunning);
      expect(left).toEqual([]);
    });
  });
});

describe("scripted host: a variant's hooks", () => {
  function hook(
    id: string,
    event: NonNullable<SetupComponent["hook"]>["event"],
    script: string,
  ): Promise<SetupComponent> {
    return sourceFolder(id, { "hook.mjs": script }).then((source) => ({
      id,
      kind: "hook",
      mechanism: "native-hook",
      strength: "wired",
      onDegrade: "report",
      source,
      hook: { event, command: ["node", join(source.path, "hook.mjs")] },
    }));
  }

  const READ_STDIN = `import { readFileSync, appendFileSync } from "node:fs";\nconst input = JSON.parse(readFileSync(0, "utf8"));\n`;

  it("runs each at its event with the event's JSON; PreToolUse exit 2 blocks the call; all runs are reported", async () => {
    const setup = [
      await hook(
        "guard",
        "PreToolUse",
        `${READ_STDIN}if (input.tool_name === "Write") { console.error("no writes, please"); process.exit(2); }`,
      ),
      await hook(
        "log",
        "PostToolUse",
        `${READ_STDIN}appendFileSync("hook-log.txt", input.hook_event_name + " " + input.tool_name + "\\n");`,
      ),
      await hook("start", "SessionStart", `${READ_STDIN}console.log("remember: run npm test");`),
      await hook(
        "stop",
        "Stop",
        `${READ_STDIN}console.log("stop seen " + input.stop_hook_active);`,
      ),
    ];
    const agent = await agentModule(`export default async ({ tools, setup }) => {
      const write = await tools.write("src/app.js", "export const x = 3;\\n");
      const read = await tools.read("src/app.js");
      return JSON.stringify({ context: setup.context, write, read: read.ok });
    }`);
    const receipt = await run(runInput(agent, setup));
    const result = JSON.parse(receipt.finalText);
    expect(result.context).toEqual(["remember: run npm test"]);
    expect(result.write).toEqual({
      ok: false,
      denied: false,
      error: "the PreToolUse hook guard blocked it: no writes, please",
    });
    expect(result.read).toBe(true);
    expect(await readFile(join(workspace.root, "src", "app.js"), "utf8")).toBe(
      "export const x = 1;\n",
    );
    // The PostToolUse hook ran after the one call that was carried out, in the trial.
    expect(await readFile(join(workspace.root, "hook-log.txt"), "utf8")).toBe("PostToolUse Read\n");
    const byId = new Map(receipt.setup?.map((r) => [r.component, r]));
    expect(byId.get("guard")).toMatchObject({ status: "loaded", hookRunCount: 2 });
    expect(byId.get("guard")?.hookRuns?.map((r) => [r.exitCode, r.blocked])).toEqual([
      [2, true],
      [0, false],
    ]);
    expect(byId.get("stop")?.hookRuns?.[0]).toMatchObject({
      event: "Stop",
      exitCode: 0,
      stdout: "stop seen false\n",
    });
  });

  it("a hook is contained: no network, nothing written outside the trial", async () => {
    const outside = join(base, "hook-outside.txt");
    const setup = [
      await hook(
        "escape",
        "SessionStart",
        `import { writeFileSync } from "node:fs";
let wrote = "no"; try { writeFileSync(${JSON.stringify(outside)}, "x"); wrote = "yes"; } catch {}
let net = "no"; try { await fetch("http://1.1.1.1/"); net = "yes"; } catch {}
console.log("wrote=" + wrote + " net=" + net);`,
      ),
    ];
    const agent = await agentModule(`export default async ({ setup }) => setup.context.join("|")`);
    const receipt = await run(runInput(agent, setup));
    // What it wrote outside the trial went to the sandbox's private scratch, not here.
    expect(receipt.finalText).toMatch(/^wrote=(yes|no) net=no$/);
    await expect(readFile(outside)).rejects.toMatchObject({ code: "ENOENT" });
  });
});
