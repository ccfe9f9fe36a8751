import { describe, expect, it } from "vitest";
import { permissionFlag, sandboxNodeFlags, screenExample } from "../../src/graders/index.js";

const PKG = "@fixture/task-pool";

function rules(code: string): string[] {
  return screenExample(code, PKG).findings.map((f) => f.rule);
}

describe("quick-start screen", () => {
  it("accepts an example that imports only the package and uses ordinary globals", () => {
    const code = [
      'import { createPool } from "@fixture/task-pool";',
      'import * as sub from "@fixture/task-pool/package.json";',
      "const pool = createPool();",
      "console.log(await pool.run(() => new Promise((r) => setTimeout(r, 1, 'x'))));",
    ].join("\n");
    expect(screenExample(code, PKG)).toEqual({
      ok: true,
      findings: [],
      imports: ["@fixture/task-pool", "@fixture/task-pool/package.json"],
    });
  });

  it("ignores forbidden words inside strings, comments, template text and regular expressions", () => {
    const code = [
      "// process and fetch are not used here",
      "/* globalThis */",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source under test
      "console.log(\"process finished\", 'require', `eval is ${1 + 1} times Function`);",
      "const pattern = /process|fetch/g;",
      "console.log(pattern.test('x'));",
    ].join("\n");
    expect(rules(code)).toEqual([]);
  });

  it("allows property names that match host globals but not prototype access", () => {
    expect(rules("const o = { run() {} }; o.process; o?.fetch; o.require;")).toEqual([]);
    expect(rules("const F = (() => {}).constructor;")).toEqual(["prototype-access"]);
    expect(rules("const F = x?.constructor;")).toEqual(["prototype-access"]);
    expect(rules('const F = x["constructor"];')).toEqual(["prototype-access"]);
    expect(rules("const p = x.__proto__;")).toEqual(["prototype-access"]);
    expect(rules("const p = { __proto__: null };")).toEqual(["prototype-access"]);
  });

  it.each([
    ["process.exit(1)", "host-capability"],
    ["globalThis.x = 1", "host-capability"],
    ["const { env } = process;", "host-capability"],
    ["await fetch('https://example.com')", "host-capability"],
    ["const fs = require('fs')", "host-capability"],
    ["new Worker('x.js')", "host-capability"],
    ["WebAssembly.compile(bytes)", "host-capability"],
    ["eval('1')", "code-generation"],
    ["new Function('return 1')", "code-generation"],
    ["await import('@fixture/task-pool')", "dynamic-import"],
    ["console.log(import.meta.url)", "import-meta"],
    ["\\u0070rocess.exit()", "escaped-identifier"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source under test
    ["const s = `${process.version}`;", "host-capability"],
  ])("rejects %s", (code, rule) => {
    expect(rules(code)).toContain(rule);
  });

  it("names the kind of every foreign import, static and re-exported", () => {
    const code = [
      'import fs from "node:fs";',
      'import cp from "child_process";',
      'import x from "https://cdn.example/x.js";',
      'import "data:text/javascript,1";',
      'import y from "./src/index.js";',
      'export * from "lodash";',
      'import z from "@fixture/task-pool-extra";',
    ].join("\n");
    expect(rules(code)).toEqual([
      "url-specifier",
      "foreign-import",
      "url-specifier",
      "url-specifier",
      "relative-import",
      "foreign-import",
      "foreign-import",
    ]);
  });

  it("treats everything as foreign when the package has no name", () => {
    expect(screenExample('import { a } from "@fixture/task-pool";', undefined).ok).toBe(false);
  });

  it("rejects code it cannot tokenize instead of guessing", () => {
    expect(rules('const s = "unterminated;\nprocess.exit()')).toEqual(["unparseable"]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source under test
    expect(rules("const t = `open ${1 + 1}")).toEqual(["unparseable"]);
  });

  it("does not mistake a division after a keyword-named property for a regular expression", () => {
    expect(rules("const v = obj.return / process / 2;")).toEqual(["host-capability"]);
  });
});

describe("sandbox flags", () => {
  it.each([
    ["20.0.0", "--experimental-permission"],
    ["20.20.2", "--experimental-permission"],
    ["22.12.0", "--experimental-permission"],
    ["22.13.0", "--permission"],
    ["23.4.0", "--experimental-permission"],
    ["23.5.0", "--permission"],
    ["24.0.0", "--permission"],
    ["26.1.0", "--permission"],
  ])("Node %s uses %s", (version, flag) => {
    expect(permissionFlag(version)).toBe(flag);
  });

  it("refuses Node versions without a permission model", () => {
    expect(() => permissionFlag("18.19.0")).toThrow(/Node 20 or newer/);
  });

  it("grants read access to the trial root only and refuses paths Node 20 would split", () => {
    const flags = sandboxNodeFlags("20.20.2", "/tmp/trial");
    expect(flags).toContain("--allow-fs-read=/tmp/trial");
    expect(flags.some((f) => f.startsWith("--allow-fs-write"))).toBe(false);
    expect(flags.some((f) => f.startsWith("--allow-child-process"))).toBe(false);
    expect(() => sandboxNodeFlags("20.20.2", "/tmp/a,b")).toThrow(/","/);
  });
});
