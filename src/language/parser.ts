// Hand-written recursive-descent parser with error recovery. Keywords are contextual: the lexer
// only produces words, and the parser decides from position whether a word is a keyword, so a
// component may be called `tool` and an input `kind`. Recovery works at two levels: inside a
// block, an unknown token is skipped until the next clause keyword or the closing brace; at the
// top level, until the next declaration keyword. After an error, further errors are suppressed
// until parsing is back on track ("panic mode"), so one mistake yields one diagnostic.
import {
  COMPONENT_KINDS_V2,
  type ComponentKind,
  DEGRADATION_POLICIES,
  type DegradationPolicy,
  DURATION_UNITS_MS,
  type DurationUnit,
  HOOK_EVENTS,
  PERMISSION_ACCESSES,
  PERMISSION_DOMAINS,
  type PermissionAccess,
  type PermissionDomain,
  type SettingValue,
  STRENGTHS,
  type Strength,
} from "../ir/index.js";
import { decodeString, T, type TokenStream } from "./lexer.js";
import type {
  BindingDecl,
  ComponentDecl,
  CompositionDecl,
  Declaration,
  HookNode,
  IncludeNode,
  NameNode,
  PluginDecl,
  ProgramNode,
  RawDiagnostic,
  RequirementNode,
  SettingNode,
  Span,
  ValueNode,
} from "./types.js";

const DECLARATION_KEYWORDS: ReadonlySet<string> = new Set([
  "component",
  "binding",
  "plugin",
  "composition",
]);
const COMPONENT_CLAUSES = [
  "kind",
  "description",
  "input",
  "output",
  "permissions",
  "source",
  "mcp",
  "cli",
  "hook",
  "tools",
] as const;
const PROGRAM_CLAUSES = ["command", "args", "env"] as const;
const HOOK_CLAUSES = ["event", "command"] as const;
const BINDING_CLAUSES = ["mechanism", "strength", "notes"] as const;
const PLUGIN_CLAUSES = ["version", "provides"] as const;
const COMPOSITION_CLAUSES = ["target", "include", "require", "configure"] as const;
const REQUIREMENT_CLAUSES = ["preferred", "minimum", "on-degrade"] as const;

const MAX_SHOWN = 40;

function quoteList(values: readonly string[]): string {
  const quoted = values.map((v) => `"${v}"`);
  if (quoted.length <= 1) return quoted.join("");
  return `${quoted.slice(0, -1).join(", ")} or ${quoted[quoted.length - 1]}`;
}

function oneOf(values: readonly string[]): string {
  return values.length === 1 ? `"${values[0]}"` : `one of ${quoteList(values)}`;
}

export function parseTokens(
  tokens: TokenStream,
  file: number,
  diagnostics: RawDiagnostic[],
): Declaration[] {
  return new Parser(tokens, file, diagnostics).parseFile();
}

class Parser {
  private i = 0;
  private panic = false;
  /** Clause keywords of the innermost block being parsed (used to spot a missing value). */
  private clauses: readonly string[] = [];
  private readonly last: number;

  constructor(
    private readonly tokens: TokenStream,
    private readonly file: number,
    private readonly diagnostics: RawDiagnostic[],
  ) {
    this.last = tokens.count - 1;
  }

  // ---- token access -------------------------------------------------------------------------

  private kind(at = this.i): number {
    return this.tokens.kinds[Math.min(at, this.last)]!;
  }

  private isWord(word: string, at = this.i): boolean {
    const { tokens } = this;
    if (at > this.last || tokens.kinds[at] !== T.Word) return false;
    const start = tokens.starts[at]!;
    return tokens.ends[at]! - start === word.length && tokens.text.startsWith(word, start);
  }

  private textOf(at = this.i): string {
    const index = Math.min(at, this.last);
    return this.tokens.text.slice(this.tokens.starts[index], this.tokens.ends[index]);
  }

  private span(at = this.i): Span {
    const index = Math.min(at, this.last);
    const { tokens } = this;
    const column = tokens.columns[index]!;
    return {
      file: this.file,
      line: tokens.lines[index]!,
      column,
      endColumn: column + (tokens.ends[index]! - tokens.starts[index]!),
    };
  }

  private advance(): void {
    if (this.i < this.last) this.i++;
  }

  private name(at = this.i): NameNode {
    return { text: this.textOf(at), span: this.span(at) };
  }

