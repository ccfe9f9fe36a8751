import { describe, expect, it } from "vitest";
import {
  type ComponentContract,
  contentHash,
  type HarnessIrBundle,
  harnessRevisionSchema,
  revisionIdOf,
} from "../../src/ir/index.js";
import { compileHarness } from "../../src/language/index.js";
import {
  mergePermissions,
  resolveComposition,
  selectPluginVersion,
} from "../../src/resolver/index.js";

function compile(source: string): HarnessIrBundle {
  const { bundle, diagnostics } = compileHarness(source);
  expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return bundle!;
}

/** A program with one component `gate` bound on pi as given, and a composition requiring it. */
function gateProgram(binding: string, requirement: string): HarnessIrBundle {
  return compile(`component gate { kind policy description "Gate." }
${binding}
plugin gates { version "1.0.0" provides [ component.gate ] }
composition run { target pi include [ plugin.gates@1 ] ${requirement} }`);
}

describe("plugin version selection", () => {
  const plugins = compile(`component c { kind tool }
plugin p { version "1.0.0" provides [ component.c ] }
plugin p { version "1.3.0" provides [ component.c ] }
plugin p { version "2.0.0" provides [ component.c ] }
plugin q { version "v0.9.1" provides [ component.c ] }
plugin q { version "1.2.0-rc.1" provides [ component.c ] }
plugin q { version "1.2.0" provides [ component.c ] }`).plugins;

  it("picks the highest declared version that satisfies the range", () => {
    const pick = (pluginId: string, range: string) => {
      const selection = selectPluginVersion({ pluginId, range }, plugins);
      return selection.ok ? selection.plugin.version : selection.error;
    };
    expect(pick("p", "^1")).toBe("1.3.0");
    expect(pick("p", "1.0.0")).toBe("1.0.0");
    expect(pick("p", "~1.0")).toBe("1.0.0");
    expect(pick("p", "2")).toBe("2.0.0");
  });

  it("coerces versions before matching, preferring a release over its prerelease", () => {
    const pick = (range: string) => {
      const selection = selectPluginVersion({ pluginId: "q", range }, plugins);
      return selection.ok ? selection.plugin.version : selection.error;
    };
    expect(pick("0")).toBe("v0.9.1");
    expect(pick("^1")).toBe("1.2.0");
  });

  it("lists the available versions when none satisfies the range", () => {
    expect(selectPluginVersion({ pluginId: "p", range: "^3" }, plugins)).toEqual({
      ok: false,
      error: "Plugin 'p' has no version satisfying '^3' (available: 1.0.0, 1.3.0, 2.0.0).",
    });
    expect(selectPluginVersion({ pluginId: "zzz", range: "1" }, plugins)).toEqual({
      ok: false,
      error: "Plugin 'zzz' is not available in the registry.",
    });
  });
});

