// Honest strengths: a host profile realizes a policy component as `enforced` only where its
// executor puts every tool call to the trial's policy, and the executors really do so. Each
// resolution below is checked against a run of that host's executor (fake SDKs for the real
// hosts, the scripted agents of the example for the scripted host).
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SDKMessage as ClaudeMessage } from "@anthropic-ai/claude-agent-sdk";
import type { SDKMessage as QoderMessage } from "@qoder-ai/qoder-agent-sdk";
import { afterEach, describe, expect, it } from "vitest";
import { ClaudeCodeExecutor } from "../../src/exec/claude-code/index.js";
import { type ExecutorRunInput, ScriptedExecutor } from "../../src/exec/index.js";
import { QoderExecutor } from "../../src/exec/qoder/index.js";
import {
  buildRunPreamble,
  HOST_IDS,
  hostProfile,
  type MaterializationRequest,
  PERMISSION_CALLBACK_MECHANISM,
  profileForHost,
} from "../../src/hosts/index.js";
import type { ComponentContract, HarnessIrBundle, Permission } from "../../src/ir/index.js";
import { compileHarness } from "../../src/language/index.js";
import { createToolPolicy, type ToolPolicy } from "../../src/policy/index.js";
import { resolveComposition } from "../../src/resolver/index.js";
import { createUnsandboxed } from "../../src/sandbox/index.js";
import { createTrialWorkspace, type TrialWorkspace } from "../../src/workspace/index.js";
import * as qoderFakes from "../exec/qoder-sdk-fakes.js";
import * as claudeFakes from "../support/anthropic-sdk-fakes.js";
import { testSandbox } from "../support/sandbox.js";

const testSandboxInstance = await testSandbox();

const EXAMPLE = fileURLToPath(new URL("../../examples/fix-the-bug/", import.meta.url));
const SOURCE = "src/index.js";
const TEST = "test/duration.test.js";

function policyComponent(
  permissions: Permission[],
  kind: ComponentContract["componentKind"] = "policy",
) {
  const component: ComponentContract = {
    irVersion: "0.1.0",
    kind: "component-contract",
    id: "scope",
    componentKind: kind,
    inputs: [],
    outputs: [],
    permissions,
  };
  return component;
}

function request(
  host: string,
  component: ComponentContract,
  mechanism = PERMISSION_CALLBACK_MECHANISM,
  strength: "advisory" | "wired" | "enforced" = "enforced",
): MaterializationRequest {
  return { host, componentId: component.id, component, binding: { mechanism, strength } };
}

const FIX_CODE_NOT_TESTS: Permission[] = [
  { domain: "workspace", access: "write" },
  { domain: "network", access: "deny" },
];

describe("which hosts enforce a policy component through the permission callback", () => {
  it("claude-code, qoder and scripted enforce it; codex, pi and unknown hosts realize it as advisory prompt guidance", () => {
    const component = policyComponent(FIX_CODE_NOT_TESTS);
    const realized = Object.fromEntries(
      [...HOST_IDS, "qoder-cli"].map((host) => [
        host,
        profileForHost(host).realize(request(host, component)),
      ]),
    );
    expect(realized).toEqual({
      "claude-code": { strength: "enforced", mechanism: "permission-callback" },
      qoder: { strength: "enforced", mechanism: "permission-callback" },
      scripted: { strength: "enforced", mechanism: "permission-callback" },
      codex: { strength: "advisory", mechanism: "prompt-preamble" },
      pi: { strength: "advisory", mechanism: "prompt-preamble" },
      "qoder-cli": { strength: "advisory", mechanism: "prompt-preamble" },
    });
  });

  it("never realizes more than the binding declares", () => {
    const component = policyComponent(FIX_CODE_NOT_TESTS);
    expect(hostProfile("qoder").realize(request("qoder", component, undefined, "wired"))).toEqual({
      strength: "wired",
      mechanism: "permission-callback",
    });
  });

  it("keys enforcement on the declared mechanism: a prompt-preamble or sdk-policy binding stays advisory", () => {
    const component = policyComponent(FIX_CODE_NOT_TESTS);
    for (const mechanism of ["prompt-preamble", "sdk-policy", "sdk-tool"]) {
      expect(
        hostProfile("claude-code").realize(request("claude-code", component, mechanism)),
      ).toEqual({
        strength: "advisory",
        mechanism: "prompt-preamble",
      });
    }
  });

  it("enforces only policy components whose permissions the tool policy can honour", () => {
    const cases: [string, ComponentContract, "enforced" | "advisory"][] = [
      ["network deny alone", policyComponent([{ domain: "network", access: "deny" }]), "enforced"],
      [
        "workspace write alone",
        policyComponent([{ domain: "workspace", access: "write" }]),
        "enforced",
      ],
      [
        "read, write, processes, no network",
        policyComponent([
          { domain: "workspace", access: "read" },
          { domain: "workspace", access: "write" },
          { domain: "process", access: "allow" },
          { domain: "network", access: "deny" },
        ]),
        "enforced",
      ],
      // The policy lets the agent write the task's files, so a read-only rule is not enforced.
      [
        "read-only workspace",
        policyComponent([
          { domain: "workspace", access: "read" },
          { domain: "network", access: "deny" },
        ]),
        "advisory",
      ],
      // Reads inside the trial are allowed, so "no workspace access" is not enforced.
      [
        "workspace deny",
        policyComponent([
          { domain: "workspace", access: "deny" },
          { domain: "network", access: "deny" },
        ]),
        "advisory",
      ],
      // Validation commands run, so "no processes" is not enforced.
      [
        "process deny",
        policyComponent([
          { domain: "process", access: "deny" },
          { domain: "network", access: "deny" },
        ]),
        "advisory",
      ],
      // The harness does not bound the model at all.
      [
        "any model permission",
        policyComponent([...FIX_CODE_NOT_TESTS, { domain: "model", access: "allow" }]),
        "advisory",
      ],
      ["nothing restricted", policyComponent([{ domain: "process", access: "allow" }]), "advisory"],
      ["no permissions", policyComponent([]), "advisory"],
      ["a workflow, not a policy", policyComponent(FIX_CODE_NOT_TESTS, "workflow"), "advisory"],
    ];
    for (const [name, component, expected] of cases) {
      const { strength } = hostProfile("claude-code").realize(request("claude-code", component));
      expect({ name, strength }).toEqual({ name, strength: expected });
    }
  });
});

