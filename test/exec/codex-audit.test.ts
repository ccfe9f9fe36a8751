// The pure parts of the codex host: turning Codex's commands, patches and rollout records into
// policy questions, the generated TOML, and the failure classification.
import { describe, expect, it } from "vitest";
import {
  commandAuditCalls,
  patchTargets,
  readOnlyCalls,
  rolloutAuditCalls,
  serverNamed,
  splitShellWords,
  unwrapShellCommand,
} from "../../src/exec/codex/audit.js";
import { classifyCodexFailure, reconnectKind } from "../../src/exec/codex/classify.js";
import { codexConfig, toToml } from "../../src/exec/codex/config.js";
import { parseRollout, type RolloutCall } from "../../src/exec/codex/rollout.js";

const ROOT = "/srv/trial";

describe("reading Codex's shell commands", () => {
  it("undoes Codex's shell wrapper in each quoting it uses", () => {
    expect(unwrapShellCommand("/bin/bash -lc 'npm test'")).toBe("npm test");
    expect(unwrapShellCommand(`/bin/bash -lc "sed -n '1,20p' a.js"`)).toBe("sed -n '1,20p' a.js");
    expect(unwrapShellCommand("/bin/bash -lc ls")).toBe("ls");
    expect(unwrapShellCommand(`bash -c 'echo '\\''hi'\\'''`)).toBe("echo 'hi'");
    expect(unwrapShellCommand("/usr/bin/zsh -lc 'git status --short'")).toBe("git status --short");
  });

  it("keeps anything it cannot unwrap exactly as the command itself", () => {
    expect(unwrapShellCommand(`/bin/bash -lc "echo $HOME"`)).toBe(`/bin/bash -lc "echo $HOME"`);
    expect(unwrapShellCommand("/bin/bash -lc 'a' 'b'")).toBe("/bin/bash -lc 'a' 'b'");
    expect(unwrapShellCommand("python3 run.py")).toBe("python3 run.py");
  });

  it("splits plain words and quoted strings, and refuses anything a shell would interpret", () => {
    expect(splitShellWords(`rg -n 'a|b' "src dir"`)).toEqual(["rg", "-n", "a|b", "src dir"]);
    expect(splitShellWords("cat a.js && rm b")).toBeNull();
    expect(splitShellWords(`echo "$SECRET"`)).toBeNull();
    expect(splitShellWords("cat ~/.ssh/id_rsa")).toBeNull();
    expect(splitShellWords("cat 'unterminated")).toBeNull();
  });

  it("recognizes plain read-only commands as the reads they amount to", () => {
    expect(readOnlyCalls(["cat", "a.js", "b.js"])).toEqual([
      { tool: "Read", input: { file_path: "a.js" } },
      { tool: "Read", input: { file_path: "b.js" } },
    ]);
    expect(readOnlyCalls(["sed", "-n", "10,80p", "src/a.js"])).toEqual([
      { tool: "Read", input: { file_path: "src/a.js" } },
    ]);
    expect(readOnlyCalls(["head", "-n", "40", "a.js"])).toEqual([
      { tool: "Read", input: { file_path: "a.js" } },
    ]);
    expect(readOnlyCalls(["nl", "-ba", "a.js"])).toEqual([
      { tool: "Read", input: { file_path: "a.js" } },
    ]);
    expect(readOnlyCalls(["ls", "-la"])).toEqual([
      { tool: "Glob", input: { pattern: "*", path: "." } },
    ]);
    expect(readOnlyCalls(["rg", "-n", "TODO", "src"])).toEqual([
      { tool: "Grep", input: { pattern: "TODO", path: "src" } },
    ]);
    expect(readOnlyCalls(["rg", "--files"])).toEqual([
      { tool: "Glob", input: { pattern: "**/*", path: "." } },
    ]);
    expect(readOnlyCalls(["grep", "-rn", "x"])).toEqual([
      { tool: "Grep", input: { pattern: "x", path: "." } },
    ]);
  });

  it("leaves commands with unknown flags, scripts or no operands to the Bash vocabulary", () => {
    expect(readOnlyCalls(["sed", "-i", "s/a/b/", "a.js"])).toBeNull();
    expect(readOnlyCalls(["sed", "-n", "1,5w out", "a.js"])).toBeNull();
    expect(readOnlyCalls(["rg", "--pre", "sh", "x"])).toBeNull();
    expect(readOnlyCalls(["cat"])).toBeNull();
    expect(readOnlyCalls(["tail", "-f", "log"])).toBeNull();
    expect(readOnlyCalls(["npm", "test"])).toBeNull();
  });

  it("treats a read piped only through output filters as the read, and any other pipeline as Bash", () => {
    expect(commandAuditCalls("nl -ba src/a.js | sed -n '1,80p'", ROOT, ROOT)).toEqual([
      { tool: "Read", input: { file_path: "src/a.js" } },
    ]);
    expect(commandAuditCalls("rg -n TODO src | head -n 20 | wc -l", ROOT, ROOT)).toEqual([
      { tool: "Grep", input: { pattern: "TODO", path: "src" } },
    ]);
    for (const script of [
      "cat a.js | sh",
      "cat a.js | tee copy.js",
      "cat a.js | sort -o out.txt",
      "cat a.js || rm a.js",
      "cat a.js |",
      "npm test | head",
    ]) {
      expect(commandAuditCalls(script, ROOT, ROOT)).toEqual([
        { tool: "Bash", input: { command: script } },
      ]);
    }
  });

  it("resolves read paths against the command's working directory and flags a command run outside the trial", () => {
    expect(commandAuditCalls("cat app.js", `${ROOT}/src`, ROOT)).toEqual([
      { tool: "Read", input: { file_path: `${ROOT}/src/app.js` } },
    ]);
    expect(commandAuditCalls("npm test", ROOT, ROOT)).toEqual([
      { tool: "Bash", input: { command: "npm test" } },
    ]);
    expect(commandAuditCalls("npm test", "/etc", ROOT)).toEqual([
      { tool: "Bash", input: { command: "npm test" } },
      { tool: "Read", input: { file_path: "/etc" } },
    ]);
  });
});