  private where(span: Span): string {
    return `${span.line}:${span.column}`;
  }

  /** How a token reads in a message: `"banana"`, `the string "…"`, `end of file`. */
  private describe(at = this.i): string {
    const kind = this.kind(at);
    if (kind === T.EOF) return "end of file";
    let text = this.textOf(at);
    if (text.length > MAX_SHOWN) text = `${text.slice(0, MAX_SHOWN)}…`;
    if (kind === T.String) return `the string ${text}`;
    return `"${text}"`;
  }

  private isFirstOnLine(at: number): boolean {
    return at === 0 || this.tokens.lines[at - 1]! < this.tokens.lines[at]!;
  }

  /** A declaration keyword followed by a name: where the next declaration most likely begins. */
  private atDeclarationStart(at = this.i): boolean {
    if (this.kind(at) !== T.Word) return false;
    if (!DECLARATION_KEYWORDS.has(this.textOf(at))) return false;
    const next = this.kind(at + 1);
    return next === T.Word || (next === T.LBrace && this.isFirstOnLine(at));
  }

  private isClauseWord(at: number): boolean {
    if (this.kind(at) !== T.Word) return false;
    return this.clauses.includes(this.textOf(at));
  }

  /**
   * Whether the value a clause asks for is simply absent: the block or file ends, the next
   * declaration starts, or the next clause of the block starts on a later line.
   */
  private valueMissing(at = this.i): boolean {
    const kind = this.kind(at);
    if (kind === T.RBrace || kind === T.EOF || kind === T.LBrace) return true;
    if (this.atDeclarationStart(at) && this.isFirstOnLine(at)) return true;
    return this.isClauseWord(at) && this.isFirstOnLine(at);
  }

  // ---- diagnostics --------------------------------------------------------------------------

  /** Reports a syntax error unless one is already being recovered from. */
  private error(code: string, span: Span, message: string): void {
    if (this.panic) return;
    this.panic = true;
    // The lexer already reported a malformed literal; a second message about it adds nothing.
    const current = this.span();
    const atBadLiteral =
      this.kind() === T.Bad && span.line === current.line && span.column === current.column;
    if (atBadLiteral) return;
    this.diagnostics.push({ span, code, severity: "error", message });
  }

  /** Reports a problem that is independent of any syntax error being recovered from. */
  private report(code: string, span: Span, message: string): void {
    this.diagnostics.push({ span, code, severity: "error", message });
  }

  private expected(what: string, after: string, code = "HL1005"): void {
    this.error(code, this.span(), `expected ${what} ${after}, found ${this.describe()}`);
  }

  /** Skips one unexpected token; a bracketed group is skipped as a whole. */
  private skipUnexpected(): void {
    const kind = this.kind();
    if (kind === T.EOF) return;
    this.advance();
    if (kind !== T.LBrace && kind !== T.LBracket) return;
    let depth = 1;
    while (depth > 0) {
      const k = this.kind();
      if (k === T.EOF) return;
      if (this.atDeclarationStart() && this.isFirstOnLine(this.i)) return;
      if (k === T.LBrace || k === T.LBracket) depth++;
      else if (k === T.RBrace || k === T.RBracket) depth--;
      this.advance();
    }
  }

  // ---- file ---------------------------------------------------------------------------------

  parseFile(): Declaration[] {
    const declarations: Declaration[] = [];
    while (this.kind() !== T.EOF) {
      if (this.kind() === T.Word && DECLARATION_KEYWORDS.has(this.textOf())) {
        this.panic = false;
        declarations.push(this.parseDeclaration());
        continue;
      }
      if (this.kind() === T.RBrace) {
        this.error("HL1005", this.span(), 'unexpected "}": no block is open here');
      } else {
        this.expected(
          `a declaration (${quoteList([...DECLARATION_KEYWORDS])})`,
          "at the top level",
        );
      }
      this.advance();
      while (this.kind() !== T.EOF && !this.atDeclarationStart()) this.advance();
    }
    return declarations;
  }

  private parseDeclaration(): Declaration {
    const keyword = this.textOf();
    const span = this.span();
    this.advance();
    switch (keyword) {
      case "component":
        return this.parseComponent(span);
      case "binding":
        return this.parseBinding(span);
      case "plugin":
        return this.parsePlugin(span);
      default:
        return this.parseComposition(span);
    }
  }

