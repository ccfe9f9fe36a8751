import { describe, expect, it } from "vitest";
import {
  COMPONENT_KINDS,
  canonicalJson,
  harnessIrBundleSchema,
  PERMISSION_ACCESSES,
  PERMISSION_DOMAINS,
  STRENGTHS,
} from "../../src/ir/index.js";
import { compileHarness } from "../../src/language/index.js";
import { compileOk, located, readExample, withComposition } from "./support.js";

const fullSurface = readExample("full-surface.harness");

describe("examples/full-surface.harness", () => {
  const bundle = compileOk([{ uri: "examples/full-surface.harness", text: fullSurface }]);

  it("compiles without any diagnostic into a schema-valid bundle", () => {
    expect(compileHarness(fullSurface).diagnostics).toEqual([]);
    expect(harnessIrBundleSchema.safeParse(bundle).success).toBe(true);
  });

  it("uses every component kind, permission domain and permission access", () => {
    expect(new Set(bundle.components.map((c) => c.componentKind))).toEqual(
      new Set(COMPONENT_KINDS),
    );
    const permissions = bundle.components.flatMap((c) => c.permissions);
    expect(new Set(permissions.map((p) => p.domain))).toEqual(new Set(PERMISSION_DOMAINS));
    expect(new Set(permissions.map((p) => p.access))).toEqual(new Set(PERMISSION_ACCESSES));
  });

  it("lowers a component contract with its description, inputs, outputs and permissions in order", () => {
    expect(bundle.components[0]).toEqual({
      irVersion: "0.1.0",
      kind: "component-contract",
      id: "repo-map",
      componentKind: "skill",
      description: "Map the modules a change touches before editing anything.",
      inputs: ["task", "repository"],
      outputs: ["module-map"],
      permissions: [
        { domain: "workspace", access: "read" },
        { domain: "model", access: "allow" },
      ],
    });
    const observer = bundle.components.find((c) => c.id === "cost-observer");
    expect(observer).not.toHaveProperty("description");
    expect(observer?.inputs).toEqual([]);
  });

  it("declares bindings at every strength and expands `for [a, b]` into one binding per host", () => {
    expect(new Set(bundle.bindings.map((b) => b.strength))).toEqual(new Set(STRENGTHS));
    expect(bundle.bindings.filter((b) => b.componentId === "repo-map").map((b) => b.host)).toEqual([
      "qoder",
      "claude-code",
      "codex",
      "pi",
    ]);
    expect(bundle.bindings.find((b) => b.componentId === "repo-map")?.notes).toBe(
      "Loaded as a skill where the host has skills, as prompt text elsewhere.",
    );
  });

  it("lowers a bare binding and an empty binding block to advisory prompt guidance", () => {
    const bare = bundle.bindings.find(
      (b) => b.componentId === "scope-policy" && b.host === "qoder",
    );
    const empty = bundle.bindings.find(
      (b) => b.componentId === "fix-loop" && b.host === "scripted",
    );
    for (const binding of [bare, empty]) {
      expect(binding).toMatchObject({ mechanism: "prompt-preamble", strength: "advisory" });
      expect(binding).not.toHaveProperty("notes");
    }
  });

  it("joins each plugin version with the bindings of the components it provides, without notes", () => {
    const repoTools = bundle.plugins.filter((p) => p.id === "repo-tools");
    expect(repoTools.map((p) => p.version)).toEqual(["1.0.0", "1.4.0", "2.0.0-beta.1"]);
    expect(repoTools[0]?.bindings).toEqual([
      { componentId: "repo-map", host: "qoder", mechanism: "skill-package", strength: "advisory" },
      {
        componentId: "repo-map",
        host: "claude-code",
        mechanism: "skill-package",
        strength: "advisory",
      },
      { componentId: "repo-map", host: "codex", mechanism: "skill-package", strength: "advisory" },
      { componentId: "repo-map", host: "pi", mechanism: "skill-package", strength: "advisory" },
      {
        componentId: "patch-writer",
        host: "claude-code",
        mechanism: "sdk-tool",
        strength: "wired",
      },
    ]);
  });

  it("lowers a bare `require` to minimum advisory with on-degrade report and no preference", () => {
    const baseline = bundle.compositions.find((c) => c.id === "baseline");
    expect(baseline?.requirements).toEqual([
      { componentId: "repo-map", minimum: "advisory", onDegrade: "report" },
    ]);
  });

  it("lowers every configuration value type, durations with their milliseconds", () => {
    const baseline = bundle.compositions.find((c) => c.id === "baseline");
    expect(baseline?.settings).toEqual([
      { key: "runtime.max-turns", value: { type: "int", value: 30 } },
      { key: "runtime.timeout", value: { type: "duration", value: "15m", ms: 900_000 } },
      { key: "runtime.model-label", value: { type: "string", value: "fast lane\tv2" } },
      { key: "runtime.checkpoints", value: { type: "boolean", value: true } },
      { key: "runtime.network-enabled", value: { type: "boolean", value: false } },
      { key: "shell.timeout", value: { type: "duration", value: "90s", ms: 90_000 } },
      { key: "shell.poll-interval", value: { type: "duration", value: "250ms", ms: 250 } },
      { key: "budget.window", value: { type: "duration", value: "2h", ms: 7_200_000 } },
    ]);
  });

  it("flattens `extends`: inherited members first, through several levels", () => {
    const strict = bundle.compositions.find((c) => c.id === "strict-loop");
    expect(strict?.target).toBe("claude-code");
    expect(strict?.includes).toEqual([
      { pluginId: "repo-tools", range: "^1" },
      { pluginId: "guardrails", range: "~0.3" },
      { pluginId: "workflows", range: "3.1" },
    ]);
    expect(
      strict?.requirements.map((r) => [r.componentId, r.preferred, r.minimum, r.onDegrade]),
    ).toEqual([
      ["repo-map", undefined, "advisory", "report"],
      ["scope-policy", "enforced", "advisory", "report"],
      ["stop-gate", "wired", "advisory", "report"],
      ["fix-loop", "enforced", "advisory", "fail"],
      ["cost-observer", undefined, "unsupported", "report"],
    ]);
    expect(strict?.settings.map((s) => s.key).slice(-2)).toEqual([
      "budget.window",
      "budget.max-usd",
    ]);
  });

  it("lets a child override the inherited target and lets a composition omit include", () => {
    expect(bundle.compositions.find((c) => c.id === "codex-review")?.target).toBe("codex");
    const qoder = bundle.compositions.find((c) => c.id === "qoder-guarded");
    expect(qoder?.target).toBe("qoder");
    expect(qoder?.includes.map((i) => i.pluginId)).toEqual(["repo-tools", "guardrails"]);
  });

  it("produces byte-identical canonical output on every compilation", () => {
    const again = compileOk([{ uri: "examples/full-surface.harness", text: fullSurface }]);
    expect(canonicalJson(again)).toBe(canonicalJson(bundle));
    expect(JSON.stringify(again)).toBe(JSON.stringify(bundle));
  });
});

