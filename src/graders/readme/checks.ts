import { escapeRegExp } from "../../shared/index.js";
import type { GradeCheck } from "../types.js";
import type { ReadmePackageContract } from "./contract.js";
import { allCode, normalizeHeading, type ReadmeDocument } from "./markdown.js";

/** The checks' weights (docs/graders.md). `readme-exists` is reported only when the README is missing. */
export const README_PACKAGE_WEIGHTS = {
  scope: 15,
  "readme-exists": 85,
  structure: 10,
  links: 5,
  installation: 10,
  "public-api": 15,
  "behavior-evidence": 15,
  "quick-start": 15,
  "package-tests": 10,
  "no-invented-capabilities": 5,
} as const;

export type ReadmeCheckId = keyof typeof README_PACKAGE_WEIGHTS;

export function makeCheck(
  id: ReadmeCheckId,
  passed: boolean,
  detail: string,
  evidence?: unknown,
): GradeCheck {
  return {
    id,
    weight: README_PACKAGE_WEIGHTS[id],
    passed,
    detail,
    ...(evidence === undefined ? {} : { evidence }),
  };
}

/**
 * True when `token` occurs in `code` as a whole token: a token that starts (ends) with a
 * word character must not continue a longer word on that side, so `2` is not found in
 * `1024` and `signal` not in `signals`; punctuation-edged tokens match as substrings.
 */
export function containsToken(code: string, token: string): boolean {
  const before = /^[\w$]/.test(token) ? "(?<![\\w$])" : "";
  const after = /[\w$]$/.test(token) ? "(?![\\w$])" : "";
  return new RegExp(`${before}${escapeRegExp(token)}${after}`).test(code);
}

export function checkStructure(
  document: ReadmeDocument,
  contract: ReadmePackageContract,
): GradeCheck {
  const present = new Set(document.headings.map((h) => normalizeHeading(h.text)));
  const missing = contract.requiredHeadings.filter((h) => !present.has(normalizeHeading(h)));
  return makeCheck(
    "structure",
    missing.length === 0,
    missing.length === 0
      ? `all ${contract.requiredHeadings.length} required headings present`
      : `missing heading(s): ${missing.join(", ")}`,
    {
      missing,
      headings: document.headings.map((h) => ({ depth: h.depth, text: h.text, line: h.line })),
    },
  );
}

