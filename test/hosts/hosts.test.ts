import { describe, expect, it } from "vitest";
import {
  buildRunPreamble,
  estimatedCostUsd,
  HOST_IDS,
  hostProfile,
  inputPricePerMillion,
  isHostId,
  type MaterializationRequest,
  profileForHost,
  realizeWithCapabilities,
} from "../../src/hosts/index.js";
import type { ComponentContract, HarnessIrBundle, Strength } from "../../src/ir/index.js";
import { compileHarness } from "../../src/language/index.js";
import { resolveComposition } from "../../src/resolver/index.js";

function request(
  strength: Strength | undefined,
  kind: ComponentContract["componentKind"] = "policy",
) {
  const component: ComponentContract = {
    irVersion: "0.1.0",
    kind: "component-contract",
    id: "gate",
    componentKind: kind,
    inputs: [],
    outputs: [],
    permissions: [],
  };
  const base: MaterializationRequest = {
    host: "pi",
    componentId: "gate",
    component,
    binding: undefined,
  };
  return strength === undefined ? base : { ...base, binding: { mechanism: "stop-hook", strength } };
}

describe("host profiles", () => {
  it("exist for qoder, pi, claude-code, codex and scripted", () => {
    expect([...HOST_IDS]).toEqual(["qoder", "pi", "claude-code", "codex", "scripted"]);
    for (const id of HOST_IDS) {
      expect(hostProfile(id).id).toBe(id);
      expect(hostProfile(id).known).toBe(true);
      expect(isHostId(id)).toBe(true);
    }
    expect(isHostId("claude")).toBe(false);
  });

  it("realize a binding whose mechanism no executor implements only as advisory prompt guidance", () => {
    for (const id of HOST_IDS) {
      const profile = hostProfile(id);
      for (const strength of ["advisory", "wired", "enforced"] as const) {
        expect(profile.realize(request(strength))).toEqual({
          strength: "advisory",
          mechanism: "prompt-preamble",
        });
      }
      expect(profile.realize(request("unsupported"))).toEqual({
        strength: "unsupported",
        mechanism: null,
      });
      expect(profile.realize(request(undefined))).toEqual({
        strength: "unsupported",
        mechanism: null,
      });
    }
  });

  it("give a host name without a profile the same advisory behaviour, marked as unknown", () => {
    const profile = profileForHost("qoder-cli");
    expect(profile).toMatchObject({ id: "qoder-cli", known: false });
    expect(profile.realize(request("enforced"))).toEqual({
      strength: "advisory",
      mechanism: "prompt-preamble",
    });
    expect(profileForHost("pi")).toBe(hostProfile("pi"));
  });
});

describe("realizeWithCapabilities (the seam later executors raise strengths through)", () => {
  const capabilities = [
    { mechanism: "prompt-preamble", strength: "advisory" as const, description: "prompt" },
    {
      mechanism: "permission-callback",
      strength: "enforced" as const,
      componentKinds: ["policy" as const],
      description: "the executor decides every tool call",
    },
  ];

  it("uses the strongest capability that applies, capped at the declared strength", () => {
    expect(realizeWithCapabilities(capabilities, request("enforced"))).toEqual({
      strength: "enforced",
      mechanism: "permission-callback",
    });
    expect(realizeWithCapabilities(capabilities, request("wired"))).toEqual({
      strength: "wired",
      mechanism: "permission-callback",
    });
  });

  it("skips capabilities for other component kinds or declared mechanisms", () => {
    expect(realizeWithCapabilities(capabilities, request("enforced", "skill"))).toEqual({
      strength: "advisory",
      mechanism: "prompt-preamble",
    });
    const onlyStopHooks = [
      { ...capabilities[1]!, componentKinds: undefined, declaredMechanisms: ["completion-hook"] },
    ];
    expect(realizeWithCapabilities(onlyStopHooks, request("enforced"))).toEqual({
      strength: "unsupported",
      mechanism: null,
    });
  });
});

describe("buildRunPreamble", () => {
  const source = `component reader {
  kind skill
  description "Read the code first."
}
component writer { kind tool description "Edit files\\nonly in src." }
component tracer { kind observer }
component view { kind ui }
binding reader for pi
binding writer for pi { mechanism sdk-tool strength wired }
binding tracer for pi { mechanism trace strength unsupported }
plugin p { version "1.0.0" provides [ component.reader, component.writer, component.tracer, component.view ] }
composition run { target pi include [ plugin.p@1 ] require reader }`;
  const bundle = compileHarness(source).bundle as HarnessIrBundle;
  const revision = resolveComposition(bundle, "run").revision!;

  it("names the revision, lists each materialized component, and warns about each degradation", () => {
    expect(buildRunPreamble(revision, bundle)).toBe(
      [
        `Harness revision ${revision.revisionId} (composition run, host pi)`,
        "",
        "Follow this guidance from the harness (advisory; it is not enforced):",
        "- [reader] Read the code first.",
        "- [writer] Edit files only in src.",
        "",
        "Warning: [tracer] degraded to 'unsupported': implicitly enabled; host 'pi' declares this component unsupported via 'trace'",
        "Warning: [view] degraded to 'unsupported': implicitly enabled; host 'pi' has no binding for this component",
        "Warning: [writer] degraded to 'advisory': implicitly enabled; declared 'wired' via 'sdk-tool', materialized as 'advisory' via 'prompt-preamble'",
        "",
      ].join("\n"),
    );
  });

  it("describes a component without a description by its kind", () => {
    const plain = compileHarness(
      'component c { kind hook }\nbinding c for pi\nplugin p { version "1.0.0" provides [ component.c ] }\ncomposition r { target pi include [ plugin.p@1 ] }',
    ).bundle!;
    const preamble = buildRunPreamble(resolveComposition(plain, "r").revision!, plain);
    expect(preamble).toContain("- [c] (hook component without a description)\n");
    expect(preamble).not.toContain("Warning");
  });
});

describe("list prices for hosts that report tokens only", () => {
  it("prices cost-equivalent tokens at the model's input price, a dated snapshot as its model", () => {
    expect(inputPricePerMillion("gpt-5-codex")).toBe(1.25);
    expect(inputPricePerMillion("claude-sonnet-4-5-20250929")).toBe(3);
    expect(estimatedCostUsd("gpt-5-codex", 2_000_000)).toBeCloseTo(2.5);
    expect(estimatedCostUsd("claude-haiku-4-5", 1_000_000)).toBeCloseTo(1);
  });

  it("has no price for a model it does not list, or without tokens: not comparable, never guessed", () => {
    expect(inputPricePerMillion("my-local-model")).toBeNull();
    expect(inputPricePerMillion("gpt-5-codex-2025")).toBeNull();
    expect(estimatedCostUsd("my-local-model", 1000)).toBeNull();
    expect(estimatedCostUsd("gpt-5", null)).toBeNull();
    expect(estimatedCostUsd(undefined, 1000)).toBeNull();
  });
});
