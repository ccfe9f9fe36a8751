// Semantic rules of the language (docs/language.md), checked over every file of a compilation at once so that
// duplicates and references work across files. Every problem is reported, none stops the pass.
import semver from "semver";
import { HOST_IDS, isHostId } from "../hosts/index.js";
import { compareStrength } from "../ir/index.js";
import { ancestorsOf, flattenComposition, MAX_EXTENDS_DEPTH } from "./inheritance.js";
import { checkV02Clauses, type ReadSource, usesV02 } from "./sources.js";
import type {
  BindingDecl,
  ComponentDecl,
  CompositionDecl,
  NameNode,
  ParsedFile,
  PluginDecl,
  RawDiagnostic,
  SourceReader,
  Span,
} from "./types.js";

export interface ProgramModel {
  components: ComponentDecl[];
  /** Each component's source as read (v0.2). */
  sources: Map<ComponentDecl, ReadSource>;
  /** Whether anything of v0.2 is used: the bundle is then IR 0.2.0. */
  v02: boolean;
  bindings: BindingDecl[];
  plugins: PluginDecl[];
  compositions: CompositionDecl[];
  /** First declaration of each composition name. */
  compositionByName: Map<string, CompositionDecl>;
}

export function validateProgram(
  files: readonly ParsedFile[],
  diagnostics: RawDiagnostic[],
  readSource?: SourceReader,
): ProgramModel {
  return new Validator(files, diagnostics, readSource).run();
}

class Validator {
  private readonly model: ProgramModel = {
    components: [],
    sources: new Map(),
    v02: false,
    bindings: [],
    plugins: [],
    compositions: [],
    compositionByName: new Map(),
  };
  private readonly componentByName = new Map<string, ComponentDecl>();
  private readonly pluginsByName = new Map<string, PluginDecl[]>();
  private readonly warnedHosts = new Set<string>();
  // Versions and ranges repeat across a program; semver parsing is the costliest check here.
  private readonly validVersions = new Map<string, boolean>();
  private readonly validRanges = new Map<string, boolean>();

  constructor(
    private readonly files: readonly ParsedFile[],
    private readonly diagnostics: RawDiagnostic[],
    private readonly readSource: SourceReader | undefined,
  ) {}

  run(): ProgramModel {
    for (const file of this.files) {
      for (const decl of file.declarations) {
        switch (decl.type) {
          case "component":
            this.model.components.push(decl);
            break;
          case "binding":
            this.model.bindings.push(decl);
            break;
          case "plugin":
            this.model.plugins.push(decl);
            break;
          default:
            this.model.compositions.push(decl);
        }
      }
    }
    this.declareComponents();
    this.declarePlugins();
    this.declareCompositions();
    for (const component of this.model.components) this.checkComponent(component);
    this.checkBindings();
    for (const plugin of this.model.plugins) this.checkPlugin(plugin);
    for (const composition of this.model.compositions) this.checkComposition(composition);
    return this.model;
  }

  private error(code: string, span: Span, message: string): void {
    this.diagnostics.push({ span, code, severity: "error", message });
  }

  private warning(code: string, span: Span, message: string): void {
    this.diagnostics.push({ span, code, severity: "warning", message });
  }

  private isValidVersion(version: string): boolean {
    let valid = this.validVersions.get(version);
    if (valid === undefined) {
      valid = semver.valid(version) !== null;
      this.validVersions.set(version, valid);
    }
    return valid;
  }

  private isValidRange(range: string): boolean {
    let valid = this.validRanges.get(range);
    if (valid === undefined) {
      valid = semver.validRange(range) !== null;
      this.validRanges.set(range, valid);
    }
    return valid;
  }

  private at(span: Span): string {
    return `${this.files[span.file]?.uri ?? "?"}:${span.line}:${span.column}`;
  }

  // ---- declarations -------------------------------------------------------------------------

  private declareComponents(): void {
    for (const component of this.model.components) {
      const name = component.name;
      if (name === undefined) continue;
      const first = this.componentByName.get(name.text);
      if (first?.name !== undefined) {
        this.error(
          "HL2001",
          name.span,
          `duplicate component "${name.text}": first declared at ${this.at(first.name.span)}`,
        );
        continue;
      }
      this.componentByName.set(name.text, component);
    }
  }

