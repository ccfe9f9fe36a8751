import type {
  ComponentKind,
  DegradationPolicy,
  PermissionAccess,
  PermissionDomain,
  SettingValue,
  Strength,
} from "../ir/index.js";

/** One problem found in `.harness` source. Lines and columns are 1-based; columns count UTF-16 code units. */
export interface Diagnostic {
  uri: string;
  line: number;
  column: number;
  code: string;
  severity: "error" | "warning";
  message: string;
  /** End of the offending text (exclusive column), when it has one. */
  endLine?: number;
  endColumn?: number;
}

export interface SourceInput {
  uri: string;
  text: string;
}

/** A place in one input file. Tokens never span lines, so one line number suffices. */
export interface Span {
  /** Index of the file in the compilation's input list. */
  file: number;
  line: number;
  column: number;
  /** Exclusive. */
  endColumn: number;
}

export interface NameNode {
  text: string;
  span: Span;
}

export interface ValueNode<T> {
  value: T;
  span: Span;
}

interface PermissionNode {
  domain: PermissionDomain;
  access: PermissionAccess;
  span: Span;
}

/**
 * `mcp { command "…" args [ "…", … ] env { NAME "value" … } }` on a tool component (a stdio MCP
 * server), or `cli { … }` with the same clauses (a command-line program).
 */
export interface ProgramNode {
  keyword: Span;
  command?: ValueNode<string>;
  args: ValueNode<string>[];
  env: { name: NameNode; value: ValueNode<string> }[];
}

/** `hook { event Stop command [ "node", "hooks/stop.mjs" ] }` on a hook component. */
export interface HookNode {
  keyword: Span;
  event?: NameNode;
  command: ValueNode<string>[];
}

export interface ComponentDecl {
  type: "component";
  keyword: Span;
  name?: NameNode;
  kind?: ValueNode<ComponentKind>;
  description?: string;
  inputs: NameNode[];
  outputs: NameNode[];
  permissions: PermissionNode[];
  /** v0.2: the file or folder the component is made of, relative to its `.harness` file. */
  source?: ValueNode<string>;
  mcp?: ProgramNode;
  /** v0.2: a command-line program the agent runs by the component's name. */
  cli?: ProgramNode;
  hook?: HookNode;
  /** v0.2: a subagent's tools. */
  tools?: { keyword: Span; names: NameNode[] };
}

/** A file of a component's source as the reader found it. */
export interface SourceFileRead {
  /** Relative to the source (a folder's files) or its own name (a file), `/`-separated. */
  path: string;
  /** `sha256:<hex>` of its bytes. */
  sha256: string;
  /** Its text, for a UTF-8 file small enough to check (a SKILL.md, a prompt). */
  text?: string;
}

export type SourceRead =
  | { ok: true; type: "file" | "directory"; files: SourceFileRead[] }
  | { ok: false; error: string };

/**
 * Reads a component's `source`: `path` as written, relative to the `.harness` file at `fromUri`,
 * for the component `componentId` (so a caller can note where each component's source lies).
 * The compiler does no I/O of its own; callers that compile from files pass one
 * (`readHarnessSource` reads the file system, keeping every path inside the file's folder).
 */
export type SourceReader = (fromUri: string, path: string, componentId: string) => SourceRead;

export interface BindingDecl {
  type: "binding";
  keyword: Span;
  component?: NameNode;
  hosts: NameNode[];
  mechanism?: NameNode;
  strength?: ValueNode<Strength>;
  notes?: string;
}

export interface PluginDecl {
  type: "plugin";
  keyword: Span;
  name?: NameNode;
  version?: ValueNode<string>;
  provides: NameNode[];
}

export interface IncludeNode {
  plugin: NameNode;
  range: ValueNode<string>;
}

export interface RequirementNode {
  keyword: Span;
  component: NameNode;
  /** `require x` without a block: minimum advisory, on-degrade report. */
  bare: boolean;
  preferred?: ValueNode<Strength>;
  minimum?: ValueNode<Strength>;
  onDegrade?: ValueNode<DegradationPolicy>;
}

export interface SettingNode {
  key: NameNode;
  value: SettingValue;
}

export interface CompositionDecl {
  type: "composition";
  keyword: Span;
  name?: NameNode;
  parent?: NameNode;
  target?: NameNode;
  includes: IncludeNode[];
  requirements: RequirementNode[];
  settings: SettingNode[];
}

export type Declaration = ComponentDecl | BindingDecl | PluginDecl | CompositionDecl;

export interface ParsedFile {
  uri: string;
  declarations: Declaration[];
}

/** A diagnostic before it is given its file's uri. */
export interface RawDiagnostic {
  span: Span;
  code: string;
  severity: "error" | "warning";
  message: string;
}