describe("requirement decisions", () => {
  it("satisfies a requirement the realized strength meets, without a reason or a preferred strength", () => {
    const bundle = gateProgram(
      "binding gate for pi { mechanism sdk-tool strength wired }",
      "require gate { minimum advisory }",
    );
    const { revision, report } = resolveComposition(bundle, "run");
    expect(report.status).toBe("resolved");
    expect(report.realizations).toEqual([
      {
        componentId: "gate",
        requestedMinimum: "advisory",
        declaredStrength: "wired",
        declaredMechanism: "sdk-tool",
        realized: "advisory",
        materializedMechanism: "prompt-preamble",
        action: "satisfied",
      },
    ]);
    expect(revision?.realization).toEqual(report.realizations);
  });

  it("degrades a requirement realized below its preferred strength when on-degrade is report, appending the binding's notes", () => {
    const bundle = gateProgram(
      'binding gate for pi { mechanism stop-hook strength enforced notes "Pi can stop." }',
      "require gate { preferred enforced minimum advisory on-degrade report }",
    );
    const { revision, report } = resolveComposition(bundle, "run");
    expect(report.status).toBe("resolved");
    expect(revision).toBeDefined();
    expect(report.realizations[0]).toMatchObject({
      requestedMinimum: "advisory",
      requestedPreferred: "enforced",
      realized: "advisory",
      action: "degraded",
      reason:
        "host 'pi' declares 'enforced' via 'stop-hook', but the v0.1 executor materializes prompt guidance at 'advisory' strength: Pi can stop.",
    });
  });

  it("fails a requirement realized below its preferred strength when on-degrade is fail", () => {
    const bundle = gateProgram(
      "binding gate for pi { mechanism stop-hook strength enforced }",
      "require gate { preferred wired minimum advisory on-degrade fail }",
    );
    const { revision, report } = resolveComposition(bundle, "run");
    expect(revision).toBeUndefined();
    expect(report.status).toBe("failed");
    expect(report.realizations[0]?.action).toBe("failed");
    expect(report.errors).toEqual([
      "Component 'gate' realizes 'advisory' on host 'pi', below the preferred 'wired' and the requirement declares 'on-degrade fail'.",
    ]);
  });

  it("fails a requirement realized below its minimum, whatever on-degrade says", () => {
    const bundle = gateProgram(
      "binding gate for pi { mechanism stop-hook strength enforced }",
      "require gate { minimum wired on-degrade report }",
    );
    const { report } = resolveComposition(bundle, "run");
    expect(report.errors).toEqual([
      "Component 'gate' realizes 'advisory' on host 'pi', below the required minimum 'wired'.",
    ]);
  });

  it("fails a required component the host declares unsupported, or has no binding for", () => {
    const unsupported = resolveComposition(
      gateProgram("binding gate for pi { mechanism none strength unsupported }", "require gate"),
      "run",
    ).report;
    expect(unsupported.realizations[0]).toMatchObject({
      declaredStrength: "unsupported",
      realized: "unsupported",
      materializedMechanism: null,
      action: "failed",
      reason: "host 'pi' declares this component unsupported via 'none'",
    });
    const unbound = resolveComposition(gateProgram("", "require gate"), "run").report;
    expect(unbound.realizations[0]).toMatchObject({
      declaredMechanism: null,
      action: "failed",
      reason: "host 'pi' has no binding for this component",
    });
    expect(unbound.errors).toEqual([
      "Component 'gate' realizes 'unsupported' on host 'pi', below the required minimum 'advisory'.",
    ]);
  });

  it("satisfies a minimum of unsupported even without a binding", () => {
    const { report } = resolveComposition(
      gateProgram("", "require gate { minimum unsupported }"),
      "run",
    );
    expect(report.status).toBe("resolved");
    expect(report.realizations[0]).toMatchObject({ realized: "unsupported", action: "satisfied" });
  });

  it("fails a required component that no included plugin provides", () => {
    const bundle = compile(`component a { kind skill }
component b { kind skill }
binding a for pi
plugin p { version "1.0.0" provides [ component.a ] }
composition run { target pi include [ plugin.p@1 ] require b { preferred wired minimum advisory } }`);
    const { report } = resolveComposition(bundle, "run");
    expect(report.realizations.map((r) => [r.componentId, r.action, r.reason])).toEqual([
      ["a", "satisfied", "implicitly enabled by an included plugin"],
      ["b", "failed", "component not provided"],
    ]);
    expect(report.realizations[1]?.requestedPreferred).toBe("wired");
    expect(report.errors).toEqual([
      "Required component 'b' is not provided by any included plugin.",
    ]);
  });
});

describe("implicitly enabled components", () => {
  const bundle = compile(`component z-advisory { kind skill }
component a-wired { kind tool }
component m-unsupported { kind hook }
component b-unbound { kind ui }
binding z-advisory for qoder
binding a-wired for qoder { mechanism sdk-tool strength wired }
binding m-unsupported for qoder { mechanism none strength unsupported }
plugin p { version "1.0.0" provides [ component.z-advisory, component.a-wired, component.m-unsupported, component.b-unbound ] }
composition run { target qoder include [ plugin.p@1 ] }`);

  it("get a realization each, sorted by component id, and never fail the resolution", () => {
    const { report } = resolveComposition(bundle, "run");
    expect(report.status).toBe("resolved");
    expect(
      report.realizations.map((r) => [r.componentId, r.requestedMinimum, r.action, r.reason]),
    ).toEqual([
      [
        "a-wired",
        "unsupported",
        "degraded",
        "implicitly enabled; declared 'wired' via 'sdk-tool', materialized as 'advisory' via 'prompt-preamble'",
      ],
      [
        "b-unbound",
        "unsupported",
        "degraded",
        "implicitly enabled; host 'qoder' has no binding for this component",
      ],
      [
        "m-unsupported",
        "unsupported",
        "degraded",
        "implicitly enabled; host 'qoder' declares this component unsupported via 'none'",
      ],
      ["z-advisory", "unsupported", "satisfied", "implicitly enabled by an included plugin"],
    ]);
  });
});