describe("reading apply_patch and rollout calls", () => {
  it("lists the files a patch adds, deletes, updates and moves to", () => {
    const patch = [
      "*** Begin Patch",
      "*** Add File: docs/new.md",
      "+hello",
      "*** Update File: src/a.js",
      "*** Move to: src/b.js",
      "@@",
      "-1",
      "+2",
      "*** Delete File: old.txt",
      "*** End Patch",
    ].join("\n");
    expect(patchTargets(patch)).toEqual([
      { path: "docs/new.md", kind: "add" },
      { path: "src/a.js", kind: "update" },
      { path: "src/b.js", kind: "add" },
      { path: "old.txt", kind: "delete" },
    ]);
  });

  const call = (over: Partial<RolloutCall>): RolloutCall => ({
    callId: "c1",
    name: "exec_command",
    kind: "function",
    arguments: {},
    input: "",
    ...over,
  });

  it("turns each kind of call into the policy questions it stands for", () => {
    expect(
      rolloutAuditCalls(call({ arguments: { cmd: "npm test", workdir: "sub" } }), ROOT),
    ).toEqual({
      counted: true,
      calls: [{ tool: "Bash", input: { command: "npm test" } }],
    });
    expect(
      rolloutAuditCalls(
        call({ name: "shell", arguments: { command: ["bash", "-lc", "cat a"] } }),
        ROOT,
      ),
    ).toEqual({ counted: true, calls: [{ tool: "Read", input: { file_path: "a" } }] });
    expect(
      rolloutAuditCalls(
        call({
          name: "apply_patch",
          kind: "custom",
          input: "*** Update File: a.js\n*** Delete File: /x",
        }),
        ROOT,
      ),
    ).toEqual({
      counted: true,
      calls: [
        { tool: "Edit", input: { file_path: `${ROOT}/a.js` } },
        { tool: "Write", input: { file_path: "/x" } },
      ],
    });
    expect(
      rolloutAuditCalls(
        call({
          name: "apply_patch",
          kind: "custom",
          input: "ignored when reported",
          reported: {
            type: "FileChange",
            changes: [{ path: `${ROOT}/a.js`, kind: "update", movePath: `${ROOT}/b.js` }],
          },
        }),
        ROOT,
      ).calls,
    ).toEqual([
      { tool: "Edit", input: { file_path: `${ROOT}/a.js` } },
      { tool: "Write", input: { file_path: `${ROOT}/b.js` } },
    ]);
    expect(
      rolloutAuditCalls(call({ name: "write_stdin", arguments: { chars: "" } }), ROOT),
    ).toEqual({
      counted: false,
      calls: [],
    });
    expect(
      rolloutAuditCalls(call({ name: "write_stdin", arguments: { chars: "rm -rf /\n" } }), ROOT),
    ).toEqual({
      counted: true,
      calls: [{ tool: "Bash", input: { command: "rm -rf /" } }],
    });
    expect(
      rolloutAuditCalls(call({ name: "view_image", arguments: { path: "a.png" } }), ROOT).calls,
    ).toEqual([{ tool: "Read", input: { file_path: "a.png" } }]);
    expect(rolloutAuditCalls(call({ name: "update_plan" }), ROOT)).toEqual({
      counted: false,
      calls: [],
    });
    expect(
      rolloutAuditCalls(call({ name: "github__create_issue", arguments: { t: 1 } }), ROOT),
    ).toEqual({
      counted: true,
      calls: [{ tool: "github__create_issue", input: { t: 1 } }],
    });
  });

  it("parses a rollout: calls in order with what was reported for them, responses, models, duration", () => {
    const lines = [
      { type: "session_meta", payload: { id: "t1" } },
      { type: "turn_context", payload: { model: "gpt-5.5" } },
      { type: "token_usage_record", payload: {} },
      {
        type: "response_item",
        payload: {
          type: "function_call",
          name: "exec_command",
          call_id: "a",
          arguments: '{"cmd":"ls"}',
        },
      },
      {
        type: "event_msg",
        payload: {
          type: "item_completed",
          item: {
            type: "CommandExecution",
            id: "a",
            command: ["/bin/bash", "-lc", "ls"],
            cwd: "file:///w%20x",
          },
        },
      },
      { type: "token_usage_record", payload: {} },
      {
        type: "response_item",
        payload: {
          type: "function_call",
          name: "exec_command",
          call_id: "b",
          arguments: "not json",
        },
      },
      {
        type: "response_item",
        payload: { type: "web_search_call", id: "ws", action: { query: "q" } },
      },
      { type: "event_msg", payload: { type: "task_complete", duration_ms: 900 } },
    ];
    const text = `${lines.map((l) => JSON.stringify(l)).join("\n")}\n{"truncat`;
    const summary = parseRollout(text);
    expect(summary).toMatchObject({
      modelResponses: 2,
      models: ["gpt-5.5"],
      durationMs: 900,
      unreadableLines: 1,
    });
    expect(summary.calls).toEqual([
      {
        callId: "a",
        name: "exec_command",
        kind: "function",
        arguments: { cmd: "ls" },
        input: "",
        reported: { type: "CommandExecution", command: ["/bin/bash", "-lc", "ls"], cwd: "/w x" },
      },
      { callId: "b", name: "exec_command", kind: "function", arguments: {}, input: "" },
      {
        callId: "ws",
        name: "web_search",
        kind: "web_search",
        arguments: { query: "q" },
        input: "",
      },
    ]);
  });
});

