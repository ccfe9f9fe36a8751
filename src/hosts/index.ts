// The hosts stage's public surface: what each host can materialize, and the run preamble.
export { buildRunPreamble } from "./preamble.js";
export {
  hostProfile,
  isHostId,
  PROMPT_PREAMBLE_MECHANISM,
  profileForHost,
  realizeWithCapabilities,
} from "./profiles.js";
export {
  type DeclaredBinding,
  HOST_IDS,
  type HostId,
  type HostProfile,
  type Materialization,
  type MaterializationRequest,
  type MechanismCapability,
} from "./types.js";