  /** Reads a name; keywords are allowed as names. */
  private expectName(what: string, after: string): NameNode | undefined {
    if (this.kind() === T.Word && !this.valueMissing()) {
      const node = this.name();
      this.advance();
      return node;
    }
    this.expected(what, after);
    this.skipBadValue();
    return undefined;
  }

  /** After a wrong value, consumes it when it plainly was meant as the value (same line, not structure). */
  private skipBadValue(): void {
    const kind = this.kind();
    if (kind === T.Bad) {
      this.advance();
      return;
    }
    if (
      kind === T.Word ||
      kind === T.String ||
      kind === T.Int ||
      kind === T.Duration ||
      kind === T.Range
    ) {
      if (!this.valueMissing() && !this.isFirstOnLine(this.i)) this.advance();
    }
  }

  private expectEnum<V extends string>(
    values: readonly V[],
    after: string,
  ): ValueNode<V> | undefined {
    if (this.kind() === T.Word && !this.valueMissing()) {
      const text = this.textOf();
      const span = this.span();
      this.advance();
      if ((values as readonly string[]).includes(text)) return { value: text as V, span };
      this.error("HL1006", span, `expected ${oneOf(values)} ${after}, found "${text}"`);
      return undefined;
    }
    this.expected(oneOf(values), after);
    this.skipBadValue();
    return undefined;
  }

  private expectString(after: string): ValueNode<string> | undefined {
    if (this.kind() === T.String) {
      const span = this.span();
      const value = decodeString(
        this.tokens.text,
        this.tokens.starts[this.i]!,
        this.tokens.ends[this.i]!,
      );
      this.advance();
      return { value, span };
    }
    this.expected('a string in double quotes ("…")', after);
    this.skipBadValue();
    return undefined;
  }

  /**
   * Expects `{` after a declaration header. On a mismatch, skips to the next `{` (and parses the
   * block) unless a new declaration starts first.
   */
  private openBlock(what: string, after: string): Span | undefined {
    if (this.kind() === T.LBrace) {
      const span = this.span();
      this.advance();
      return span;
    }
    this.expected(`"{" to open the ${what} block`, after);
    while (this.kind() !== T.EOF && !this.atDeclarationStart()) {
      if (this.kind() === T.LBrace) {
        const span = this.span();
        this.advance();
        return span;
      }
      this.advance();
    }
    return undefined;
  }

  /**
   * Parses clauses until the closing `}`. Each clause keyword is consumed before `parseClause`
   * runs; a clause not in `repeatable` may appear once.
   */
  private parseBlock(
    what: string,
    open: Span,
    clauses: readonly string[],
    parseClause: (clause: string, keyword: Span) => void,
    repeatable: readonly string[] = [],
  ): void {
    const outer = this.clauses;
    this.clauses = clauses;
    const seen = new Map<string, Span>();
    try {
      for (;;) {
        const kind = this.kind();
        if (kind === T.RBrace) {
          this.advance();
          this.panic = false;
          return;
        }
        if (kind === T.EOF) {
          this.error(
            "HL1010",
            this.span(),
            `expected "}" to close the ${what} block opened at ${this.where(open)}, found end of file`,
          );
          return;
        }
        if (kind === T.Word) {
          const word = this.textOf();
          if (clauses.includes(word)) {
            this.panic = false;
            const keyword = this.span();
            const previous = seen.get(word);
            if (previous !== undefined && !repeatable.includes(word)) {
              this.report(
                "HL1008",
                keyword,
                `"${word}" is already given at ${this.where(previous)} in this ${what}; each clause may appear once`,
              );
            }
            seen.set(word, keyword);
            this.advance();
            parseClause(word, keyword);
            continue;
          }
          if (this.atDeclarationStart() && this.isFirstOnLine(this.i)) {
            this.error(
              "HL1010",
              this.span(),
              `expected "}" to close the ${what} block opened at ${this.where(open)} before the next declaration, found ${this.describe()}`,
            );
            return;
          }
        }
        this.error(
          "HL1007",
          this.span(),
          `expected ${oneOf([...clauses, "}"])} in the ${what} block, found ${this.describe()}`,
        );
        this.skipUnexpected();
      }
    } finally {
      this.clauses = outer;
    }
  }