describe("naming MCP tools as the policy knows them", () => {
  it("maps the namespace Codex gives a server with a hyphen back to the server", () => {
    const servers = ["widgets-mcp", "rates", "forge"];
    expect(serverNamed("mcp__widgets_mcp__edit_issue", servers)).toBe(
      "mcp__widgets-mcp__edit_issue",
    );
    expect(serverNamed("mcp__rates__exchange_rate", servers)).toBe("mcp__rates__exchange_rate");
    expect(serverNamed("exec_command", servers)).toBe("exec_command");
  });

  it("leaves a name that fits no server, or two, as recorded (the policy denies it)", () => {
    expect(serverNamed("mcp__other_x__t", ["widgets-mcp"])).toBe("mcp__other_x__t");
    expect(serverNamed("mcp__a_b__t", ["a-b", "a.b"])).toBe("mcp__a_b__t");
  });
});

describe("the generated config.toml", () => {
  it("writes root keys before tables and quotes what TOML needs quoted", () => {
    expect(
      toToml({
        b: 'say "hi"\n',
        a: 1,
        list: ["x", true],
        t: { "odd key": { deep: false } },
        empty: {},
      }),
    ).toBe(
      [
        'b = "say \\"hi\\"\\n"',
        "a = 1",
        'list = ["x", true]',
        "",
        '[t."odd key"]',
        "deep = false",
        "",
        "[empty]",
        "",
      ].join("\n"),
    );
  });

  it("gives a keyless endpoint no env_key", () => {
    const config = codexConfig({
      sandboxMode: "workspace-write",
      endpoint: { baseUrl: "http://127.0.0.1:1/v1", withKey: false, maxRetries: 2 },
    });
    expect(config.model_providers).toEqual({
      harnesslab: {
        name: "harnesslab endpoint",
        base_url: "http://127.0.0.1:1/v1",
        wire_api: "responses",
        request_max_retries: 2,
        stream_max_retries: 2,
      },
    });
  });
});