  private declarePlugins(): void {
    const byVersion = new Map<string, PluginDecl>();
    for (const plugin of this.model.plugins) {
      const name = plugin.name;
      if (name === undefined) continue;
      const versions = this.pluginsByName.get(name.text);
      if (versions === undefined) this.pluginsByName.set(name.text, [plugin]);
      else versions.push(plugin);
      const version = plugin.version;
      if (version === undefined) continue;
      if (!this.isValidVersion(version.value)) {
        this.error(
          "HL2011",
          version.span,
          `plugin "${name.text}" declares version "${version.value}", which is not a valid semantic version: write MAJOR.MINOR.PATCH, e.g. "1.0.0" or "1.2.0-rc.1"`,
        );
      }
      const key = `${name.text}@${version.value}`;
      const first = byVersion.get(key);
      if (first?.version !== undefined) {
        this.error(
          "HL2004",
          version.span,
          `duplicate plugin version "${key}": first declared at ${this.at(first.version.span)}; declare each version of a plugin once`,
        );
        continue;
      }
      byVersion.set(key, plugin);
    }
  }

  private declareCompositions(): void {
    const byName = this.model.compositionByName;
    for (const composition of this.model.compositions) {
      const name = composition.name;
      if (name === undefined) continue;
      const first = byName.get(name.text);
      if (first?.name !== undefined) {
        this.error(
          "HL2002",
          name.span,
          `duplicate composition "${name.text}": first declared at ${this.at(first.name.span)}`,
        );
        continue;
      }
      byName.set(name.text, composition);
    }
  }

  // ---- references ---------------------------------------------------------------------------

  private checkComponentReference(reference: NameNode, where: string): void {
    if (this.componentByName.has(reference.text)) return;
    this.error(
      "HL2014",
      reference.span,
      `unknown component "${reference.text}" ${where}${suggest(reference.text, this.componentByName.keys())}; declare it with "component ${reference.text} { kind … }"`,
    );
  }

  private checkHost(host: NameNode): void {
    if (isHostId(host.text) || this.warnedHosts.has(host.text)) return;
    this.warnedHosts.add(host.text);
    this.warning(
      "HL3001",
      host.span,
      `host "${host.text}" is not one harnesslab knows (${HOST_IDS.join(", ")})${suggest(host.text, HOST_IDS)}; it resolves as advisory prompt guidance only`,
    );
  }

  // ---- components ---------------------------------------------------------------------------

  private checkComponent(component: ComponentDecl): void {
    const label = component.name === undefined ? "this component" : `"${component.name.text}"`;
    this.reportRepeats(component.inputs, (name, first) => {
      this.error(
        "HL2007",
        name.span,
        `duplicate input "${name.text}" in component ${label}: already listed at ${first.line}:${first.column}`,
      );
    });
    this.reportRepeats(component.outputs, (name, first) => {
      this.error(
        "HL2008",
        name.span,
        `duplicate output "${name.text}" in component ${label}: already listed at ${first.line}:${first.column}`,
      );
    });
    if (usesV02(component)) {
      this.model.v02 = true;
      const uri = this.files[component.keyword.file]?.uri ?? "?";
      const source = checkV02Clauses(component, uri, this.readSource, (code, span, message) =>
        this.error(code, span, message),
      );
      if (source !== undefined) this.model.sources.set(component, source);
    }
    const permissions = new Map<string, Span>();
    for (const permission of component.permissions) {
      const key = `${permission.domain} ${permission.access}`;
      const first = permissions.get(key);
      if (first === undefined) {
        permissions.set(key, permission.span);
        continue;
      }
      this.warning(
        "HL3002",
        permission.span,
        `permission "${key}" is already listed at ${first.line}:${first.column} in component ${label}`,
      );
    }
  }

  private reportRepeats(names: readonly NameNode[], report: (name: NameNode, first: Span) => void) {
    if (names.length < 2) return;
    const seen = new Map<string, Span>();
    for (const name of names) {
      const first = seen.get(name.text);
      if (first === undefined) seen.set(name.text, name.span);
      else report(name, first);
    }
  }

  // ---- bindings -----------------------------------------------------------------------------