  /**
   * Parses `{ name* }`. A word followed by `{`, or a new declaration, means the list was not
   * closed: the list ends there so the clause that follows is still parsed.
   */
  private parseNameList(what: string, after: string): NameNode[] {
    const names: NameNode[] = [];
    if (this.kind() !== T.LBrace) {
      this.expected(`"{" to open the ${what} list`, after);
      return names;
    }
    const open = this.span();
    this.advance();
    for (;;) {
      const kind = this.kind();
      if (kind === T.RBrace) {
        this.advance();
        return names;
      }
      if (kind === T.Word) {
        if (
          this.kind(this.i + 1) === T.LBrace ||
          (this.atDeclarationStart() && this.isFirstOnLine(this.i))
        ) {
          this.error(
            "HL1010",
            this.span(),
            `expected "}" to close the ${what} list opened at ${this.where(open)}, found ${this.describe()}`,
          );
          return names;
        }
        names.push(this.name());
        this.advance();
        continue;
      }
      if (kind === T.EOF) {
        this.error(
          "HL1010",
          this.span(),
          `expected "}" to close the ${what} list opened at ${this.where(open)}, found end of file`,
        );
        return names;
      }
      this.error(
        "HL1005",
        this.span(),
        `expected a name or "}" in the ${what} list, found ${this.describe()}`,
      );
      if (kind === T.LBrace) return names;
      this.skipUnexpected();
    }
  }

  /**
   * Parses `[ item, item ]` where `parseItem` reads one item. Returns when `]` closes the list or
   * when the list plainly ended without one.
   */
  private parseBracketList(what: string, itemWhat: string, parseItem: () => void): void {
    const open = this.span();
    this.advance();
    if (this.kind() === T.RBracket) {
      this.advance();
      return;
    }
    for (;;) {
      const before = this.i;
      parseItem();
      const kind = this.kind();
      if (kind === T.Comma) {
        this.advance();
        continue;
      }
      if (kind === T.RBracket) {
        this.advance();
        return;
      }
      if (
        kind === T.EOF ||
        kind === T.RBrace ||
        kind === T.LBrace ||
        this.valueMissing() ||
        this.isClauseWord(this.i)
      ) {
        this.error(
          "HL1010",
          this.span(),
          `expected "]" to close the ${what} opened at ${this.where(open)}, found ${this.describe()}`,
        );
        return;
      }
      this.expected(`"," or "]"`, `after ${itemWhat} in the ${what}`);
      // A missing comma between two items: carry on with the next item; otherwise skip the token.
      if (this.i === before || this.kind() !== T.Word) this.skipUnexpected();
    }
  }

  // ---- component ----------------------------------------------------------------------------

  private parseComponent(keyword: Span): ComponentDecl {
    const decl: ComponentDecl = {
      type: "component",
      keyword,
      inputs: [],
      outputs: [],
      permissions: [],
    };
    const name = this.expectName("a component name", 'after "component"');
    if (name !== undefined) decl.name = name;
    const header = name === undefined ? '"component"' : `"component ${name.text}"`;
    const open = this.openBlock("component", `after ${header}`);
    if (open === undefined) return decl;
    let sawKind = false;
    this.parseBlock("component", open, COMPONENT_CLAUSES, (clause, keyword) => {
      switch (clause) {
        case "kind": {
          sawKind = true;
          const kind = this.expectEnum<ComponentKind>(COMPONENT_KINDS_V2, 'after "kind"');
          if (kind !== undefined) decl.kind = kind;
          return;
        }
        case "description": {
          const description = this.expectString('after "description"');
          if (description !== undefined) decl.description = description.value;
          return;
        }
        case "input":
          decl.inputs.push(...this.parseNameList("input", 'after "input"'));
          return;
        case "output":
          decl.outputs.push(...this.parseNameList("output", 'after "output"'));
          return;
        case "source": {
          const source = this.expectString('after "source"');
          if (source !== undefined) decl.source = source;
          return;
        }
        case "mcp":
        case "cli": {
          const program = this.parseProgram(clause, keyword);
          if (program !== undefined) decl[clause] = program;
          return;
        }
        case "hook": {
          const hook = this.parseHook(keyword);
          if (hook !== undefined) decl.hook = hook;
          return;
        }
        case "tools":
          decl.tools = { keyword, names: this.parseNames("tools list", "a tool name") };
          return;
        default:
          decl.permissions.push(...this.parsePermissions());
      }
    });
    if (!sawKind) {
      this.report(
        "HL1009",
        name?.span ?? keyword,
        `component ${name === undefined ? "" : `"${name.text}" `}has no "kind": add "kind <k>" with k ${oneOf(COMPONENT_KINDS_V2)}`,
      );
    }
    return decl;
  }