describe("the revision", () => {
  const source = `component reader { kind skill permissions { network allow workspace read workspace read } }
component writer { kind tool permissions { workspace write network deny model allow } }
binding reader for pi
binding reader for codex { mechanism skill-package }
binding writer for pi { mechanism sdk-tool strength wired }
plugin b-tools { version "1.0.0" provides [ component.writer ] }
plugin a-tools { version "1.0.0" provides [ component.reader ] }
composition run {
  target pi
  include [ plugin.b-tools@1, plugin.a-tools@1 ]
  require reader
  configure { t = 5s }
}`;
  const bundle = compile(source);

  it("merges permissions per domain with deny winning, sorted by domain then access", () => {
    const { revision } = resolveComposition(bundle, "run");
    expect(revision?.permissions).toEqual([
      { domain: "model", access: "allow" },
      { domain: "network", access: "deny" },
      { domain: "workspace", access: "read" },
      { domain: "workspace", access: "write" },
    ]);
  });

  it("lists resolved plugins and components sorted by id with their content hashes", () => {
    const { revision } = resolveComposition(bundle, "run");
    expect(revision?.resolved).toEqual({
      plugins: [
        { id: "a-tools", version: "1.0.0", contentHash: contentHash(bundle.plugins[1]) },
        { id: "b-tools", version: "1.0.0", contentHash: contentHash(bundle.plugins[0]) },
      ],
      components: [
        { id: "reader", contentHash: contentHash(bundle.components[0]) },
        { id: "writer", contentHash: contentHash(bundle.components[1]) },
      ],
    });
    expect(revision?.composition).toEqual({
      id: "run",
      contentHash: contentHash(bundle.compositions[0]),
    });
  });

  it("has a deterministic id computed over its canonical body, and validates against its schema", () => {
    const first = resolveComposition(bundle, "run").revision!;
    const second = resolveComposition(compile(source), "run").revision!;
    expect(second.revisionId).toBe(first.revisionId);
    expect(first.revisionId).toBe(revisionIdOf(first));
    expect(harnessRevisionSchema.safeParse(first).success).toBe(true);
    const changed = resolveComposition(compile(source.replace("t = 5s", "t = 6s")), "run");
    expect(changed.revision?.revisionId).not.toBe(first.revisionId);
  });

  it("shares no object with the report or the bundle", () => {
    const { revision, report } = resolveComposition(bundle, "run");
    revision!.realization[0]!.action = "failed";
    revision!.settings[0]!.value = { type: "int", value: 1 };
    expect(report.realizations[0]?.action).toBe("satisfied");
    expect(bundle.compositions[0]?.settings[0]?.value).toEqual({
      type: "duration",
      value: "5s",
      ms: 5000,
    });
  });

  it("resolves for another host when asked: bindings, target and id follow the host, the composition hash does not", () => {
    const onPi = resolveComposition(bundle, "run").revision!;
    const { revision, report } = resolveComposition(bundle, "run", { host: "codex" });
    expect(report.target).toBe("codex");
    expect(revision?.target).toEqual({ host: "codex" });
    expect(revision?.composition).toEqual(onPi.composition);
    expect(revision?.revisionId).not.toBe(onPi.revisionId);
    expect(report.status).toBe("resolved");
    // reader has a codex binding of its own; writer is bound on pi only.
    expect(report.realizations.map((r) => [r.componentId, r.declaredMechanism, r.action])).toEqual([
      ["reader", "skill-package", "satisfied"],
      ["writer", null, "degraded"],
    ]);
  });
});

describe("failures of hand-edited bundles", () => {
  it("reports an unknown composition with target 'unknown' (or the requested host)", () => {
    const bundle = gateProgram("", "");
    expect(resolveComposition(bundle, "nope").report).toEqual({
      irVersion: "0.1.0",
      kind: "resolution-report",
      compositionId: "nope",
      target: "unknown",
      status: "failed",
      realizations: [],
      errors: ["Composition 'nope' is not defined in the bundle."],
    });
    expect(resolveComposition(bundle, "nope", { host: "pi" }).report.target).toBe("pi");
  });

  it("fails when a selected plugin provides a component the bundle has no contract for", () => {
    const bundle = gateProgram("binding gate for pi", "require gate");
    const edited: HarnessIrBundle = { ...bundle, components: [] as ComponentContract[] };
    const { revision, report } = resolveComposition(edited, "run");
    expect(revision).toBeUndefined();
    expect(report.errors).toEqual([
      "Component 'gate' provided by plugin 'gates@1.0.0' has no contract in the bundle.",
    ]);
  });
});

describe("mergePermissions", () => {
  it("keeps distinct accesses of a domain without deny, and only deny when any component denies", () => {
    const contract = (permissions: ComponentContract["permissions"]): ComponentContract => ({
      irVersion: "0.1.0",
      kind: "component-contract",
      id: "x",
      componentKind: "tool",
      inputs: [],
      outputs: [],
      permissions,
    });
    expect(
      mergePermissions([
        contract([
          { domain: "process", access: "write" },
          { domain: "process", access: "allow" },
        ]),
        contract([
          { domain: "process", access: "write" },
          { domain: "model", access: "read" },
        ]),
        contract([{ domain: "model", access: "deny" }]),
      ]),
    ).toEqual([
      { domain: "model", access: "deny" },
      { domain: "process", access: "allow" },
      { domain: "process", access: "write" },
    ]);
    expect(mergePermissions([])).toEqual([]);
  });
});
