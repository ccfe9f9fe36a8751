// Stable diagnostic codes. A code never changes meaning; new problems get new codes.
// HL1xxx: the text cannot be read (lexical and syntax errors).
// HL2xxx: the text reads, but breaks a rule of the language (docs/language.md; semantic errors, also across files).
// HL3xxx: warnings; a bundle is still produced.

export const DIAGNOSTIC_CODES = {
  HL1001: "unexpected character",
  HL1002: "unterminated string",
  HL1003: "unterminated block comment",
  HL1004: "malformed number or duration",
  HL1005: "unexpected token (the message says what was expected)",
  HL1006: "value not in the allowed set (kind, strength, domain, access, on-degrade)",
  HL1007: "unknown clause inside a block",
  HL1008: "clause repeated inside one block",
  HL1009: "required clause missing (kind, version, minimum)",
  HL1010: "block not closed",
  HL1011: "number too large",
  HL2001: "duplicate component",
  HL2002: "duplicate composition",
  HL2003: "duplicate binding for a component and host",
  HL2004: "duplicate plugin version",
  HL2005: "component required twice in a composition",
  HL2006: "configuration key set twice",
  HL2007: "component input listed twice",
  HL2008: "component output listed twice",
  HL2009: "plugin provides a component twice",
  HL2010: "plugin included twice",
  HL2011: "plugin version is not a valid semantic version",
  HL2012: "include range is not a valid semver range",
  HL2013: "preferred strength below the minimum",
  HL2014: "reference to an undeclared component",
  HL2015: "include of an undeclared plugin",
  HL2016: "composition extends an undeclared composition",
  HL2017: "composition inheritance cycle",
  HL2018: "child composition re-declares an inherited member",
  HL2019: "composition has no target host",
  HL2020: "composition inheritance chain too deep",
  HL2021:
    "a v0.2 clause on a component of another kind (mcp or cli on a tool, hook on a hook, tools on a subagent), or mcp and cli on one tool",
  HL2022:
    "a v0.2 clause or component without what it needs (an mcp or cli command, a hook event and command, a source)",
  HL2023: "variable set twice in an mcp or cli env",
  HL2024: "source path not a plain relative path inside the .harness file's folder",
  HL2025: "source cannot be read (missing, unreadable, a symbolic link, too large)",
  HL2026:
    "source malformed for its kind (a skill without a valid SKILL.md, instructions that are not Markdown)",
  HL2027:
    "placeholder in an mcp, cli or hook command that harnesslab does not fill (${source}, and ${forge.…} in mcp and cli), or ${source} without a source",
  HL3001: "host is not one harnesslab knows",
  HL3002: "permission listed twice in a component",
} as const;

export type DiagnosticCode = keyof typeof DIAGNOSTIC_CODES;