  /**
   * `mcp { … }` or `cli { … }` (v0.2, on a tool): `command "…" args [ "…", … ] env { NAME "value" … }`,
   * a stdio MCP server or a command-line program.
   */
  private parseProgram(block: "mcp" | "cli", keyword: Span): ProgramNode | undefined {
    const open = this.openBlock(block, `after "${block}"`);
    if (open === undefined) return undefined;
    const mcp: ProgramNode = { keyword, args: [], env: [] };
    this.parseBlock(block, open, PROGRAM_CLAUSES, (clause) => {
      if (clause === "command") {
        const command = this.expectString('after "command"');
        if (command !== undefined) mcp.command = command;
      } else if (clause === "args")
        mcp.args.push(...this.parseStrings("args list", 'after "args"'));
      else mcp.env.push(...this.parseEnv());
    });
    return mcp;
  }

  /** `hook { event <Event> command [ "…", … ] }` (v0.2, on a hook). */
  private parseHook(keyword: Span): HookNode | undefined {
    const open = this.openBlock("hook", 'after "hook"');
    if (open === undefined) return undefined;
    const hook: HookNode = { keyword, command: [] };
    this.parseBlock("hook", open, HOOK_CLAUSES, (clause) => {
      if (clause === "event") {
        const event = this.expectEnum<string>(HOOK_EVENTS, 'after "event"');
        if (event !== undefined) hook.event = { text: event.value, span: event.span };
      } else hook.command.push(...this.parseStrings("command list", 'after "command"'));
    });
    return hook;
  }

  /** `[ "…", "…" ]`: a list of strings (an argument list). */
  private parseStrings(what: string, after: string): ValueNode<string>[] {
    const values: ValueNode<string>[] = [];
    if (this.kind() !== T.LBracket) {
      this.expected(`"[" to open the ${what}`, after);
      return values;
    }
    this.parseBracketList(what, "a string", () => {
      const value = this.expectString(`in the ${what}`);
      if (value !== undefined) values.push(value);
    });
    return values;
  }

  /** `[ Name, Name ]`: a list of names. */
  private parseNames(what: string, itemWhat: string): NameNode[] {
    const names: NameNode[] = [];
    if (this.kind() !== T.LBracket) {
      this.expected(`"[" to open the ${what}`, 'after "tools"');
      return names;
    }
    this.parseBracketList(what, itemWhat, () => {
      const name = this.expectName(itemWhat, `in the ${what}`);
      if (name !== undefined) names.push(name);
    });
    return names;
  }

  /** `env { NAME "value" … }`: variables, each a name and a string. */
  private parseEnv(): ProgramNode["env"] {
    const env: ProgramNode["env"] = [];
    if (this.kind() !== T.LBrace) {
      this.expected('"{" to open the env block', 'after "env"');
      return env;
    }
    const open = this.span();
    this.advance();
    for (;;) {
      const kind = this.kind();
      if (kind === T.RBrace) {
        this.advance();
        return env;
      }
      if (kind === T.EOF) {
        this.error(
          "HL1010",
          this.span(),
          `expected "}" to close the env block opened at ${this.where(open)}, found end of file`,
        );
        return env;
      }
      if (kind !== T.Word) {
        this.expected('a variable name or "}"', "in the env block");
        this.skipUnexpected();
        continue;
      }
      const name = this.name();
      this.advance();
      const value = this.expectString(`after the variable name "${name.text}"`);
      if (value !== undefined) env.push({ name, value });
    }
  }