describe("lexical details", () => {
  it("accepts both comment styles anywhere between tokens, and a file without a final newline", () => {
    const bundle = compileOk(
      "/* a */ component /* b */ x /* c */ { // d\n kind /* e */ skill } // end",
    );
    expect(bundle.components.map((c) => c.id)).toEqual(["x"]);
  });

  it("decodes string escapes and keeps comment markers inside strings", () => {
    const bundle = compileOk(
      'component x { kind skill description "a\\"b\\\\c\\td\\ne // not /* a comment */" }',
    );
    expect(bundle.components[0]?.description).toBe('a"b\\c\td\ne // not /* a comment */');
  });

  it("treats keywords as names where a name is expected", () => {
    const bundle = compileOk(
      "component tool { kind tool input { kind input component } }\nbinding tool for pi { mechanism strength strength wired }",
    );
    expect(bundle.components[0]).toMatchObject({
      id: "tool",
      inputs: ["kind", "input", "component"],
    });
    expect(bundle.bindings[0]).toMatchObject({ mechanism: "strength", strength: "wired" });
  });

  it("handles CRLF line endings and a byte-order mark, counting columns without the mark", () => {
    const source = "\ufeffcomponent x {\r\n  kind gadget\r\n}\r\n";
    const { diagnostics } = compileHarness(source);
    expect(located(diagnostics)).toEqual([{ code: "HL1006", line: 2, column: 8 }]);
  });

  it("reads integers with leading zeros and every duration unit", () => {
    const bundle = compileOk(
      withComposition("  configure { a = 007 b = 0ms c = 2s d = 3m e = 4h f = 0 }"),
    );
    expect(bundle.compositions[0]?.settings.map((s) => s.value)).toEqual([
      { type: "int", value: 7 },
      { type: "duration", value: "0ms", ms: 0 },
      { type: "duration", value: "2s", ms: 2000 },
      { type: "duration", value: "3m", ms: 180_000 },
      { type: "duration", value: "4h", ms: 14_400_000 },
      { type: "int", value: 0 },
    ]);
  });
});