const workspaces: TrialWorkspace[] = [];
afterEach(async () => {
  await Promise.all(workspaces.splice(0).map((w) => w.cleanup()));
});

async function exampleTrial(): Promise<{
  workspace: TrialWorkspace;
  policy: ToolPolicy;
  tools: string[];
}> {
  const workspace = await createTrialWorkspace(join(EXAMPLE, "fixture"));
  workspaces.push(workspace);
  const tools = ["Read", "Glob", "Grep", "Edit", "Write", "Bash"];
  const policy = createToolPolicy({
    trialRoot: workspace.root,
    allowedWrites: [SOURCE],
    allowedCommands: [["npm", "test"]],
    tools,
  });
  return { workspace, policy, tools };
}

function runInput(
  workspace: TrialWorkspace,
  policy: ToolPolicy,
  tools: string[],
  extra: Partial<ExecutorRunInput> = {},
): ExecutorRunInput {
  return {
    prompt: "Fix the bug.",
    preamble: "",
    cwd: workspace.root,
    policy,
    timeoutMs: 20_000,
    scratchDir: workspace.scratchDir,
    sandbox: testSandboxInstance,
    runtime: {
      tools,
      allowedTools: [],
      disallowedTools: ["WebFetch", "WebSearch"],
      permissionMode: "default",
      maxTurns: 10,
    },
    trialIndex: 1,
    variant: "verified",
    task: "fix-the-bug",
    ...extra,
  };
}

const exampleSource = () => readFile(join(EXAMPLE, "fix-the-bug.harness"), "utf8");

/** What the tool calls an agent makes against fix-code-not-tests look like, for every host. */
const TEST_EDIT = { file_path: TEST, old_string: "assert", new_string: "// assert" };
const CURL = { command: "curl -sS https://example.com/" };

