// Containment of every process that may run agent-influenced code: validation commands, graders,
// regrade, and the real hosts' own processes. See docs/policy.md for the threat model.

export {
  type CommandRelay,
  type RelayedCommand,
  type RelayedResult,
  SANDBOX_COMMAND_SOCKET,
  startCommandRelay,
} from "./command-relay.js";
export {
  type EndpointProxy,
  forgeApiHeader,
  type GrantedEndpoint,
  SANDBOX_ENDPOINT_PORT,
  SANDBOX_ENDPOINT_SOCKET,
  SANDBOX_FORGE_PORT,
  SANDBOX_FORGE_SOCKET,
  SANDBOX_SETUP_MCP_FIRST_PORT,
  SANDBOX_SETUP_MCP_SOCKET_DIR,
  startEndpointProxy,
  withGrantedEndpoints,
} from "./endpoint.js";
export { detectSandbox } from "./host.js";
export {
  commandEnvironment,
  createBwrapSandbox,
  createUnsandboxed,
} from "./run.js";
export type {
  CommandSandbox,
  SandboxedResult,
  SandboxKind,
  SandboxLimitHit,
} from "./types.js";