  private checkBindings(): void {
    const byKey = new Map<string, Span>();
    for (const binding of this.model.bindings) {
      const component = binding.component;
      if (component !== undefined) this.checkComponentReference(component, "in a binding");
      for (const host of binding.hosts) {
        this.checkHost(host);
        if (component === undefined) continue;
        const key = `${component.text}\u0000${host.text}`;
        const first = byKey.get(key);
        if (first === undefined) {
          byKey.set(key, host.span);
          continue;
        }
        this.error(
          "HL2003",
          host.span,
          `duplicate binding for component "${component.text}" on host "${host.text}": first declared at ${this.at(first)}; a component has one binding per host`,
        );
      }
    }
  }

  // ---- plugins ------------------------------------------------------------------------------

  private checkPlugin(plugin: PluginDecl): void {
    const label = plugin.name === undefined ? "this plugin" : `plugin "${plugin.name.text}"`;
    for (const provided of plugin.provides) {
      this.checkComponentReference(provided, `in the provides list of ${label}`);
    }
    this.reportRepeats(plugin.provides, (name, first) => {
      this.error(
        "HL2009",
        name.span,
        `${label} provides component "${name.text}" twice (first at ${first.line}:${first.column})`,
      );
    });
  }

  // ---- compositions -------------------------------------------------------------------------

  private checkComposition(composition: CompositionDecl): void {
    const name = composition.name?.text ?? "";
    const label = `composition "${name}"`;
    if (composition.target !== undefined) this.checkHost(composition.target);

    const inherited = this.checkInheritance(composition);

    const includes = new Map<string, Span>();
    for (const include of composition.includes) {
      const plugin = include.plugin;
      if (!this.pluginsByName.has(plugin.text)) {
        this.error(
          "HL2015",
          plugin.span,
          `unknown plugin "${plugin.text}" in the include list of ${label}${suggest(plugin.text, this.pluginsByName.keys())}; declare it with "plugin ${plugin.text} { version "1.0.0" provides [ … ] }"`,
        );
      }
      if (!this.isValidRange(include.range.value)) {
        this.error(
          "HL2012",
          include.range.span,
          `include range "@${include.range.value}" of plugin "${plugin.text}" is not a valid semver range: write @ then an optional ~ or ^ and a version, e.g. @1, @^1.2, @~1.2.3 or @1.2.0`,
        );
      }
      const first = includes.get(plugin.text);
      if (first !== undefined) {
        this.error(
          "HL2010",
          plugin.span,
          `plugin "${plugin.text}" is already included at ${first.line}:${first.column} in ${label}; include each plugin once`,
        );
        continue;
      }
      const fromParent = inherited?.includes.get(plugin.text);
      if (fromParent !== undefined) {
        this.reportRedeclared(plugin.span, label, `includes plugin "${plugin.text}"`, fromParent);
      }
      includes.set(plugin.text, plugin.span);
    }

    const requirements = new Map<string, Span>();
    for (const requirement of composition.requirements) {
      const component = requirement.component;
      this.checkComponentReference(component, `in a requirement of ${label}`);
      const { preferred, minimum } = requirement;
      if (preferred !== undefined && minimum !== undefined) {
        if (compareStrength(preferred.value, minimum.value) < 0) {
          this.error(
            "HL2013",
            preferred.span,
            `preferred strength "${preferred.value}" is below the minimum "${minimum.value}" for component "${component.text}"; preferred must be at least the minimum`,
          );
        }
      }
      const first = requirements.get(component.text);
      if (first !== undefined) {
        this.error(
          "HL2005",
          component.span,
          `component "${component.text}" is already required at ${first.line}:${first.column} in ${label}; state each requirement once`,
        );
        continue;
      }
      const fromParent = inherited?.requirements.get(component.text);
      if (fromParent !== undefined) {
        this.reportRedeclared(component.span, label, `requires "${component.text}"`, fromParent);
      }
      requirements.set(component.text, component.span);
    }

    const settings = new Map<string, Span>();
    for (const setting of composition.settings) {
      const key = setting.key;
      const first = settings.get(key.text);
      if (first !== undefined) {
        this.error(
          "HL2006",
          key.span,
          `configuration key "${key.text}" is already set at ${first.line}:${first.column} in ${label}; set each key once`,
        );
        continue;
      }
      const fromParent = inherited?.settings.get(key.text);
      if (fromParent !== undefined) {
        this.reportRedeclared(key.span, label, `sets "${key.text}"`, fromParent);
      }
      settings.set(key.text, key.span);
    }
  }