describe("the resolution report matches what the executor did", () => {
  it("claude-code: verified-claude enforces fix-code-not-tests, and the executor's PreToolUse hook denies the test edit and the network call", async () => {
    const bundle = compileHarness(await exampleSource()).bundle as HarnessIrBundle;
    const { report, revision } = resolveComposition(bundle, "verified-claude");
    expect(report.realizations.find((r) => r.componentId === "fix-code-not-tests")).toEqual({
      componentId: "fix-code-not-tests",
      requestedMinimum: "advisory",
      requestedPreferred: "enforced",
      declaredStrength: "enforced",
      declaredMechanism: "permission-callback",
      realized: "enforced",
      materializedMechanism: "permission-callback",
      action: "satisfied",
    });
    const preamble = buildRunPreamble(revision!, bundle);
    expect(preamble).toContain(
      "The harness enforces these rules (tool calls that break them are denied):\n- [fix-code-not-tests]",
    );
    expect(preamble).not.toContain("Warning: [fix-code-not-tests]");

    const { workspace, policy, tools } = await exampleTrial();
    const fake = claudeFakes.fakeClaudeSdk(async function* ({
      options,
    }): AsyncGenerator<ClaudeMessage, void> {
      yield claudeFakes.initMessage();
      await claudeFakes.simulateToolCall(options, { name: "Edit", input: TEST_EDIT, id: "tu-1" });
      await claudeFakes.simulateToolCall(options, { name: "Bash", input: CURL, id: "tu-2" });
      yield claudeFakes.resultSuccess();
    });
    const executor = new ClaudeCodeExecutor({
      sdk: fake.sdk,
      env: { PATH: "/usr/bin", ANTHROPIC_API_KEY: "sk-ant-test-0000000000" },
    });
    const receipt = await executor.run(runInput(workspace, policy, tools));
    expect(receipt.permissionDenials.map((d) => [d.tool, d.rule])).toEqual([
      ["Edit", "write-not-allowed"],
      ["Bash", "command-not-allowed"],
    ]);
    expect(await readFile(join(workspace.root, TEST), "utf8")).toBe(
      await readFile(join(EXAMPLE, "fixture", TEST), "utf8"),
    );
  });

  it("qoder: a permission-callback binding enforces fix-code-not-tests, and the qoder executor's callback denies the same calls", async () => {
    const extension = `binding fix-code-not-tests for qoder { mechanism permission-callback strength enforced }
binding coding-loop for qoder { mechanism prompt-preamble strength advisory }
binding verify-before-finishing for qoder { mechanism prompt-preamble strength advisory }
composition verified-qoder extends verified { target qoder }`;
    const bundle = compileHarness([
      { uri: "fix-the-bug.harness", text: await exampleSource() },
      { uri: "qoder.harness", text: extension },
    ]).bundle as HarnessIrBundle;
    const { report } = resolveComposition(bundle, "verified-qoder");
    expect(report.realizations.find((r) => r.componentId === "fix-code-not-tests")).toMatchObject({
      realized: "enforced",
      materializedMechanism: "permission-callback",
      action: "satisfied",
    });

    const { workspace, policy, tools } = await exampleTrial();
    const cli = join(workspace.scratchDir, "qodercli.js");
    await writeFile(cli, "// stands in for the Qoder CLI entry\n");
    const fake = qoderFakes.fakeQoderSdk(async function* ({
      options,
    }): AsyncGenerator<QoderMessage, void> {
      yield qoderFakes.initMessage();
      const edit = await qoderFakes.simulateToolCall(options, "tu-1", "Edit", TEST_EDIT);
      const curl = await qoderFakes.simulateToolCall(options, "tu-2", "Bash", CURL, {
        skipHook: true,
      });
      expect([edit.ran, curl.ran]).toEqual([false, false]);
      yield qoderFakes.resultSuccess();
    });
    const receipt = await new QoderExecutor({
      sdk: fake.sdk,
      env: { PATH: "/usr/bin", QODER_PERSONAL_ACCESS_TOKEN: "pat-test-000000000" },
      pathToQoderCLIExecutable: cli,
      // Qoder runs only without the OS sandbox (it refuses one; see QODER_NOT_CONTAINABLE).
    }).run(runInput(workspace, policy, tools, { sandbox: createUnsandboxed() }));
    expect(receipt.permissionDenials.map((d) => [d.tool, d.rule])).toEqual([
      ["Edit", "write-not-allowed"],
      ["Bash", "command-not-allowed"],
    ]);
  });

  it("scripted: the example's verified composition enforces the policy, and the run's decisions show its rule applied", async () => {
    const bundle = compileHarness(await exampleSource()).bundle as HarnessIrBundle;
    const { report } = resolveComposition(bundle, "verified");
    expect(report.realizations.find((r) => r.componentId === "fix-code-not-tests")).toMatchObject({
      declaredStrength: "enforced",
      declaredMechanism: "permission-callback",
      realized: "enforced",
      action: "satisfied",
    });

    // Trial index 2 is the run in which the example's baseline agent tries to rewrite the test.
    const { workspace, policy, tools } = await exampleTrial();
    const receipt = await new ScriptedExecutor().run(
      runInput(workspace, policy, tools, {
        agent: join(EXAMPLE, "agents", "baseline.mjs"),
        trialIndex: 2,
      }),
    );
    expect(receipt.permissionDenials).toEqual([
      expect.objectContaining({ tool: "Write", rule: "write-not-allowed" }),
    ]);
    expect(receipt.finalText).toContain("Tried to update the outdated test");
  });

  it("scripted: bound as prompt guidance the same component is only advisory (degraded), while the scripted tools deny what the policy forbids either way", async () => {
    const source = (await exampleSource()).replace(
      "binding fix-code-not-tests for scripted { mechanism permission-callback strength enforced }",
      "binding fix-code-not-tests for scripted { mechanism prompt-preamble strength advisory }",
    );
    expect(source).toContain("mechanism prompt-preamble strength advisory }");
    const bundle = compileHarness(source).bundle as HarnessIrBundle;
    const { report } = resolveComposition(bundle, "verified");
    expect(report.realizations.find((r) => r.componentId === "fix-code-not-tests")).toMatchObject({
      realized: "advisory",
      action: "degraded",
    });

    const { workspace, policy, tools } = await exampleTrial();
    const agent = join(workspace.scratchDir, "tries-everything.mjs");
    await writeFile(
      agent,
      `export default async ({ tools }) => {
  const edit = await tools.call("Edit", ${JSON.stringify(TEST_EDIT)});
  const curl = await tools.bash(${JSON.stringify(CURL.command)});
  return [edit.ok, curl.ok].join(",");
};\n`,
    );
    const receipt = await new ScriptedExecutor().run(runInput(workspace, policy, tools, { agent }));
    expect(receipt.finalText).toBe("false,false");
    expect(receipt.permissionDenials.map((d) => [d.tool, d.rule])).toEqual([
      ["Edit", "write-not-allowed"],
      ["Bash", "command-not-allowed"],
    ]);
    await rm(agent);
  });
});
