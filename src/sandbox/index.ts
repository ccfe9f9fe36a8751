// Containment of every process that may run agent-influenced code: validation commands, graders,
// regrade, and the real hosts' own processes. See docs/policy.md for the threat model.
export { SANDBOX_HOME, SANDBOX_TMP } from "./bwrap-args.js";
export {
  type CommandRelay,
  type RelayedCommand,
  type RelayedResult,
  SANDBOX_COMMAND_SOCKET,
  startCommandRelay,
} from "./command-relay.js";
export {
  ENDPOINT_FORWARDER_SOURCE,
  type EndpointProxy,
  type EndpointProxyOptions,
  type GrantedEndpoint,
  type ProxiedRequest,
  SANDBOX_ENDPOINT_PORT,
  SANDBOX_ENDPOINT_SOCKET,
  SANDBOX_FORGE_PORT,
  SANDBOX_FORGE_SOCKET,
  startEndpointProxy,
  withGrantedEndpoints,
} from "./endpoint.js";
export { BWRAP_VARIABLE, detectSandbox } from "./host.js";
export {
  type CreateSandboxOptions,
  commandEnvironment,
  createBwrapSandbox,
  createUnsandboxed,
  limitsHit,
} from "./run.js";
export {
  type CommandSandbox,
  DEFAULT_SANDBOX_LIMITS,
  type SandboxedResult,
  type SandboxKind,
  type SandboxLimitHit,
  type SandboxLimitKind,
  type SandboxLimits,
  type SandboxRunOptions,
  type SandboxSupport,
  type WrappedCommand,
} from "./types.js";
