import { type Token, tokenize } from "./js-tokens.js";

/**
 * Why an example was rejected before it ran. The screen keeps README examples to what a
 * consumer of the package needs; the permission-model sandbox they then run in is the
 * actual boundary, so the screen is a second, independent layer.
 */
type ScreenRule =
  | "host-capability"
  | "code-generation"
  | "dynamic-import"
  | "import-meta"
  | "prototype-access"
  | "escaped-identifier"
  | "url-specifier"
  | "relative-import"
  | "foreign-import"
  | "unparseable";

export interface ScreenFinding {
  rule: ScreenRule;
  /** Line within the code block, 1-based. */
  line: number;
  message: string;
}

export interface ScreenResult {
  ok: boolean;
  findings: ScreenFinding[];
  /** Module specifiers the example imports statically, in order. */
  imports: string[];
}

/** Globals that reach the host: process state, the module system, the network, threads. */
const HOST_CAPABILITY_GLOBALS: readonly string[] = [
  "process",
  "globalThis",
  "global",
  "self",
  "window",
  "require",
  "module",
  "exports",
  "__dirname",
  "__filename",
  "fetch",
  "XMLHttpRequest",
  "WebSocket",
  "EventSource",
  "Worker",
  "SharedWorker",
  "WebAssembly",
  "Deno",
  "Bun",
  "child_process",
  "importScripts",
];

/** Ways to turn a string into code. */
const CODE_GENERATION_GLOBALS: readonly string[] = ["eval", "Function"];

const HOST = new Set(HOST_CAPABILITY_GLOBALS);
const CODEGEN = new Set(CODE_GENERATION_GLOBALS);
const PROTOTYPE_KEYS = new Set(["constructor", "__proto__"]);
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

function isMemberAccess(previous: Token | undefined): boolean {
  return previous?.kind === "punct" && (previous.value === "." || previous.value === "?.");
}

function judgeSpecifier(specifier: string, packageName: string | undefined): string | null {
  if (
    packageName !== undefined &&
    (specifier === packageName || specifier.startsWith(`${packageName}/`))
  )
    return null;
  return specifier;
}

/**
 * Screens one README example. `packageName` is the package's own name from package.json;
 * it (and its subpaths) is the only module an example may import.
 */
export function screenExample(code: string, packageName: string | undefined): ScreenResult {
  const tokenized = tokenize(code);
  if (!tokenized.ok) {
    return {
      ok: false,
      findings: [
        {
          rule: "unparseable",
          line: tokenized.line,
          message: `could not be screened: ${tokenized.message}`,
        },
      ],
      imports: [],
    };
  }
  const { tokens } = tokenized;
  const findings: ScreenFinding[] = [];
  const imports: string[] = [];
  const only = packageName === undefined ? "the package itself" : `only ${packageName}`;
  tokens.forEach((token, index) => {
    const previous = tokens[index - 1];
    const next = tokens[index + 1];
    const add = (rule: ScreenRule, message: string) =>
      findings.push({ rule, line: token.line, message });
    if (token.kind === "name") {
      if (token.escaped) {
        add("escaped-identifier", `identifier written with escapes (${token.value})`);
      }
      if (isMemberAccess(previous)) {
        if (PROTOTYPE_KEYS.has(token.value)) add("prototype-access", `uses .${token.value}`);
        return;
      }
      if (token.value === "__proto__") add("prototype-access", "uses __proto__");
      else if (HOST.has(token.value)) add("host-capability", `uses ${token.value}`);
      else if (CODEGEN.has(token.value)) add("code-generation", `uses ${token.value}`);
      else if (token.value === "import" && next?.kind === "punct" && next.value === "(")
        add("dynamic-import", "uses dynamic import()");
      else if (token.value === "import" && next?.kind === "punct" && next.value === ".")
        add("import-meta", "uses import.meta");
      return;
    }
    if (token.kind === "string" || token.kind === "template") {
      const isSpecifier =
        token.kind === "string" &&
        previous?.kind === "name" &&
        (previous.value === "from" || previous.value === "import");
      if (isSpecifier) {
        const specifier = token.value;
        imports.push(specifier);
        const rejected = judgeSpecifier(specifier, packageName);
        if (rejected === null) return;
        if (URL_SCHEME.test(specifier))
          add(
            "url-specifier",
            `imports the URL specifier ${JSON.stringify(specifier)} (${only} may be imported)`,
          );
        else if (/^[./\\]/.test(specifier))
          add(
            "relative-import",
            `imports the path ${JSON.stringify(specifier)}; import the package by name instead`,
          );
        else
          add("foreign-import", `imports ${JSON.stringify(specifier)} (${only} may be imported)`);
        return;
      }
      if (PROTOTYPE_KEYS.has(token.value.trim()))
        add("prototype-access", `uses the string ${JSON.stringify(token.value.trim())}`);
    }
  });
  return { ok: findings.length === 0, findings, imports };
}