  private parsePermissions(): ComponentDecl["permissions"] {
    const permissions: ComponentDecl["permissions"] = [];
    if (this.kind() !== T.LBrace) {
      this.expected('"{" to open the permissions list', 'after "permissions"');
      return permissions;
    }
    const open = this.span();
    this.advance();
    for (;;) {
      const kind = this.kind();
      if (kind === T.RBrace) {
        this.advance();
        return permissions;
      }
      const unclosed =
        kind === T.EOF ||
        (kind === T.Word &&
          (this.kind(this.i + 1) === T.LBrace ||
            (this.atDeclarationStart() && this.isFirstOnLine(this.i))));
      if (unclosed) {
        this.error(
          "HL1010",
          this.span(),
          `expected "}" to close the permissions list opened at ${this.where(open)}, found ${this.describe()}`,
        );
        return permissions;
      }
      if (kind !== T.Word) {
        this.expected(
          `a permission domain (${quoteList(PERMISSION_DOMAINS)}) or "}"`,
          "in the permissions list",
        );
        this.skipUnexpected();
        continue;
      }
      const domainText = this.textOf();
      const start = this.span();
      this.advance();
      if (!(PERMISSION_DOMAINS as readonly string[]).includes(domainText)) {
        this.error(
          "HL1006",
          start,
          `expected a permission domain (${quoteList(PERMISSION_DOMAINS)}) or "}" in the permissions list, found "${domainText}"`,
        );
        continue;
      }
      const access = this.expectEnum<PermissionAccess>(
        PERMISSION_ACCESSES,
        `after "${domainText}"`,
      );
      if (access === undefined) continue;
      permissions.push({
        domain: domainText as PermissionDomain,
        access: access.value,
        span: {
          ...start,
          endColumn: start.line === access.span.line ? access.span.endColumn : start.endColumn,
        },
      });
    }
  }

  // ---- binding ------------------------------------------------------------------------------

  private parseBinding(keyword: Span): BindingDecl {
    const decl: BindingDecl = { type: "binding", keyword, hosts: [] };
    const component = this.expectName("the name of the component being bound", 'after "binding"');
    if (component !== undefined) decl.component = component;
    const header = component === undefined ? '"binding"' : `"binding ${component.text}"`;
    if (this.isWord("for")) {
      this.advance();
    } else {
      this.expected('"for"', `after ${header}`);
    }
    if (this.kind() === T.LBracket) {
      this.parseBracketList("host list", "a host", () => {
        const host = this.expectName("a host name", 'in the host list of "for [ … ]"');
        if (host !== undefined) decl.hosts.push(host);
      });
    } else {
      const host = this.expectName('a host name or "[" (several hosts)', 'after "for"');
      if (host !== undefined) decl.hosts.push(host);
    }
    // The block is optional: a bare binding is advisory prompt guidance.
    if (this.kind() !== T.LBrace) {
      if (this.kind() === T.EOF || this.atDeclarationStart()) return decl;
      this.expected('"{" or the next declaration', `after the hosts of ${header}`);
    }
    const open = this.openBlock("binding", `after ${header}`);
    if (open === undefined) return decl;
    this.parseBlock("binding", open, BINDING_CLAUSES, (clause) => {
      switch (clause) {
        case "mechanism": {
          const mechanism = this.expectName("a mechanism name", 'after "mechanism"');
          if (mechanism !== undefined) decl.mechanism = mechanism;
          return;
        }
        case "strength": {
          const strength = this.expectEnum<Strength>(STRENGTHS, 'after "strength"');
          if (strength !== undefined) decl.strength = strength;
          return;
        }
        default: {
          const notes = this.expectString('after "notes"');
          if (notes !== undefined) decl.notes = notes.value;
        }
      }
    });
    return decl;
  }

  // ---- plugin -------------------------------------------------------------------------------

  private parsePlugin(keyword: Span): PluginDecl {
    const decl: PluginDecl = { type: "plugin", keyword, provides: [] };
    const name = this.expectName("a plugin name", 'after "plugin"');
    if (name !== undefined) decl.name = name;
    const header = name === undefined ? '"plugin"' : `"plugin ${name.text}"`;
    const open = this.openBlock("plugin", `after ${header}`);
    if (open === undefined) return decl;
    let sawVersion = false;
    this.parseBlock("plugin", open, PLUGIN_CLAUSES, (clause) => {
      if (clause === "version") {
        sawVersion = true;
        const version = this.expectString('after "version" (e.g. version "1.2.0")');
        if (version !== undefined) decl.version = version;
        return;
      }
      if (this.kind() !== T.LBracket) {
        this.expected('"[" to open the provides list', 'after "provides"');
        this.skipBadValue();
        return;
      }
      this.parseBracketList("provides list", "a component", () => {
        const item = this.parseQualifiedReference("component", "provides list");
        if (item !== undefined) decl.provides.push(item);
      });
    });
    if (!sawVersion) {
      this.report(
        "HL1009",
        name?.span ?? keyword,
        `plugin ${name === undefined ? "" : `"${name.text}" `}has no "version": add version "<semver>", e.g. version "1.0.0"`,
      );
    }
    return decl;
  }

