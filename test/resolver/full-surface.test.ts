// Resolution of examples/full-surface.harness: the satisfied, degraded and failed paths.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compileHarness } from "../../src/language/index.js";
import { resolveComposition } from "../../src/resolver/index.js";

const text = readFileSync(new URL("../../examples/full-surface.harness", import.meta.url), "utf8");
const bundle = compileHarness(text).bundle!;

function actions(compositionId: string, host?: "codex" | "qoder") {
  const { report } = resolveComposition(bundle, compositionId, host === undefined ? {} : { host });
  return Object.fromEntries(report.realizations.map((r) => [r.componentId, r.action]));
}

describe("resolving examples/full-surface.harness", () => {
  it("baseline: the required skill is satisfied; implicitly enabled wired tools degrade to advisory", () => {
    const { revision, report } = resolveComposition(bundle, "baseline");
    expect(report.status).toBe("resolved");
    expect(revision?.resolved.plugins).toEqual([
      { id: "repo-tools", version: "1.4.0", contentHash: expect.stringMatching(/^sha256:/) },
    ]);
    expect(report.realizations).toEqual([
      {
        componentId: "patch-writer",
        requestedMinimum: "unsupported",
        declaredStrength: "wired",
        declaredMechanism: "sdk-tool",
        realized: "advisory",
        materializedMechanism: "prompt-preamble",
        action: "degraded",
        reason:
          "implicitly enabled; declared 'wired' via 'sdk-tool', materialized as 'advisory' via 'prompt-preamble'",
      },
      {
        componentId: "repo-map",
        requestedMinimum: "advisory",
        declaredStrength: "advisory",
        declaredMechanism: "skill-package",
        realized: "advisory",
        materializedMechanism: "prompt-preamble",
        action: "satisfied",
      },
      {
        componentId: "test-runner",
        requestedMinimum: "unsupported",
        declaredStrength: "wired",
        declaredMechanism: "sdk-tool",
        realized: "advisory",
        materializedMechanism: "prompt-preamble",
        action: "degraded",
        reason:
          "implicitly enabled; declared 'wired' via 'sdk-tool', materialized as 'advisory' via 'prompt-preamble'",
      },
    ]);
    expect(revision?.settings.map((s) => s.value.type)).toEqual([
      "int",
      "duration",
      "string",
      "boolean",
      "boolean",
      "duration",
      "duration",
      "duration",
    ]);
  });

  it("guarded: a preferred enforcement degrades (on-degrade report), and the guard's deny wins", () => {
    const { revision, report } = resolveComposition(bundle, "guarded");
    expect(report.status).toBe("resolved");
    expect(report.realizations.find((r) => r.componentId === "scope-policy")).toEqual({
      componentId: "scope-policy",
      requestedMinimum: "advisory",
      requestedPreferred: "enforced",
      declaredStrength: "enforced",
      declaredMechanism: "permission-callback",
      realized: "advisory",
      materializedMechanism: "prompt-preamble",
      action: "degraded",
      reason:
        "host 'claude-code' declares 'enforced' via 'permission-callback', but the v0.1 executor materializes prompt guidance at 'advisory' strength",
    });
    // stop-gate has no on-degrade: it defaults to report, so it degrades too.
    expect(actions("guarded")["stop-gate"]).toBe("degraded");
    expect(revision?.permissions).toEqual([
      { domain: "model", access: "allow" },
      { domain: "model", access: "write" },
      { domain: "network", access: "deny" },
      { domain: "process", access: "allow" },
      { domain: "process", access: "read" },
      { domain: "workspace", access: "deny" },
    ]);
  });

  it("strict-loop: on-degrade fail turns the same degradation into a failed resolution", () => {
    const { revision, report } = resolveComposition(bundle, "strict-loop");
    expect(revision).toBeUndefined();
    expect(report.status).toBe("failed");
    expect(report.errors).toEqual([
      "Component 'fix-loop' realizes 'advisory' on host 'claude-code', below the preferred 'enforced' and the requirement declares 'on-degrade fail'.",
    ]);
    // A minimum of 'unsupported' accepts a component the host does not support at all.
    expect(actions("strict-loop")["cost-observer"]).toBe("satisfied");
  });

  it("codex-review: an overridden target, and an unbound component required at minimum unsupported", () => {
    const { revision, report } = resolveComposition(bundle, "codex-review");
    expect(report.status).toBe("resolved");
    expect(revision?.target).toEqual({ host: "codex" });
    expect(actions("codex-review")).toEqual({
      "cost-observer": "degraded",
      "fix-loop": "degraded",
      "patch-writer": "degraded",
      "repo-map": "satisfied",
      "review-ui": "satisfied",
      "test-runner": "degraded",
    });
  });

  it("qoder-guarded: a required component without a Qoder binding fails below its minimum", () => {
    const { report } = resolveComposition(bundle, "qoder-guarded");
    expect(report.errors).toEqual([
      "Component 'stop-gate' realizes 'unsupported' on host 'qoder', below the required minimum 'advisory'.",
    ]);
    // The bare binding gives scope-policy advisory prompt guidance on Qoder.
    expect(report.realizations.find((r) => r.componentId === "scope-policy")).toMatchObject({
      declaredStrength: "advisory",
      declaredMechanism: "prompt-preamble",
      realized: "advisory",
    });
  });

  it("resolves the same composition for another host on request", () => {
    expect(resolveComposition(bundle, "baseline", { host: "codex" }).report.status).toBe(
      "resolved",
    );
    expect(actions("baseline", "codex")).toEqual({
      "patch-writer": "degraded",
      "repo-map": "satisfied",
      "test-runner": "degraded",
    });
  });
});