describe("conveniences of v0.1", () => {
  it("accepts the clauses of a block in any order", () => {
    const bundle = compileOk(
      `component x { permissions { workspace read } output { o } kind hook description "d" input { i } }
binding x for pi { notes "n" strength wired mechanism m }`,
    );
    expect(bundle.components[0]).toMatchObject({
      componentKind: "hook",
      inputs: ["i"],
      outputs: ["o"],
      description: "d",
    });
    expect(bundle.bindings[0]).toMatchObject({ mechanism: "m", strength: "wired", notes: "n" });
  });

  it("accepts a requirement's clauses in any order and defaults on-degrade to report", () => {
    const bundle = compileOk(
      withComposition("  require gate { minimum advisory preferred wired }"),
    );
    expect(bundle.compositions[0]?.requirements).toEqual([
      { componentId: "gate", preferred: "wired", minimum: "advisory", onDegrade: "report" },
    ]);
  });

  it("lowers `binding x for [a, b]` without a block to one advisory binding per host", () => {
    const bundle = compileOk("component x { kind ui }\nbinding x for [pi, codex]\n");
    expect(bundle.bindings.map((b) => [b.host, b.mechanism, b.strength])).toEqual([
      ["pi", "prompt-preamble", "advisory"],
      ["codex", "prompt-preamble", "advisory"],
    ]);
  });

  it("accepts empty lists and blocks", () => {
    const bundle = compileOk(
      'component x { kind ui input { } output { } permissions { } }\nplugin p { version "1.0.0" provides [ ] }\ncomposition c { target pi include [ ] configure { } }',
    );
    expect(bundle.plugins[0]?.provides).toEqual([]);
    expect(bundle.compositions[0]).toMatchObject({ includes: [], requirements: [], settings: [] });
  });
});

describe("multi-file compilation", () => {
  it("resolves references across files and keeps declarations in input order", () => {
    const bundle = compileOk([
      { uri: "a.harness", text: "component a { kind skill }" },
      {
        uri: "b.harness",
        text: 'binding a for pi\nplugin p { version "1.0.0" provides [ component.a ] }\ncomponent b { kind tool }',
      },
      { uri: "c.harness", text: "composition c { target pi include [ plugin.p@1 ] require a }" },
    ]);
    expect(bundle.components.map((c) => c.id)).toEqual(["a", "b"]);
    expect(bundle.plugins[0]?.bindings.map((b) => b.componentId)).toEqual(["a"]);
  });

  it("names the file of each diagnostic by the uri it was given", () => {
    const { bundle, diagnostics } = compileHarness([
      { uri: "one.harness", text: "component a { kind skill }" },
      { uri: "two.harness", text: "component a { kind tool }" },
    ]);
    expect(bundle).toBeUndefined();
    expect(diagnostics).toEqual([
      {
        uri: "two.harness",
        line: 1,
        column: 11,
        endLine: 1,
        endColumn: 12,
        code: "HL2001",
        severity: "error",
        message: 'duplicate component "a": first declared at one.harness:1:11',
      },
    ]);
  });

  it("uses memory://harness/0.harness for plain text input", () => {
    expect(compileHarness("component").diagnostics[0]?.uri).toBe("memory://harness/0.harness");
  });
});