  /** Parses `component.<name>` / `plugin.<name>`; a bare `<name>` is reported but still used. */
  private parseQualifiedReference(prefix: string, where: string): NameNode | undefined {
    if (this.isWord(prefix)) {
      this.advance();
      if (this.kind() === T.Dot) {
        this.advance();
      } else {
        this.expected('"."', `after "${prefix}" (write ${prefix}.<name>)`);
      }
      return this.expectName(`a ${prefix} name`, `after "${prefix}."`);
    }
    this.expected(`"${prefix}.<name>"`, `in the ${where}`);
    if (this.kind() === T.Word && !this.valueMissing()) {
      const node = this.name();
      this.advance();
      return node;
    }
    return undefined;
  }

  // ---- composition --------------------------------------------------------------------------

  private parseComposition(keyword: Span): CompositionDecl {
    const decl: CompositionDecl = {
      type: "composition",
      keyword,
      includes: [],
      requirements: [],
      settings: [],
    };
    const name = this.expectName("a composition name", 'after "composition"');
    if (name !== undefined) decl.name = name;
    let header = name === undefined ? '"composition"' : `"composition ${name.text}"`;
    if (this.isWord("extends")) {
      this.advance();
      const parent = this.expectName("the name of the composition to extend", 'after "extends"');
      if (parent !== undefined) {
        decl.parent = parent;
        header = `"composition ${name?.text ?? ""} extends ${parent.text}"`;
      }
    }
    const open = this.openBlock("composition", `after ${header}`);
    if (open === undefined) return decl;
    this.parseBlock(
      "composition",
      open,
      COMPOSITION_CLAUSES,
      (clause, clauseSpan) => {
        switch (clause) {
          case "target": {
            const target = this.expectName("a host name", 'after "target"');
            if (target !== undefined) decl.target = target;
            return;
          }
          case "include":
            this.parseIncludes(decl);
            return;
          case "require": {
            const requirement = this.parseRequirement(clauseSpan);
            if (requirement !== undefined) decl.requirements.push(requirement);
            return;
          }
          default:
            this.parseSettings(decl);
        }
      },
      ["require"],
    );
    return decl;
  }

  private parseIncludes(decl: CompositionDecl): void {
    if (this.kind() !== T.LBracket) {
      this.expected('"[" to open the include list', 'after "include"');
      this.skipBadValue();
      return;
    }
    this.parseBracketList("include list", "a plugin", () => {
      const plugin = this.parseQualifiedReference("plugin", "include list");
      if (plugin === undefined) return;
      if (this.kind() !== T.Range) {
        this.expected(
          'a version range such as "@1", "@^1.2" or "@~1.2.3"',
          `after "plugin.${plugin.text}"`,
        );
        return;
      }
      const range = this.textOf().slice(1);
      const span = this.span();
      if (range === "" || range === "^" || range === "~") {
        this.error(
          "HL1005",
          span,
          `expected a version after "${this.textOf()}" (e.g. @1, @^1.2, @~1.2.3, @1.2.0), found ${this.describe(this.i + 1)}`,
        );
        this.advance();
        return;
      }
      this.advance();
      const include: IncludeNode = { plugin, range: { value: range, span } };
      decl.includes.push(include);
    });
  }

  private parseRequirement(keyword: Span): RequirementNode | undefined {
    const component = this.expectName("the name of the required component", 'after "require"');
    if (component === undefined) return undefined;
    const requirement: RequirementNode = { keyword, component, bare: true };
    if (this.kind() !== T.LBrace) return requirement;
    requirement.bare = false;
    const open = this.span();
    this.advance();
    let sawMinimum = false;
    this.parseBlock(`requirement`, open, REQUIREMENT_CLAUSES, (clause) => {
      switch (clause) {
        case "preferred": {
          const preferred = this.expectEnum<Strength>(STRENGTHS, 'after "preferred"');
          if (preferred !== undefined) requirement.preferred = preferred;
          return;
        }
        case "minimum": {
          sawMinimum = true;
          const minimum = this.expectEnum<Strength>(STRENGTHS, 'after "minimum"');
          if (minimum !== undefined) requirement.minimum = minimum;
          return;
        }
        default: {
          const policy = this.expectEnum<DegradationPolicy>(
            DEGRADATION_POLICIES,
            'after "on-degrade"',
          );
          if (policy !== undefined) requirement.onDegrade = policy;
        }
      }
    });
    if (!sawMinimum) {
      this.report(
        "HL1009",
        component.span,
        `requirement "${component.text}" has no "minimum": add "minimum <strength>" with strength ${oneOf(STRENGTHS)} (or write a bare "require ${component.text}" for minimum advisory)`,
      );
    }
    return requirement;
  }

