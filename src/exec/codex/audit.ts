// Auditing Codex's actions against the trial's policy (pure). Codex has no permission callback,
// so every command and file change it reports is put to the same policy afterwards, as the
// calls a callback-driven host would have made: a shell command is a `Bash` call (or, for a
// handful of plain read-only commands and pipelines, the `Read`/`Glob`/`Grep` calls they amount
// to), a file change is a `Write` or `Edit` of each path.
import { isAbsolute, join, resolve } from "node:path";
import { isPathInside } from "../../shared/index.js";
import type { RolloutCall } from "./rollout.js";
import type { CodexThreadItem } from "./sdk-types.js";

/** One policy question derived from a Codex item. */
export interface AuditCall {
  tool: string;
  input: Record<string, unknown>;
}

const SHELL_WRAPPER = /^(?:\S*\/)?(?:bash|sh|zsh|dash)\s+-l?c\s+([\s\S]+)$/;

const PIPE = Symbol("pipe");

/** Words and unquoted single pipes; null at anything else a shell would interpret. */
function tokenize(text: string, allowPipe: boolean): (string | typeof PIPE)[] | null {
  const tokens: (string | typeof PIPE)[] = [];
  let word = "";
  let inWord = false;
  const endWord = () => {
    if (inWord) tokens.push(word);
    word = "";
    inWord = false;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === " " || c === "\t") {
      endWord();
      i += 1;
    } else if (c === "|" && allowPipe && text[i + 1] !== "|") {
      endWord();
      tokens.push(PIPE);
      i += 1;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      word += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0) return null;
      const inner = text.slice(i + 1, end);
      // Inside double quotes a shell still expands $, ` and \ (and ! interactively).
      if (/[$`\\!]/.test(inner)) return null;
      word += inner;
      inWord = true;
      i = end + 1;
    } else if (/[A-Za-z0-9_./:=@%+,-]/.test(c)) {
      word += c;
      inWord = true;
      i += 1;
    } else {
      return null;
    }
  }
  endWord();
  return tokens;
}

/** Plain words and quoted strings only; null when the text has anything a shell would interpret. */
export function splitShellWords(text: string): string[] | null {
  return tokenize(text, false) as string[] | null;
}

/** The words of each stage of a plain `a | b | c` pipeline; null for anything else. */
function splitPipeline(text: string): string[][] | null {
  const tokens = tokenize(text, true);
  if (tokens === null) return null;
  const stages: string[][] = [[]];
  for (const token of tokens) {
    if (token === PIPE) stages.push([]);
    else stages.at(-1)!.push(token);
  }
  return stages.some((stage) => stage.length === 0) ? null : stages;
}

/**
 * The script inside Codex's shell wrapper (`/bin/bash -lc '<script>'`), with the wrapper's
 * quoting undone; the command itself when it is not wrapped.
 */
export function unwrapShellCommand(command: string): string {
  const match = SHELL_WRAPPER.exec(command.trim());
  if (!match) return command;
  const argument = match[1]!.trim();
  // Codex quotes the script as one shell word: '…' with '\'' for embedded quotes, or "…".
  if (argument.startsWith("'")) {
    const unquoted = unquoteSingle(argument);
    if (unquoted !== null) return unquoted;
  } else if (argument.startsWith('"') && argument.endsWith('"') && argument.length >= 2) {
    const inner = argument.slice(1, -1);
    if (!/[$`\\"]/.test(inner)) return inner;
  } else if (!/\s/.test(argument)) {
    return argument;
  }
  return command;
}

/** `'a'\''b'` → `a'b`; null unless the whole text is one single-quoted shell word. */
function unquoteSingle(text: string): string | null {
  let out = "";
  let i = 0;
  while (i < text.length) {
    if (text[i] === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      out += text.slice(i + 1, end);
      i = end + 1;
    } else if (text.startsWith("\\'", i)) {
      out += "'";
      i += 2;
    } else {
      return null;
    }
  }
  return out;
}

const LINE_RANGE = /^\d+(,(\d+|\$))?p$/;
const SHORT_FLAGS = (allowed: string) => new RegExp(`^-[${allowed}]+$`);

/** Splits `argv` into flags (checked) and operands; null when a flag is not a known value-free one. */
function operandsAfterFlags(
  argv: readonly string[],
  flagOk: (flag: string) => boolean,
): string[] | null {
  const operands: string[] = [];
  let flagsDone = false;
  for (const word of argv) {
    if (!flagsDone && word === "--") {
      flagsDone = true;
    } else if (!flagsDone && word.startsWith("-") && word !== "-") {
      if (!flagOk(word)) return null;
    } else {
      operands.push(word);
    }
  }
  return operands;
}

const reads = (paths: readonly string[]): AuditCall[] | null =>
  paths.length === 0 ? null : paths.map((file_path) => ({ tool: "Read", input: { file_path } }));

/**
 * The read-only calls a plain command amounts to, or null when it is not one of the recognized
 * forms (it is then audited as a `Bash` call against the command vocabulary).
 */
export function readOnlyCalls(argv: readonly string[]): AuditCall[] | null {
  const [program, ...rest] = argv;
  switch (program) {
    case "cat":
      return reads(operandsAfterFlags(rest, (f) => SHORT_FLAGS("nAbsv").test(f)) ?? []);
    case "nl":
      return reads(operandsAfterFlags(rest, (f) => /^-b[at]$/.test(f)) ?? []);
    case "wc":
      return reads(operandsAfterFlags(rest, (f) => SHORT_FLAGS("lcwm").test(f)) ?? []);
    case "head":
    case "tail": {
      // `-n 40` takes a value; fold it before checking the rest.
      const folded: string[] = [];
      for (let i = 0; i < rest.length; i += 1) {
        const word = rest[i]!;
        if ((word === "-n" || word === "-c") && /^\d+$/.test(rest[i + 1] ?? "")) {
          i += 1;
        } else {
          folded.push(word);
        }
      }
      const files = operandsAfterFlags(folded, (f) => /^-\d+$|^-n\d+$/.test(f));
      return files && files.length === 1 ? reads(files) : null;
    }
    case "sed": {
      if (rest[0] !== "-n" || !LINE_RANGE.test(rest[1] ?? "")) return null;
      const files = rest.slice(2);
      return files.length === 1 && !files[0]!.startsWith("-") ? reads(files) : null;
    }
    case "ls": {
      const dirs = operandsAfterFlags(rest, (f) => SHORT_FLAGS("1aAlhRtrSdF").test(f));
      if (dirs === null) return null;
      return (dirs.length === 0 ? ["."] : dirs).map((path) => ({
        tool: "Glob",
        input: { pattern: "*", path },
      }));
    }
    case "rg":
    case "grep": {
      const flagOk =
        program === "rg"
          ? (f: string) =>
              SHORT_FLAGS("niSFwlcuH").test(f) ||
              [
                "--files",
                "--line-number",
                "--no-heading",
                "--hidden",
                "--fixed-strings",
                "--ignore-case",
              ].includes(f)
          : (f: string) => SHORT_FLAGS("rRniIlwFEHhc").test(f);
      const operands = operandsAfterFlags(rest, flagOk);
      if (operands === null) return null;
      if (program === "rg" && rest.includes("--files")) {
        return (operands.length === 0 ? ["."] : operands).map((path) => ({
          tool: "Glob",
          input: { pattern: "**/*", path },
        }));
      }
      const [pattern, ...paths] = operands;
      if (pattern === undefined || pattern === "") return null;
      return (paths.length === 0 ? ["."] : paths).map((path) => ({
        tool: "Grep",
        input: { pattern, path },
      }));
    }
    default:
      return null;
  }
}

/** Whether a pipeline stage only filters its input: it names no file and runs nothing. */
function isStdinFilter(argv: readonly string[]): boolean {
  const [program, ...rest] = argv;
  switch (program) {
    case "head":
    case "tail":
      return (
        rest.length === 0 ||
        (rest.length === 1 && /^-\d+$|^-n\d+$/.test(rest[0]!)) ||
        (rest.length === 2 && (rest[0] === "-n" || rest[0] === "-c") && /^\d+$/.test(rest[1]!))
      );
    case "sed":
      return rest.length === 2 && rest[0] === "-n" && LINE_RANGE.test(rest[1]!);
    case "wc":
    case "nl":
    case "cat":
    case "sort":
    case "uniq":
      return rest.every(
        (word) => /^-[A-Za-z]+$/.test(word) && !/[^lcwmbatnrufA]/.test(word.slice(1)),
      );
    case "grep":
    case "rg": {
      const operands = operandsAfterFlags(rest, (f) => SHORT_FLAGS("niFwvcEHho").test(f));
      return operands !== null && operands.length === 1 && operands[0] !== "";
    }
    default:
      return false;
  }
}

/** The reads of a plain read command, or of a pipeline whose later stages only filter. */
function readOnlyScript(script: string): AuditCall[] | null {
  const stages = splitPipeline(script);
  if (stages === null) return null;
  const [first, ...filters] = stages;
  if (first === undefined || !filters.every(isStdinFilter)) return null;
  return readOnlyCalls(first);
}

/**
 * The policy calls of one shell script run in `cwd`: the read-only forms become reads of paths
 * resolved against `cwd`; anything else is a `Bash` call, plus a `Read` of `cwd` when the
 * command ran outside the trial root (the vocabulary is meant for the trial root).
 */
export function commandAuditCalls(script: string, cwd: string, trialRoot: string): AuditCall[] {
  const asReads = readOnlyScript(script);
  if (asReads) {
    if (cwd === trialRoot) return asReads;
    return asReads.map((call) => {
      const key = call.tool === "Read" ? "file_path" : "path";
      const path = call.input[key];
      return typeof path === "string" && !isAbsolute(path)
        ? { tool: call.tool, input: { ...call.input, [key]: join(cwd, path) } }
        : call;
    });
  }
  const calls: AuditCall[] = [{ tool: "Bash", input: { command: script } }];
  if (!isPathInside(trialRoot, cwd)) calls.push({ tool: "Read", input: { file_path: cwd } });
  return calls;
}

const PATCH_FILE = /^\*\*\* (Add|Delete|Update) File: (.+)$/;
const PATCH_MOVE = /^\*\*\* Move to: (.+)$/;

/** Files an `apply_patch` input names, with what it does to each. */
export function patchTargets(patch: string): { path: string; kind: "add" | "delete" | "update" }[] {
  const targets: { path: string; kind: "add" | "delete" | "update" }[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const file = PATCH_FILE.exec(line);
    if (file) {
      const kind = file[1] === "Add" ? "add" : file[1] === "Delete" ? "delete" : "update";
      targets.push({ path: file[2]!.trim(), kind });
      continue;
    }
    const move = PATCH_MOVE.exec(line);
    if (move) targets.push({ path: move[1]!.trim(), kind: "add" });
  }
  return targets;
}

const fileCall = (kind: "add" | "delete" | "update", file_path: string): AuditCall => ({
  // An added or deleted file is written as a whole; an updated one is edited.
  tool: kind === "update" ? "Edit" : "Write",
  input: { file_path },
});

/** Tools that plan, ask or track goals: they touch neither the workspace nor the network. */
const INERT_TOOLS = new Set([
  "update_plan",
  "request_user_input",
  "get_goal",
  "create_goal",
  "update_goal",
  "tool_search",
]);

/**
 * The policy calls of one call from the rollout. `counted` is false for calls that are not
 * actions (planning tools, an empty `write_stdin` that only polls a running command).
 */
export function rolloutAuditCalls(
  call: RolloutCall,
  trialRoot: string,
): { counted: boolean; calls: AuditCall[] } {
  const args = call.arguments;
  const str = (value: unknown) => (typeof value === "string" ? value : null);
  const reported = call.reported;
  switch (call.name) {
    case "exec_command":
    case "shell":
    case "shell_command":
    case "local_shell": {
      const workdir = str(args.workdir);
      const reportedCwd =
        reported?.type === "CommandExecution" && "cwd" in reported ? reported.cwd : null;
      const cwd = reportedCwd ?? (workdir ? resolve(trialRoot, workdir) : trialRoot);
      let script = str(args.cmd) ?? str(args.command);
      if (script === null && Array.isArray(args.command)) {
        const argv = args.command.filter((w): w is string => typeof w === "string");
        script = argv.length === 3 && /^-l?c$/.test(argv[1] ?? "") ? argv[2]! : argv.join(" ");
      }
      return { counted: true, calls: commandAuditCalls(script ?? "", cwd, trialRoot) };
    }
    case "apply_patch": {
      if (reported?.type === "FileChange" && "changes" in reported) {
        const calls: AuditCall[] = [];
        for (const change of reported.changes) {
          calls.push(fileCall(change.kind, change.path));
          if (change.movePath) calls.push(fileCall("add", change.movePath));
        }
        return { counted: true, calls };
      }
      const patch =
        call.kind === "custom" ? call.input : (str(args.input) ?? str(args.patch) ?? "");
      const calls = patchTargets(patch).map((t) =>
        fileCall(t.kind, isAbsolute(t.path) ? t.path : join(trialRoot, t.path)),
      );
      return { counted: true, calls };
    }
    case "write_stdin": {
      const chars = str(args.chars) ?? "";
      if (chars.trim() === "") return { counted: false, calls: [] };
      return { counted: true, calls: [{ tool: "Bash", input: { command: chars.trim() } }] };
    }
    case "view_image":
      return {
        counted: true,
        calls: [{ tool: "Read", input: { file_path: str(args.path) ?? "" } }],
      };
    case "web_search":
      return { counted: true, calls: [{ tool: "WebSearch", input: { query: args.query } }] };
    default:
      if (INERT_TOOLS.has(call.name)) return { counted: false, calls: [] };
      // A tool the harness does not know (an MCP tool, a new built-in): outside the policy.
      return { counted: true, calls: [{ tool: call.name || "(unnamed tool)", input: args }] };
  }
}

/**
 * A tool as the policy knows it (`mcp__<server>__<tool>`) from the name Codex recorded: Codex
 * names a server's namespace with each character outside [A-Za-z0-9_] as "_" (`widgets-mcp` is
 * offered as `mcp__widgets_mcp`). A name that fits no server, or fits two, stays as recorded
 * (and is denied as an unknown tool).
 */
export function serverNamed(tool: string, servers: readonly string[]): string {
  if (!tool.startsWith("mcp__")) return tool;
  const candidates = servers.filter((server) => {
    const codexName = `mcp__${server.replace(/[^A-Za-z0-9_]/g, "_")}__`;
    return codexName !== `mcp__${server}__` && tool.startsWith(codexName);
  });
  const [server] = candidates;
  if (server === undefined || candidates.length > 1) return tool;
  return `mcp__${server}__${tool.slice(`mcp__${server}__`.length)}`;
}

/** The policy calls one streamed Codex item stands for; empty for items that are not actions. */
export function auditCalls(item: CodexThreadItem, trialRoot: string): AuditCall[] {
  switch (item.type) {
    case "command_execution":
      return commandAuditCalls(unwrapShellCommand(item.command), trialRoot, trialRoot);
    case "file_change":
      return item.changes.map((change) => fileCall(change.kind, change.path));
    case "mcp_tool_call":
      // Decided as the policy decides any MCP tool: the variant's own servers' tools are
      // allowed, every other one (an unknown server) is not.
      return [{ tool: `mcp__${item.server}__${item.tool}`, input: { arguments: item.arguments } }];
    case "web_search":
      return [{ tool: "WebSearch", input: { query: item.query } }];
    default:
      return [];
  }
}

/** Whether an item is one of the agent's tool calls (counted in the receipt). */
export function isToolCallItem(item: CodexThreadItem): boolean {
  return (
    item.type === "command_execution" ||
    item.type === "file_change" ||
    item.type === "mcp_tool_call" ||
    item.type === "web_search"
  );
}
