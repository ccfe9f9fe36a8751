// The hosts stage's public surface: what each host can materialize, and the run preamble.
export { buildRunPreamble } from "./preamble.js";
export { costEquivalentTokens, estimatedCostUsd, inputPricePerMillion } from "./prices.js";
export {
  hostProfile,
  isHostId,
  isSetupMechanism,
  PERMISSION_CALLBACK_MECHANISM,
  PROMPT_PREAMBLE_MECHANISM,
  profileForHost,
  realizeWithCapabilities,
  SETUP_MECHANISMS,
  type SetupMechanism,
} from "./profiles.js";
export {
  type DeclaredBinding,
  HOST_IDS,
  type HostId,
  type HostProfile,
  type Materialization,
  type MaterializationRequest,
} from "./types.js";
