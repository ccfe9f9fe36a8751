// Whether a real host can run here at all, checked before the first trial: its SDK is
// installed, it has credentials, and a configured endpoint answers. Without this, a missing
// package or key shows up only as every trial's infrastructure error, after the whole run.
import { connect } from "node:net";
import { CLAUDE_AGENT_SDK_PACKAGE } from "./claude-code/env.js";
import { locateCodexBinary } from "./codex/binary.js";
import { CODEX_SDK_PACKAGE } from "./codex/executor.js";
import { PI_PACKAGE } from "./pi/executor.js";
import { resolveQoderAuth } from "./qoder/auth.js";
import { QODER_CLI_PACKAGE, QODER_SDK_PACKAGE } from "./qoder/contract.js";
import { installedPackageDir } from "./sdk/common.js";
import type { HostId } from "./types.js";

/** One thing that stops a host from running, and what to do about it. */
export interface HostProblem {
  /** `sdk`, `credentials` or `endpoint`. */
  what: "sdk" | "credentials" | "endpoint";
  message: string;
}

interface HostRequirements {
  packages: string[];
  /** Install command for the packages (some need flags). */
  install: string;
  /** Variables of which one must be set; empty: checked another way. */
  credentials: string[];
  credentialHint: string;
  /** The variable that points the host at another endpoint. */
  endpointVariable?: string;
}

const REQUIREMENTS: Partial<Record<HostId, HostRequirements>> = {
  "claude-code": {
    packages: [CLAUDE_AGENT_SDK_PACKAGE],
    install: `npm install ${CLAUDE_AGENT_SDK_PACKAGE}`,
    credentials: [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "CLAUDE_CODE_OAUTH_TOKEN",
      "CLAUDE_CODE_USE_BEDROCK",
      "CLAUDE_CODE_USE_VERTEX",
    ],
    credentialHint:
      "set ANTHROPIC_API_KEY (a `claude login` is not used: every run has a fresh, isolated home)",
    endpointVariable: "ANTHROPIC_BASE_URL",
  },
  codex: {
    packages: [CODEX_SDK_PACKAGE],
    install: `npm install ${CODEX_SDK_PACKAGE}`,
    credentials: ["OPENAI_API_KEY", "CODEX_API_KEY"],
    credentialHint:
      "set OPENAI_API_KEY or CODEX_API_KEY (a `codex login` is not used: every run has a fresh, isolated CODEX_HOME)",
    endpointVariable: "OPENAI_BASE_URL",
  },
  qoder: {
    packages: [QODER_SDK_PACKAGE, QODER_CLI_PACKAGE],
    install: `QODER_SKIP_DOWNLOAD=1 npm install ${QODER_SDK_PACKAGE} ${QODER_CLI_PACKAGE}`,
    credentials: [],
    credentialHint: "",
  },
  pi: {
    packages: [PI_PACKAGE],
    install: `npm install ${PI_PACKAGE}`,
    credentials: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
    credentialHint: "set ANTHROPIC_API_KEY",
    endpointVariable: "ANTHROPIC_BASE_URL",
  },
};

/** Whether a TCP connection to the endpoint's host and port opens within `timeoutMs`. */
function reachable(url: URL, timeoutMs: number): Promise<string | null> {
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    // A bound on the wait, not a measurement: an endpoint that does not answer at all.
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.once("connect", () => done(null));
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
  });
}

/**
 * What keeps `host` from running with the environment `env`: a missing SDK package (naming the
 * install command), missing credentials (naming the variable to set), or an endpoint variable
 * whose server does not answer. Empty when the host can start. The scripted host needs nothing.
 */
export async function hostReadiness(
  host: HostId,
  env: NodeJS.ProcessEnv = process.env,
  options: { endpointTimeoutMs?: number } = {},
): Promise<HostProblem[]> {
  const requirements = REQUIREMENTS[host];
  if (requirements === undefined) return [];
  const problems: HostProblem[] = [];
  const missing = requirements.packages.filter((name) => installedPackageDir(name) === null);
  if (missing.length > 0)
    problems.push({
      what: "sdk",
      message: `the ${host} host needs ${missing.join(" and ")}, which ${missing.length === 1 ? "is" : "are"} not installed: run \`${requirements.install}\` next to harnesslab`,
    });
  else if (host === "codex") {
    const binary = locateCodexBinary();
    if (!binary.ok) problems.push({ what: "sdk", message: binary.error });
  }
  if (host === "qoder") {
    const auth = resolveQoderAuth(undefined, env);
    if (!auth.ok) problems.push({ what: "credentials", message: auth.error });
  } else if (!requirements.credentials.some((name) => env[name]?.trim())) {
    problems.push({
      what: "credentials",
      message: `the ${host} host has no credentials: ${requirements.credentialHint}`,
    });
  }
  const variable = requirements.endpointVariable;
  const endpoint = variable === undefined ? undefined : env[variable]?.trim();
  if (variable !== undefined && endpoint) {
    let url: URL | undefined;
    try {
      url = new URL(endpoint);
    } catch {
      problems.push({
        what: "endpoint",
        message: `${variable}=${endpoint} is not a URL; expected e.g. https://gateway.example/v1`,
      });
    }
    if (url !== undefined) {
      const problem = await reachable(url, options.endpointTimeoutMs ?? 5000);
      if (problem !== null)
        problems.push({
          what: "endpoint",
          message: `${variable}=${url.origin} cannot be reached (${problem}); start the endpoint or unset ${variable}`,
        });
    }
  }
  return problems;
}
