// One readable row per trace event, for the events each host writes and for anything odd an
// untrusted trace could hold.
import { describe, expect, it } from "vitest";
import { renderTraceHtml } from "../../src/report/html-trace.js";
import { describeTrace, describeTraceEvent } from "../../src/report/index.js";

const jsonl = (...events: unknown[]) => events.map((e) => JSON.stringify(e)).join("\n");

describe("describeTraceEvent", () => {
  it("reads the scripted executor's tool calls, denials and final report", () => {
    const rows = describeTrace(
      jsonl(
        {
          type: "tool_call",
          seq: 1,
          tool: "Bash",
          input: { command: "npm test" },
          decision: "allow",
          rule: "allowed",
          result: { ok: true, exitCode: 1, stdout: "1 failing\n", stderr: "" },
        },
        {
          type: "tool_call",
          seq: 2,
          tool: "Write",
          input: { file_path: "../x", content: "a\nb" },
          decision: "deny",
          rule: "path-outside-root",
        },
        { type: "final", text: "done" },
      ),
    );
    expect(rows[0]).toEqual({
      line: 1,
      kind: "tool_call",
      tool: "Bash",
      input: "command: npm test",
      output: "ok · exit 1 · 1 failing",
      text: null,
      tone: null,
    });
    expect(rows[1]).toMatchObject({
      tool: "Write",
      input: 'file_path: ../x, content: "a\\nb"',
      output: "denied (path-outside-root)",
      tone: "deny",
    });
    expect(rows[2]).toMatchObject({ kind: "final", text: "done", tone: null });
  });

  it("reads Claude-like SDK messages: init, tool use with text, tool results, permissions, result", () => {
    const rows = describeTrace(
      jsonl(
        { type: "system", subtype: "init", model: "m-1" },
        {
          type: "assistant",
          message: {
            role: "assistant",
            content: [
              { type: "text", text: "Reading it." },
              { type: "tool_use", id: "t1", name: "Read", input: { file_path: "a.js" } },
            ],
          },
        },
        {
          type: "user",
          message: {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "t1", content: "denied", is_error: true },
            ],
          },
        },
        {
          type: "harness_permission",
          tool: "Bash",
          decision: "deny",
          rule: "command-not-allowed",
          reason: "curl is not allowed",
        },
        { type: "result", subtype: "success", num_turns: 3, total_cost_usd: 0.01, result: "ok" },
      ),
    );
    expect(rows.map((r) => r.kind)).toEqual([
      "system:init",
      "assistant",
      "user",
      "harness_permission",
      "result:success",
    ]);
    expect(rows[0]!.output).toBe('{"model":"m-1"}');
    expect(rows[1]).toMatchObject({ tool: "Read", input: "file_path: a.js", text: "Reading it." });
    expect(rows[2]).toMatchObject({ output: "denied", tone: "error" });
    expect(rows[3]).toMatchObject({
      tool: "Bash",
      input: "deny (command-not-allowed)",
      output: "curl is not allowed",
      tone: "deny",
    });
    expect(rows[4]).toMatchObject({ input: "3 turns, $0.01", text: "ok" });
  });

  it("reads Codex thread items and Pi session events", () => {
    const rows = describeTrace(
      jsonl(
        {
          type: "item.completed",
          item: {
            id: "1",
            type: "command_execution",
            command: "npm test",
            aggregated_output: "boom\n",
            exit_code: 2,
            status: "failed",
          },
        },
        {
          type: "item.completed",
          item: { id: "2", type: "file_change", changes: [{ path: "a.js", kind: "update" }] },
        },
        { type: "turn.completed", usage: { input_tokens: 10, output_tokens: 2 } },
        { type: "tool_execution_start", toolName: "bash", args: { command: "ls" } },
        {
          type: "tool_execution_end",
          toolName: "bash",
          result: { content: [{ type: "text", text: "a.js" }] },
          isError: false,
        },
        {
          type: "message_end",
          message: {
            role: "assistant",
            content: [{ type: "toolCall", name: "edit", arguments: { path: "a.js" } }],
          },
        },
      ),
    );
    expect(rows[0]).toMatchObject({
      kind: "item.completed: command_execution",
      tool: "shell",
      input: "npm test",
      output: "exit 2 · boom",
      tone: "error",
    });
    expect(rows[1]).toMatchObject({ tool: "apply_patch", input: "update a.js" });
    expect(rows[2]).toMatchObject({ input: "input_tokens 10, output_tokens 2" });
    expect(rows[3]).toMatchObject({ tool: "bash", input: "command: ls" });
    expect(rows[4]).toMatchObject({ tool: "bash", output: "a.js", tone: null });
    expect(rows[5]).toMatchObject({
      kind: "message_end: assistant",
      tool: "edit",
      input: "path: a.js",
    });
  });

  it("shows odd lines and unknown shapes as compact JSON or text instead of failing", () => {
    const rows = describeTrace(
      [
        "not json {",
        "42",
        "null",
        '["a",1]',
        '{"no":"type"}',
        '{"type":"new_kind_of_event","payload":{"deep":[1,2]}}',
        '{"type":"assistant","message":5}',
        '{"type":"item.completed","item":null}',
        '{"type":"tool_call","input":"raw string input","result":17}',
        "",
        '{"type":"turn_start"}',
      ].join("\n"),
    );
    expect(rows.map((r) => [r.line, r.kind, r.output])).toEqual([
      [1, "(not JSON)", "not json {"],
      [2, "(number)", "42"],
      [3, "(null)", "null"],
      [4, "(array)", '["a",1]'],
      [5, "(no type)", '{"no":"type"}'],
      [6, "new_kind_of_event", '{"payload":{"deep":[1,2]}}'],
      [7, "assistant", '{"message":5}'],
      [8, "item.completed", '{"item":null}'],
      [9, "tool_call", "17"],
      [11, "turn_start", null],
    ]);
    expect(rows[8]!.input).toBe("raw string input");
  });

  it("clips a huge field and says how much is left out", () => {
    const row = describeTraceEvent({ type: "final", text: "x".repeat(5000) }, 1);
    expect(row.text).toHaveLength(600 + "… (+4400 chars)".length);
    expect(row.text?.endsWith("… (+4400 chars)")).toBe(true);
  });
});