  private reportRedeclared(
    span: Span,
    label: string,
    what: string,
    parent: { from: string; span: Span },
  ): void {
    this.error(
      "HL2018",
      span,
      `${label} ${what}, which it already inherits from "${parent.from}" (${this.at(parent.span)}); a child composition may only override the target and add new members`,
    );
  }

  /**
   * Checks `extends` and the presence of a target; returns what the composition inherits, by
   * member key, with the ancestor that declares it.
   */
  private checkInheritance(composition: CompositionDecl): InheritedMembers | undefined {
    const byName = this.model.compositionByName;
    const name = composition.name?.text ?? "";
    const { chain, cyclic, missing, tooDeep } = ancestorsOf(composition, byName);
    if (tooDeep) {
      // Reported once, on the first composition past the limit, not on every one below it.
      const parent = composition.parent ? byName.get(composition.parent.text) : undefined;
      if (parent !== undefined && !ancestorsOf(parent, byName).tooDeep && composition.parent)
        this.error(
          "HL2020",
          composition.parent.span,
          `composition "${name}" has more than ${MAX_EXTENDS_DEPTH} ancestors through "extends"; flatten the chain (a composition may extend at most ${MAX_EXTENDS_DEPTH} levels)`,
        );
      return undefined;
    }
    if (missing !== undefined) {
      this.error(
        "HL2016",
        missing.span,
        missing === composition.parent
          ? `composition "${name}" extends "${missing.text}", which is not declared${suggest(missing.text, byName.keys())}`
          : `composition "${name}" inherits from "${missing.text}" (through "${chain[chain.length - 1]?.name?.text ?? ""}"), which is not declared`,
      );
    }
    if (cyclic && composition.parent !== undefined) {
      // Only compositions on the cycle are reported; one that merely extends into it is not.
      const last = chain[chain.length - 1];
      const closesOnSelf =
        last?.parent !== undefined && byName.get(last.parent.text) === composition;
      if (closesOnSelf || chain.length === 0) {
        const names = [name, ...chain.map((decl) => decl.name?.text ?? ""), name];
        this.error(
          "HL2017",
          composition.parent.span,
          `composition "${name}" extends itself through ${names.join(" → ")}; remove one "extends" from the cycle`,
        );
      }
    }
    const flat = flattenComposition(composition, byName);
    if (
      flat.target === undefined &&
      composition.name !== undefined &&
      !cyclic &&
      missing === undefined
    ) {
      this.error(
        "HL2019",
        composition.name.span,
        composition.parent === undefined
          ? `composition "${name}" has no target: add "target <host>" with one of ${HOST_IDS.join(", ")}`
          : `composition "${name}" has no target and inherits none from "${composition.parent.text}": add "target <host>"`,
      );
    }
    if (chain.length === 0) return undefined;
    const inherited: InheritedMembers = {
      includes: new Map(),
      requirements: new Map(),
      settings: new Map(),
    };
    for (const ancestor of chain) {
      const from = ancestor.name?.text ?? "";
      for (const include of ancestor.includes) {
        if (!inherited.includes.has(include.plugin.text))
          inherited.includes.set(include.plugin.text, { from, span: include.plugin.span });
      }
      for (const requirement of ancestor.requirements) {
        if (!inherited.requirements.has(requirement.component.text))
          inherited.requirements.set(requirement.component.text, {
            from,
            span: requirement.component.span,
          });
      }
      for (const setting of ancestor.settings) {
        if (!inherited.settings.has(setting.key.text))
          inherited.settings.set(setting.key.text, { from, span: setting.key.span });
      }
    }
    return inherited;
  }
}

interface InheritedMembers {
  includes: Map<string, { from: string; span: Span }>;
  requirements: Map<string, { from: string; span: Span }>;
  settings: Map<string, { from: string; span: Span }>;
}

/** ` (did you mean "gate"?)` when a declared name is a likely typo of `name`, else "". */
function suggest(name: string, candidates: Iterable<string>): string {
  const limit = Math.max(1, Math.ceil(name.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    if (Math.abs(candidate.length - name.length) > limit) continue;
    const distance = editDistance(name, candidate, bestDistance);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best === undefined ? "" : ` (did you mean "${best}"?)`;
}

/** Damerau-style edit distance (adjacent transpositions count once), cut off above `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  let previous2: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, previous2[j - 2]! + 1);
      }
      current.push(value);
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > cap) return cap + 1;
    previous2 = previous;
    previous = current;
  }
  return previous[b.length]!;
}