const INSTALL_COMMAND = /(?:^|[\s;&|(`])npm\s+(?:install|i|add)\b([^\n]*)/g;

export function checkInstallation(
  document: ReadmeDocument,
  packageName: string | undefined,
): GradeCheck {
  if (packageName === undefined)
    return makeCheck(
      "installation",
      false,
      "package.json has no usable name, so no install command can match",
    );
  const commands: string[] = [];
  let globalOnly = false;
  for (const code of allCode(document)) {
    for (const match of code.matchAll(INSTALL_COMMAND)) {
      const args = (match[1] ?? "").trim().split(/\s+/).filter(Boolean);
      const names = args.some((arg) => arg === packageName || arg.startsWith(`${packageName}@`));
      if (!names) continue;
      // A global install cannot be imported by a consumer project.
      if (args.includes("-g") || args.includes("--global")) {
        globalOnly = true;
        continue;
      }
      commands.push(match[0].trim());
    }
  }
  const passed = commands.length > 0;
  return makeCheck(
    "installation",
    passed,
    passed
      ? `shows ${commands[0]}`
      : globalOnly
        ? `only a global install of ${packageName} is shown; expected npm install ${packageName}`
        : `no \`npm install ${packageName}\` in any code block or inline code`,
    { packageName, commands },
  );
}

export interface ExportProbe {
  ok: boolean;
  exports: string[];
  error?: string;
}

/** A name a README example imports from the package (see `exampleImports`). */
export interface ExampleImportUse {
  name: string;
  readmeLine: number;
}

/**
 * The `public-api` check: each contract name is exported by the package entry and shown in
 * code, and no example imports a name the entry does not export (an invented API).
 */
export function checkPublicApi(
  document: ReadmeDocument,
  contract: ReadmePackageContract,
  probe: ExportProbe,
  probeEvidence: unknown,
  imports: readonly ExampleImportUse[] = [],
): GradeCheck {
  const code = allCode(document).join("\n");
  const exported = new Set(probe.exports);
  const names = contract.publicApi.map((name) => ({
    name,
    exported: probe.ok && exported.has(name),
    shownInCode: containsToken(code, name),
  }));
  const notExported = names.filter((n) => !n.exported).map((n) => n.name);
  const notShown = names.filter((n) => !n.shownInCode).map((n) => n.name);
  const problems: string[] = [];
  if (!probe.ok)
    problems.push(`the package entry could not be loaded: ${probe.error ?? "unknown error"}`);
  else if (notExported.length > 0)
    problems.push(`not exported by the package entry: ${notExported.join(", ")}`);
  if (notShown.length > 0) problems.push(`not shown in README code: ${notShown.join(", ")}`);
  const invented = probe.ok ? imports.filter((use) => !exported.has(use.name)) : [];
  if (invented.length > 0)
    problems.push(
      `examples import what the package does not export: ${invented
        .map(
          (use) =>
            `${use.name === "default" ? "a default export" : use.name} (line ${use.readmeLine})`,
        )
        .join(", ")}`,
    );
  return makeCheck(
    "public-api",
    problems.length === 0,
    problems.length === 0
      ? `all ${names.length} public names are exported and shown in code${imports.length > 0 ? `, and the ${imports.length} name(s) the examples import exist` : ""}`
      : problems.join("; "),
    { names, exports: probe.exports, probe: probeEvidence, exampleImports: imports, invented },
  );
}

export function checkBehaviorEvidence(
  document: ReadmeDocument,
  contract: ReadmePackageContract,
): GradeCheck {
  const code = allCode(document).join("\n");
  const missingTokens = contract.requiredCodeTokens.filter((t) => !containsToken(code, t));
  const missingGroups = contract.requiredAnyCodeTokens.filter(
    (group) => !group.some((t) => containsToken(code, t)),
  );
  const problems: string[] = [];
  if (missingTokens.length > 0) problems.push(`missing from code: ${missingTokens.join(", ")}`);
  for (const group of missingGroups) problems.push(`none of ${group.join(" | ")} in code`);
  return makeCheck(
    "behavior-evidence",
    problems.length === 0,
    problems.length === 0 ? "every required code token appears in code" : problems.join("; "),
    { missingTokens, missingAnyOf: missingGroups },
  );
}

/** Lower-cases and collapses whitespace, remembering each character's source line. */
function normalizeWithLines(text: string): { normalized: string; lines: number[] } {
  let normalized = "";
  const lines: number[] = [];
  let line = 1;
  let pendingSpace = false;
  for (const ch of text) {
    if (/\s/.test(ch)) {
      if (ch === "\n") line += 1;
      pendingSpace = normalized.length > 0;
      continue;
    }
    if (pendingSpace) {
      normalized += " ";
      lines.push(line);
      pendingSpace = false;
    }
    const lower = ch.toLowerCase();
    normalized += lower;
    for (let k = 0; k < lower.length; k += 1) lines.push(line);
  }
  return { normalized, lines };
}

export function checkClaims(document: ReadmeDocument, contract: ReadmePackageContract): GradeCheck {
  const { normalized, lines } = normalizeWithLines(document.text);
  const matches: { claim: string; line: number }[] = [];
  for (const claim of contract.forbiddenClaims) {
    const needle = normalizeWithLines(claim).normalized;
    if (needle === "") continue;
    const at = normalized.indexOf(needle);
    if (at !== -1) matches.push({ claim, line: lines[at] ?? 0 });
  }
  return makeCheck(
    "no-invented-capabilities",
    matches.length === 0,
    matches.length === 0
      ? `none of ${contract.forbiddenClaims.length} forbidden claims appears`
      : `forbidden claim(s): ${matches.map((m) => `${JSON.stringify(m.claim)} (line ${m.line})`).join(", ")}`,
    { matches },
  );
}