  private parseSettings(decl: CompositionDecl): void {
    if (this.kind() !== T.LBrace) {
      this.expected('"{" to open the configure block', 'after "configure"');
      return;
    }
    const open = this.span();
    this.advance();
    for (;;) {
      const kind = this.kind();
      if (kind === T.RBrace) {
        this.advance();
        this.panic = false;
        return;
      }
      const unclosed =
        kind === T.EOF ||
        (kind === T.Word &&
          (this.kind(this.i + 1) === T.LBrace ||
            (this.atDeclarationStart() && this.isFirstOnLine(this.i))));
      if (unclosed) {
        this.error(
          "HL1010",
          this.span(),
          `expected "}" to close the configure block opened at ${this.where(open)}, found ${this.describe()}`,
        );
        return;
      }
      if (kind !== T.Word) {
        this.expected(
          'a configuration key (e.g. runtime.max-turns) or "}"',
          "in the configure block",
        );
        this.skipUnexpected();
        continue;
      }
      if (this.isFirstOnLine(this.i)) this.panic = false;
      const setting = this.parseSetting();
      if (setting !== undefined) decl.settings.push(setting);
    }
  }

  private parseSetting(): SettingNode | undefined {
    const first = this.span();
    const parts = [this.textOf()];
    let last = first;
    this.advance();
    while (this.kind() === T.Dot) {
      this.advance();
      if (this.kind() !== T.Word) {
        this.expected("a key segment", `after "${parts.join(".")}."`);
        return undefined;
      }
      parts.push(this.textOf());
      last = this.span();
      this.advance();
    }
    const keyText = parts.join(".");
    const key: NameNode = {
      text: keyText,
      span: { ...first, endColumn: last.line === first.line ? last.endColumn : first.endColumn },
    };
    if (this.kind() !== T.Equals) {
      this.expected('"="', `after the configuration key "${keyText}"`);
      this.skipBadValue();
      return undefined;
    }
    this.advance();
    const value = this.parseValue(keyText);
    if (value === undefined) return undefined;
    return { key, value };
  }

  private parseValue(keyText: string): SettingValue | undefined {
    const kind = this.kind();
    const text = this.textOf();
    const span = this.span();
    if (kind === T.Int) {
      this.advance();
      const value = Number(text);
      if (!Number.isSafeInteger(value)) {
        this.report(
          "HL1011",
          span,
          `integer ${text} is too large (the largest allowed is ${Number.MAX_SAFE_INTEGER})`,
        );
        return undefined;
      }
      return { type: "int", value };
    }
    if (kind === T.Duration) {
      this.advance();
      const unitStart = text.search(/[a-z]/);
      const amount = Number(text.slice(0, unitStart));
      const unit = text.slice(unitStart) as DurationUnit;
      const ms = amount * DURATION_UNITS_MS[unit];
      if (!Number.isSafeInteger(ms)) {
        this.report(
          "HL1011",
          span,
          `duration ${text} is too large (at most ${Number.MAX_SAFE_INTEGER} ms)`,
        );
        return undefined;
      }
      return { type: "duration", value: text, ms };
    }
    if (kind === T.String) {
      const value = decodeString(
        this.tokens.text,
        this.tokens.starts[this.i]!,
        this.tokens.ends[this.i]!,
      );
      this.advance();
      return { type: "string", value };
    }
    if (kind === T.Word && (text === "true" || text === "false") && !this.valueMissing()) {
      this.advance();
      return { type: "boolean", value: text === "true" };
    }
    if (kind === T.Bad) {
      this.advance();
      return undefined;
    }
    this.expected(
      'a value: an integer (24), a duration (1500ms, 90s, 10m, 24h), a "string", true or false',
      `after "${keyText} ="`,
    );
    this.skipBadValue();
    return undefined;
  }
}
