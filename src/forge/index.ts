// Forges (docs/forges.md): the local Gitea-compatible forge and the capture adapters that
// read a repository's issue/pull-request state from Gitea or GitHub as a RepoState.

export {
  ForgeApi,
  ForgeApiError,
  type ForgeApiOptions,
} from "./api-client.js";
export {
  type CaptureOptions,
  type CaptureResult,
  captureRepoState,
  DEFAULT_TOKEN_ENV,
  type ForgeKind,
} from "./capture.js";
export { GITHUB_API_URL } from "./capture-github.js";

export {
  type ForgeInfo,
  forgeInfoSchema,
  type WriteLogEntry,
  writeLogEntrySchema,
  writeLogSchema,
} from "./contract.js";
export { forgeGatewayRule } from "./gateway.js";
export {
  createLiveRepository,
  LiveForgeError,
  type LiveForgeOptions,
  type LiveRepository,
} from "./live.js";
export {
  createForgeMcpEndpoint,
  createForgeMcpServer,
  FORGE_MCP_SERVER,
  FORGE_MCP_TOOLS,
  type ForgeMcpEndpoint,
  type ForgeMcpTarget,
  type ForgeMcpTool,
  forgeMcpToolNames,
} from "./mcp.js";
export {
  MCP_PATH,
  type ServedMcpEndpoint,
  serveMcpOnLoopback,
  serveMcpOnSocket,
} from "./mcp-http.js";
export { seedLogins, seedProblems } from "./seed.js";
export {
  DEFAULT_REPO,
  DEFAULT_USER,
  type ForgeOptions,
  type RunningForge,
  startForge,
} from "./server.js";
