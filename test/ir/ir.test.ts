import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  compareStrength,
  contentHash,
  harnessIrBundleSchema,
  harnessRevisionSchema,
  IR_VERSION,
  jsonSchemas,
  parseIrBundle,
  resolutionReportSchema,
  revisionIdOf,
  STRENGTHS,
  sha256Hex,
  weakerStrength,
} from "../../src/ir/index.js";
import { compileHarness } from "../../src/language/index.js";
import { resolveComposition } from "../../src/resolver/index.js";

describe("canonicalJson", () => {
  it("sorts keys recursively, drops undefined properties and has no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: undefined } })).toBe(
      '{"a":{"d":[3,{"y":null,"z":true}]},"b":1}',
    );
  });

  it("sorts keys by UTF-16 code units, not by locale", () => {
    expect(canonicalJson({ b: 0, B: 0, _: 0, é: 0, a: 0 })).toBe('{"B":0,"_":0,"a":0,"b":0,"é":0}');
  });

  it("keeps array order, writes undefined array items as null and escapes strings like JSON", () => {
    expect(canonicalJson([2, undefined, 'quote " and \n'])).toBe('[2,null,"quote \\" and \\n"]');
  });

  it("rejects values that are not JSON", () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(TypeError);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(TypeError);
  });

  it("does not depend on the insertion order of keys", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const reversed = Object.fromEntries(Object.entries(record).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(record));
        expect(JSON.parse(canonicalJson(record))).toEqual(JSON.parse(JSON.stringify(record)));
      }),
      { numRuns: 200, seed: 11 },
    );
  });
});

describe("hashes", () => {
  it("computes SHA-256 of the UTF-8 text in hex", () => {
    expect(sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256Hex("é")).toBe(
      createHash("sha256").update(Buffer.from("é", "utf8")).digest("hex"),
    );
  });

  it("content hashes are sha256: of the canonical JSON", () => {
    const value = { b: [1, 2], a: "x" };
    expect(contentHash(value)).toBe(`sha256:${sha256Hex('{"a":"x","b":[1,2]}')}`);
    expect(contentHash({ a: "x", b: [1, 2], c: undefined })).toBe(contentHash(value));
  });

  it("a revision id is hr_ + the first 32 hex digits of the body's hash, ignoring any revisionId", () => {
    const body = { kind: "harness-revision", x: 1 };
    const id = revisionIdOf(body);
    expect(id).toBe(`hr_${sha256Hex(canonicalJson(body)).slice(0, 32)}`);
    expect(id).toMatch(/^hr_[0-9a-f]{32}$/);
    expect(revisionIdOf({ ...body, revisionId: "hr_whatever" })).toBe(id);
  });
});

describe("strengths", () => {
  it("are ordered unsupported < advisory < wired < enforced", () => {
    for (let i = 0; i < STRENGTHS.length - 1; i++) {
      expect(compareStrength(STRENGTHS[i]!, STRENGTHS[i + 1]!)).toBeLessThan(0);
    }
    expect(weakerStrength("enforced", "advisory")).toBe("advisory");
    expect(weakerStrength("unsupported", "wired")).toBe("unsupported");
  });
});

describe("IR schemas", () => {
  const source = `component gate { kind policy description "d" permissions { network deny } }
binding gate for pi { mechanism extension-event strength enforced notes "n" }
plugin gates { version "1.0.0" provides [ component.gate ] }
composition run { target pi include [ plugin.gates@1 ] require gate { preferred wired minimum advisory } configure { t = 5s } }`;
  const bundle = compileHarness(source).bundle!;
  const { revision, report } = resolveComposition(bundle, "run");

  it("publishes one JSON Schema per IR document kind", () => {
    expect(Object.keys(jsonSchemas).sort()).toEqual([
      "ir-0.2-bundle",
      "ir-0.2-component-contract",
      "ir-0.2-composition-spec",
      "ir-0.2-plugin-manifest",
      "ir-0.2-resolution-report",
      "ir-0.2-revision",
      "ir-0.2-target-binding",
      "ir-bundle",
      "ir-component-contract",
      "ir-composition-spec",
      "ir-plugin-manifest",
      "ir-resolution-report",
      "ir-revision",
      "ir-target-binding",
    ]);
  });

  it("accepts what the compiler and resolver produce", () => {
    expect(bundle.irVersion).toBe(IR_VERSION);
    expect(harnessIrBundleSchema.safeParse(bundle).success).toBe(true);
    expect(harnessRevisionSchema.safeParse(revision).success).toBe(true);
    expect(resolutionReportSchema.safeParse(report).success).toBe(true);
  });

  it("rejects unknown properties at every level (closed objects), naming the JSON path", () => {
    const tampered = structuredClone(bundle) as unknown as {
      plugins: Array<{ bindings: Array<Record<string, unknown>> }>;
    };
    tampered.plugins[0]!.bindings[0]!.extra = true;
    const result = parseIrBundle(tampered);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problems).toEqual([
        { path: "plugins[0].bindings[0].extra", message: "unknown field (not allowed here)" },
      ]);
    }
  });

  it("rejects a wrong IR version, strength or duration shape", () => {
    const wrong = structuredClone(bundle) as unknown as Record<string, unknown> & {
      bindings: Array<Record<string, unknown>>;
      compositions: Array<{ settings: Array<{ value: Record<string, unknown> }> }>;
    };
    wrong.irVersion = "0.3.0";
    wrong.bindings[0]!.strength = "strong";
    wrong.compositions[0]!.settings[0]!.value.ms = -1;
    const result = parseIrBundle(wrong);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problems.map((p) => p.path)).toEqual([
        "irVersion",
        "bindings[0].strength",
        "compositions[0].settings[0].value.ms",
      ]);
    }
    // A 0.2.0 bundle is held to IR 0.2.0 throughout: no 0.1.0 document inside it.
    const mixed = structuredClone(bundle) as unknown as Record<string, unknown>;
    mixed.irVersion = "0.2.0";
    const read = parseIrBundle(mixed);
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.problems[0]?.path).toBe("components[0].irVersion");
  });
});