describe("renderTraceHtml", () => {
  it("escapes every part of every event", () => {
    const html = renderTraceHtml(
      `${jsonl(
        { type: "<img src=x>", payload: "</td><script>alert(1)</script>" },
        {
          type: "tool_call",
          tool: '<b onmouseover="x">',
          input: { "<k>": "<v>" },
          result: { ok: false, error: "<i>boom</i>" },
        },
        { type: "final", text: "<script>alert('final')</script>" },
      )}\n<not json & not html>`,
      "t/trace.jsonl",
    );
    expect(html).not.toMatch(/<(script|img|b |i>|k>|v>|not)/);
    expect(html).toContain("&lt;img src=x&gt;");
    expect(html).toContain("&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("&lt;b onmouseover=&quot;x&quot;&gt;");
    expect(html).toContain("&lt;k&gt;: &lt;v&gt;");
    expect(html).toContain("failed · &lt;i&gt;boom&lt;/i&gt;");
    expect(html).toContain("&lt;script&gt;alert(&#39;final&#39;)&lt;/script&gt;");
    expect(html).toContain("&lt;not json &amp; not html&gt;");
  });

  it("keeps the beginning and the end of a long trace with a note in between", () => {
    const events = Array.from({ length: 50 }, (_, i) => ({
      type: "final",
      text: `event ${i + 1}`,
    }));
    const html = renderTraceHtml(jsonl(...events), "t/trace.jsonl", 8);
    expect(html.match(/<td class="num">\d+<\/td>/g)).toHaveLength(8);
    expect(html).toContain("event 6<");
    expect(html).not.toContain("event 7<");
    expect(html).toContain("event 49<");
    expect(html).toContain("event 50<");
    expect(html).toContain(
      '… 42 event(s) not shown; the full trace is <a href="t/trace.jsonl">trace.jsonl</a> …',
    );
  });

  it("says so when the trace is empty", () => {
    expect(renderTraceHtml("", "t/trace.jsonl")).toContain("The trace is empty.");
  });
});
