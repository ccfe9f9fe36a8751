// harness ci's derived experiment (pure): the variant under test as `base` (its files under the
// base's folder) and as `head`, everything else of the manifest as written.
import { describe, expect, it } from "vitest";
import { deriveCiManifest } from "../../src/compare/ci/derive.js";

const manifest = (variants: unknown[], extra: Record<string, unknown> = {}) => ({
  schemaVersion: "harness-compare.v2",
  harness: "./setup.harness",
  tasks: [{ id: "t" }],
  variants,
  baseline: "a",
  ...extra,
});

describe("deriveCiManifest", () => {
  it("puts the base's harness files and agent module under the base folder, and keeps the rest", () => {
    const derived = deriveCiManifest(
      manifest([{ id: "a", composition: "team", agent: "./agents/a.mjs", maxTurns: 9 }]),
      undefined,
      ".hl/sub",
    );
    expect(derived).toEqual({
      ok: true,
      variant: "a",
      setupPaths: ["./setup.harness", "./agents/a.mjs"],
      document: manifest(
        [
          {
            composition: "team",
            maxTurns: 9,
            id: "base",
            harness: [".hl/sub/setup.harness"],
            agent: ".hl/sub/agents/a.mjs",
          },
          { composition: "team", maxTurns: 9, agent: "./agents/a.mjs", id: "head" },
        ],
        { baseline: "base" },
      ),
    });
  });

  it("uses the variant's own harness files, and an oracle's patch, when it names them", () => {
    const derived = deriveCiManifest(
      manifest([
        { id: "a", composition: "x", agent: "nop" },
        {
          id: "b",
          composition: "y",
          harness: ["one.harness", "two.harness"],
          agent: "oracle:fix.patch",
        },
      ]),
      "b",
      ".hl",
    );
    if (!derived.ok) throw new Error(derived.problem.message);
    const [base, head] = derived.document.variants as Record<string, unknown>[];
    expect(base).toMatchObject({
      harness: [".hl/one.harness", ".hl/two.harness"],
      agent: "oracle:.hl/fix.patch",
    });
    expect(head).toMatchObject({
      harness: ["one.harness", "two.harness"],
      agent: "oracle:fix.patch",
    });
    expect(derived.setupPaths).toEqual(["one.harness", "two.harness", "fix.patch"]);
  });

  it("asks which variant when there are several, and refuses a matrix", () => {
    const two = manifest([{ id: "a" }, { id: "b" }]);
    expect(deriveCiManifest(two, undefined, ".hl")).toEqual({
      ok: false,
      problem: {
        path: "--variant",
        message: "the manifest has 2 variants (a, b); name the setup under test with --variant",
      },
    });
    expect(deriveCiManifest(two, "c", ".hl")).toMatchObject({
      ok: false,
      problem: { message: 'no variant "c" in the manifest; it has a, b' },
    });
    expect(
      deriveCiManifest(manifest([{ id: "a" }], { matrix: {} }), undefined, ".hl"),
    ).toMatchObject({
      ok: false,
      problem: { path: "matrix" },
    });
  });
});
