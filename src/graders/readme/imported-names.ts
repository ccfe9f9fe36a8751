// Which names a README example takes from the package: what a reader would call, and so what
// the package must really export. An example that imports an export the package does not have
// documents an invented API, however well it reads.
import { type Token, tokenize } from "./js-tokens.js";

export interface ImportedName {
  /** The export's name (`default` for a default import). */
  name: string;
  /** 1-based line within the example. */
  line: number;
}

export interface PackageImports {
  names: ImportedName[];
  /** Set when the example could not be tokenized (its imports are then unknown). */
  problem?: string;
}

const isPunct = (token: Token | undefined, value: string) =>
  token?.kind === "punct" && token.value === value;
const isName = (token: Token | undefined, value?: string) =>
  token?.kind === "name" && (value === undefined || token.value === value);

/** Names inside `{ … }` starting at `open` (`a`, `b as c`, `type T`, `default as d`); index after `}`. */
function braceNames(
  tokens: readonly Token[],
  open: number,
): { names: ImportedName[]; end: number } {
  const names: ImportedName[] = [];
  let index = open + 1;
  while (index < tokens.length && !isPunct(tokens[index], "}")) {
    let token = tokens[index];
    // `type Foo` inside TypeScript braces imports a type only, which is still an export.
    if (
      isName(token, "type") &&
      tokens[index + 1]?.kind === "name" &&
      !isName(tokens[index + 1], "as")
    )
      token = tokens[++index];
    if (token?.kind === "name" || token?.kind === "string")
      names.push({ name: token.value, line: token.line });
    // Skip to the next comma or the closing brace (`as local`, `: local` in a destructuring).
    while (index < tokens.length && !isPunct(tokens[index], ",") && !isPunct(tokens[index], "}")) {
      if (isPunct(tokens[index], "{")) return { names, end: index };
      index += 1;
    }
    if (isPunct(tokens[index], ",")) index += 1;
  }
  return { names, end: index + 1 };
}

/** Whether `specifier` names the package's main entry (subpaths have exports of their own). */
function isPackageEntry(specifier: string, packageName: string): boolean {
  return specifier === packageName;
}

/**
 * The names an example imports from the package's main entry: named and default imports
 * (`import d, { a, b as c } from "pkg"`), members used through a namespace import
 * (`import * as p from "pkg"; p.a()`), and CommonJS destructuring (`const { a } = require("pkg")`).
 * Imports of subpaths or of other modules are not the package entry's business and are skipped.
 */
export function packageImports(code: string, packageName: string): PackageImports {
  const tokenized = tokenize(code);
  if (!tokenized.ok) return { names: [], problem: `line ${tokenized.line}: ${tokenized.message}` };
  const tokens = tokenized.tokens;
  const names: ImportedName[] = [];
  const namespaces = new Set<string>();
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    if (isName(token, "import") && !isPunct(tokens[index - 1], ".")) {
      // Find the clause's `from "<specifier>"`; a bare `import "x"` has none.
      let end = index + 1;
      while (end < tokens.length && !isName(tokens[end], "from") && !isPunct(tokens[end], ";")) {
        if (tokens[end]?.kind === "string" && end === index + 1) break;
        end += 1;
      }
      const specifier = tokens[end + 1];
      if (!isName(tokens[end], "from") || specifier?.kind !== "string") continue;
      if (!isPackageEntry(specifier.value, packageName)) continue;
      let cursor = index + 1;
      if (isName(tokens[cursor], "type")) cursor += 1;
      while (cursor < end) {
        const current = tokens[cursor];
        if (isPunct(current, "{")) {
          const inside = braceNames(tokens, cursor);
          names.push(...inside.names);
          cursor = inside.end;
        } else if (isPunct(current, "*") && isName(tokens[cursor + 1], "as")) {
          const local = tokens[cursor + 2];
          if (local?.kind === "name") namespaces.add(local.value);
          cursor += 3;
        } else if (current?.kind === "name") {
          names.push({ name: "default", line: current.line });
          cursor += 1;
        } else cursor += 1;
      }
      index = end + 1;
      continue;
    }
    // const { a, b: c } = require("pkg")   /   await import("pkg")
    if (
      isPunct(token, "{") &&
      (isName(tokens[index - 1], "const") ||
        isName(tokens[index - 1], "let") ||
        isName(tokens[index - 1], "var"))
    ) {
      const inside = braceNames(tokens, index);
      const afterBrace = inside.end;
      const loader = tokens[afterBrace + 1]?.value === "await" ? afterBrace + 2 : afterBrace + 1;
      const call = tokens[loader];
      const specifier = tokens[loader + 2];
      if (
        isPunct(tokens[afterBrace], "=") &&
        (isName(call, "require") || isName(call, "import")) &&
        isPunct(tokens[loader + 1], "(") &&
        specifier?.kind === "string" &&
        isPackageEntry(specifier.value, packageName)
      )
        names.push(...inside.names);
    }
  }
  if (namespaces.size > 0) {
    tokens.forEach((token, index) => {
      if (token.kind !== "name" || !namespaces.has(token.value)) return;
      const dot = tokens[index + 1];
      const member = tokens[index + 2];
      if ((isPunct(dot, ".") || isPunct(dot, "?.")) && member?.kind === "name")
        names.push({ name: member.value, line: member.line });
    });
  }
  return { names };
}