describe("the config of a forge task", () => {
  it("names the forge MCP server for an mcp variant and keeps its commands off the network", () => {
    const toml = toToml(
      codexConfig({
        sandboxMode: "workspace-write",
        forge: {
          mcp: { server: "forge", url: "http://127.0.0.1:40118/mcp" },
          env: { FORGE_REPO: "acme/widgets" },
          commandsReachLoopback: false,
        },
      }),
    );
    expect(toml).toContain('[mcp_servers.forge]\nurl = "http://127.0.0.1:40118/mcp"');
    expect(toml).toContain("network_access = false");
    expect(toml).toContain('[shell_environment_policy.set]\nFORGE_REPO = "acme/widgets"');
  });

  it("lets a cli variant's commands reach the loopback (the harness's sandbox has nothing else)", () => {
    const config = codexConfig({
      sandboxMode: "workspace-write",
      forge: { env: { FORGE_URL: "http://127.0.0.1:40118" }, commandsReachLoopback: true },
    });
    expect(config.mcp_servers).toBeUndefined();
    expect(toToml(config)).toContain("network_access = true");
  });
});

describe("classifying Codex's failure messages", () => {
  it("tells network reconnects from retries after an answer", () => {
    expect(
      reconnectKind(
        "Reconnecting... waiting for network (Connection failed: error sending request)",
      ),
    ).toBe("network");
    expect(
      reconnectKind(
        "Reconnecting... 2/5 (stream disconnected before completion: failed to lookup address information)",
      ),
    ).toBe("network");
    expect(reconnectKind("Reconnecting... 1/1 (unexpected status 401 Unauthorized: bad key)")).toBe(
      "answered",
    );
    expect(reconnectKind("Reconnecting... 1/1 (We’re currently experiencing high demand)")).toBe(
      "answered",
    );
    expect(reconnectKind("Falling back from WebSockets to HTTPS transport")).toBe("none");
  });

  it("checks quota before rate limits, since both come as status 429", () => {
    expect(classifyCodexFailure("429 Too Many Requests: insufficient_quota")).toEqual({
      status: "infra_error",
      infraReason: "quota_exhausted",
    });
    expect(classifyCodexFailure("exceeded retry limit, last status: 429")).toEqual({
      status: "infra_error",
      infraReason: "rate_limited",
    });
  });
});
