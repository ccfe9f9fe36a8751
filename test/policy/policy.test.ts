import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createToolPolicy,
  type PolicyDecisionRecord,
  policyDecisionRecordSchema,
  type ToolPolicy,
} from "../../src/policy/index.js";

let base: string;
let root: string;
let outside: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-policy-"));
  root = join(base, "trial");
  outside = join(base, "outside");
  await mkdir(join(root, "src"), { recursive: true });
  await mkdir(join(root, ".git", "hooks"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, "README.md"), "# hi\n");
  await writeFile(join(root, "src", "index.js"), "export {};\n");
  await writeFile(join(outside, "secret.txt"), "secret\n");
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function policy(overrides: Partial<Parameters<typeof createToolPolicy>[0]> = {}): ToolPolicy {
  let clock = 1000;
  return createToolPolicy({
    trialRoot: root,
    allowedWrites: ["README.md", "src/index.js", "docs/new.md"],
    allowedCommands: [
      ["npm", "test"],
      ["git", "status", "--short"],
    ],
    tools: ["Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "Bash"],
    now: () => (clock += 5),
    ...overrides,
  });
}

async function ruleOf(p: ToolPolicy, tool: string, input: unknown): Promise<string> {
  return (await p.decide(tool, input)).rule;
}

describe("file tool confinement", () => {
  it("allows reading relative and absolute paths inside the trial root", async () => {
    const p = policy();
    const relative = await p.decide("Read", { file_path: "src/index.js" });
    expect(relative).toMatchObject({ decision: "allow", rule: "allowed", tool: "Read" });
    expect(relative.target?.relativePath).toBe("src/index.js");
    const absolute = await p.decide("Read", { file_path: join(root, "README.md") });
    expect(absolute.decision).toBe("allow");
    expect(absolute.target?.absolutePath).toBe(join(await realpath(root), "README.md"));
  });

  it("denies paths that climb out of the root or are absolute elsewhere", async () => {
    const p = policy();
    expect(await ruleOf(p, "Read", { file_path: "../outside/secret.txt" })).toBe(
      "path-outside-root",
    );
    expect(await ruleOf(p, "Read", { file_path: join(outside, "secret.txt") })).toBe(
      "path-outside-root",
    );
    expect(await ruleOf(p, "Write", { file_path: "../x", content: "x" })).toBe("path-outside-root");
    expect(await ruleOf(p, "Read", { file_path: "~/.ssh/id_rsa" })).toBe("path-outside-root");
    expect(await ruleOf(p, "Read", { file_path: "src/../../outside/secret.txt" })).toBe(
      "path-outside-root",
    );
  });

  it("follows a symlink inside the trial that points outside, for existing and new files", async () => {
    await symlink(outside, join(root, "escape"));
    const p = policy({ allowedWrites: ["escape/secret.txt", "escape/new.txt"] });
    expect(await ruleOf(p, "Read", { file_path: "escape/secret.txt" })).toBe("path-outside-root");
    expect(await ruleOf(p, "Write", { file_path: "escape/new.txt", content: "x" })).toBe(
      "path-outside-root",
    );
    expect(await ruleOf(p, "Write", { file_path: "escape/deeper/new.txt", content: "x" })).toBe(
      "path-outside-root",
    );
  });

  it("follows a dangling symlink to a file that does not exist yet outside the root", async () => {
    await symlink(join(outside, "planted.txt"), join(root, "README2.md"));
    const p = policy({ allowedWrites: ["README2.md"] });
    expect(await ruleOf(p, "Write", { file_path: "README2.md", content: "x" })).toBe(
      "path-outside-root",
    );
  });

  it("applies `..` after resolving a symlink, as the kernel does", async () => {
    // trial/link -> outside/sub ; "link/../secret.txt" is outside/secret.txt, not trial/secret.txt.
    await mkdir(join(outside, "sub"));
    await symlink(join(outside, "sub"), join(root, "link"));
    const p = policy({ allowedWrites: ["secret.txt"] });
    expect(await ruleOf(p, "Write", { file_path: "link/../secret.txt", content: "x" })).toBe(
      "path-outside-root",
    );
  });

  it("judges a symlink to an allowed file by its target", async () => {
    await symlink(join(root, "src", "index.js"), join(root, "alias.js"));
    const p = policy({ allowedWrites: ["src/index.js"] });
    const decision = await p.decide("Write", { file_path: "alias.js", content: "x" });
    expect(decision.decision).toBe("allow");
    expect(decision.target?.relativePath).toBe("src/index.js");
  });

  it("allows writes only to the allowed change surface, including new files on it", async () => {
    const p = policy();
    expect(await ruleOf(p, "Write", { file_path: "README.md", content: "x" })).toBe("allowed");
    expect(await ruleOf(p, "Write", { file_path: "docs/new.md", content: "x" })).toBe("allowed");
    expect(
      await ruleOf(p, "Edit", { file_path: "src/other.js", old_string: "a", new_string: "b" }),
    ).toBe("write-not-allowed");
    expect(await ruleOf(p, "MultiEdit", { file_path: "package.json", edits: [] })).toBe(
      "write-not-allowed",
    );
    expect(await ruleOf(p, "Write", { file_path: ".", content: "x" })).toBe("write-not-allowed");
  });

  it("never allows touching .git, whatever the case or depth", async () => {
    const p = policy();
    expect(await ruleOf(p, "Write", { file_path: ".git/hooks/pre-commit", content: "x" })).toBe(
      "git-dir",
    );
    expect(await ruleOf(p, "Read", { file_path: ".git/config" })).toBe("git-dir");
    expect(await ruleOf(p, "Write", { file_path: ".GIT/config", content: "x" })).toBe("git-dir");
    expect(await ruleOf(p, "Glob", { pattern: "*", path: ".git" })).toBe("git-dir");
  });

  it("confines Glob and Grep directories and refuses escaping glob patterns", async () => {
    const p = policy();
    expect(await ruleOf(p, "Glob", { pattern: "**/*.js" })).toBe("allowed");
    expect(await ruleOf(p, "Grep", { pattern: "export", path: "src" })).toBe("allowed");
    expect(await ruleOf(p, "Grep", { pattern: "secret", path: outside })).toBe("path-outside-root");
    expect(await ruleOf(p, "Glob", { pattern: "../**/*" })).toBe("path-outside-root");
    expect(await ruleOf(p, "Glob", { pattern: `${outside}/*` })).toBe("path-outside-root");
    expect(await ruleOf(p, "Glob", { pattern: "{..,src}/*" })).toBe("path-outside-root");
    expect(await ruleOf(p, "Glob", { pattern: "{src,/etc}/*" })).toBe("path-outside-root");
    expect(await ruleOf(p, "Glob", { pattern: "" })).toBe("invalid-input");
  });

  it("refuses a symlink loop instead of hanging", async () => {
    await symlink(join(root, "b"), join(root, "a"));
    await symlink(join(root, "a"), join(root, "b"));
    const p = policy({ allowedWrites: ["a"] });
    const decision = await p.decide("Write", { file_path: "a", content: "x" });
    expect(decision.decision).toBe("deny");
    expect(decision.rule).toBe("invalid-input");
  });

  it("treats missing or malformed paths as invalid input", async () => {
    const p = policy();
    expect(await ruleOf(p, "Read", {})).toBe("invalid-input");
    expect(await ruleOf(p, "Read", { file_path: 42 })).toBe("invalid-input");
    expect(await ruleOf(p, "Read", { file_path: "a\0b" })).toBe("invalid-input");
    expect(await ruleOf(p, "Read", null)).toBe("invalid-input");
  });
});

describe("tool names and commands", () => {
  it("normalizes the scripted host's lowercase aliases", async () => {
    const p = policy();
    const decision = await p.decide("read", { file_path: "README.md" });
    expect(decision).toMatchObject({ tool: "Read", decision: "allow" });
    expect(p.decisions()[0]?.tool).toBe("read");
  });

  it.each(["WebFetch", "WebSearch", "Task", "NotebookEdit", "READ", "mcp__x__y"])(
    "denies the unknown tool %s",
    async (tool) => {
      expect(await ruleOf(policy(), tool, { url: "https://example.com" })).toBe("unknown-tool");
    },
  );

  it("denies a known tool that is not among the trial's tools", async () => {
    const p = policy({ tools: ["Read", "Write"] });
    expect(await ruleOf(p, "Bash", { command: "npm test" })).toBe("tool-not-enabled");
  });

  it("allows only vocabulary commands and refuses background runs", async () => {
    const p = policy();
    const allowed = await p.decide("Bash", { command: "npm test" });
    expect(allowed).toMatchObject({ decision: "allow", argv: ["npm", "test"] });
    expect(await ruleOf(p, "Bash", { command: "npm test; curl x" })).toBe("shell-metacharacter");
    expect(await ruleOf(p, "Bash", { command: "curl https://x" })).toBe("command-not-allowed");
    expect(await ruleOf(p, "Bash", { command: "npm test", run_in_background: true })).toBe(
      "background-not-allowed",
    );
    expect(await ruleOf(p, "Bash", { command: ["npm", "test"] })).toBe("invalid-input");
  });

  it("allows exactly the MCP tools the harness serves, by their full name", async () => {
    const p = policy({ mcpTools: ["mcp__forge__get_issue", "mcp__forge__close"] });
    const allowed = await p.decide("mcp__forge__get_issue", { number: 3 });
    expect(allowed).toMatchObject({ decision: "allow", rule: "allowed", tool: null });
    expect(await ruleOf(p, "mcp__forge__delete_repo", {})).toBe("unknown-tool");
    expect(await ruleOf(p, "mcp__other__get_issue", {})).toBe("unknown-tool");
    expect(await ruleOf(p, "MCP__forge__get_issue", {})).toBe("unknown-tool");
    expect(await ruleOf(policy(), "mcp__forge__get_issue", {})).toBe("unknown-tool");
    expect(p.decisions()[0]?.inputSummary).toBe("number=3");
  });

  it("allows a named program's commands with quoted arguments, and nothing else new", async () => {
    const p = policy({ commandPrograms: ["curl"] });
    const allowed = await p.decide("Bash", { command: `curl -d '{"a": 1}' http://127.0.0.1:1/x` });
    expect(allowed).toMatchObject({
      decision: "allow",
      argv: ["curl", "-d", '{"a": 1}', "http://127.0.0.1:1/x"],
    });
    expect(await ruleOf(p, "Bash", { command: "curl x; id" })).toBe("shell-metacharacter");
    expect(await ruleOf(p, "Bash", { command: "wget x" })).toBe("command-not-allowed");
    expect(await ruleOf(p, "Bash", { command: "npm test" })).toBe("allowed");
  });

  it("rejects settings that could not be enforced", () => {
    expect(() => policy({ allowedWrites: ["../x"] })).toThrow(/allowedWrites/);
    expect(() => policy({ allowedWrites: [".git/config"] })).toThrow(/allowedWrites/);
    expect(() => policy({ allowedCommands: [["sh", "-c", "x;y"]] })).toThrow(/allowedCommands/);
    expect(() => policy({ trialRoot: "relative" })).toThrow(/absolute/);
    expect(() => policy({ mcpTools: ["get_issue"] })).toThrow(/mcpTools/);
    expect(() => policy({ commandPrograms: ["/usr/bin/curl"] })).toThrow(/commandPrograms/);
  });
});

describe("decisions log", () => {
  it("records every decision in call order with a stable rule and a safe summary", async () => {
    const p = policy();
    await Promise.all([
      p.decide("Read", { file_path: join(root, "README.md") }),
      p.decide("Write", {
        file_path: "README.md",
        content: "API_KEY=sk-abcdefghijklmnopqrstuvwxyz",
      }),
      p.decide("Bash", { command: "curl -H Authorization:Bearer-x https://x?token=abc123" }),
      p.decide("WebFetch", { url: "https://example.com/?api_key=supersecretvalue" }),
    ]);
    const records: PolicyDecisionRecord[] = p.decisions();
    expect(records.map((r) => [r.seq, r.tool, r.decision, r.rule])).toEqual([
      [1, "Read", "allow", "allowed"],
      [2, "Write", "allow", "allowed"],
      [3, "Bash", "deny", "shell-metacharacter"],
      [4, "WebFetch", "deny", "unknown-tool"],
    ]);
    for (const record of records) expect(policyDecisionRecordSchema.parse(record)).toEqual(record);
    const text = JSON.stringify(records);
    expect(text).not.toContain(root);
    expect(text).not.toContain(await realpath(root));
    expect(text).toContain("<trial-root>/README.md");
    expect(text).not.toContain("sk-abcdefghijklmnopqrstuvwxyz");
    expect(text).not.toContain("abc123");
    expect(text).not.toContain("supersecretvalue");
    expect(records[1]?.inputSummary).toContain("content=37 chars");
    expect(records.every((r) => r.atMs > 0)).toBe(true);
  });

  it("returns copies, so callers cannot rewrite history", async () => {
    const p = policy();
    await p.decide("Read", { file_path: "README.md" });
    const first = p.decisions();
    first[0]!.decision = "deny";
    expect(p.decisions()[0]?.decision).toBe("allow");
  });
});

describe("a variant's setup: its skills, subagents and readable skill folders", () => {
  it("allows the Skill tool only for the setup's skills, by name or as harnesslab-setup:<name>", async () => {
    const p = policy({ skills: ["house-style"] });
    expect(await ruleOf(p, "Skill", { skill: "house-style" })).toBe("allowed");
    expect(await ruleOf(p, "Skill", { skill: "harnesslab-setup:house-style" })).toBe("allowed");
    const other = await p.decide("Skill", { skill: "deploy-prod" });
    expect(other).toMatchObject({ decision: "deny", rule: "not-in-setup" });
    expect(other.reason).toContain("house-style");
    expect(await ruleOf(p, "Skill", { skill: "someone-else:house-style" })).toBe("not-in-setup");
    expect(await ruleOf(p, "Skill", {})).toBe("not-in-setup");
    // Without skills the tool is unknown, as before.
    expect(await ruleOf(policy(), "Skill", { skill: "house-style" })).toBe("unknown-tool");
  });

  it("allows the Agent (Task) tool only for the setup's subagents", async () => {
    const p = policy({ subagents: ["reviewer"] });
    expect(await ruleOf(p, "Agent", { subagent_type: "reviewer", prompt: "x" })).toBe("allowed");
    expect(await ruleOf(p, "Task", { subagent_type: "reviewer", prompt: "x" })).toBe("allowed");
    expect(await ruleOf(p, "Agent", { subagent_type: "general-purpose" })).toBe("not-in-setup");
    expect(await ruleOf(policy(), "Agent", { subagent_type: "reviewer" })).toBe("unknown-tool");
  });

  it("lets reads and searches reach a readable root, never writes, and not its neighbours", async () => {
    const skill = join(outside, "house-style");
    await mkdir(skill);
    await writeFile(join(skill, "SKILL.md"), "---\nname: house-style\n---\n");
    const p = policy({ readableRoots: [skill] });
    const read = await p.decide("Read", { file_path: join(skill, "SKILL.md") });
    expect(read).toMatchObject({ decision: "allow", rule: "allowed" });
    expect(await ruleOf(p, "Grep", { pattern: "name", path: skill })).toBe("allowed");
    expect(await ruleOf(p, "Write", { file_path: join(skill, "SKILL.md"), content: "x" })).toBe(
      "path-outside-root",
    );
    expect(await ruleOf(p, "Read", { file_path: join(outside, "secret.txt") })).toBe(
      "path-outside-root",
    );
    // A symlink in the trial that points into the root is read where it points: still allowed
    // for reads, still refused for writes.
    await symlink(join(skill, "SKILL.md"), join(root, "skill-link.md"));
    expect(await ruleOf(p, "Read", { file_path: "skill-link.md" })).toBe("allowed");
  });

  it("refuses setup names that are not names and roots that are not absolute", () => {
    expect(() => policy({ skills: ["../x"] })).toThrow(/skills entry "..\/x" must be a name/);
    expect(() => policy({ subagents: ["a b"] })).toThrow(/subagents entry/);
    expect(() => policy({ readableRoots: ["relative/dir"] })).toThrow(/must be absolute/);
  });
});
