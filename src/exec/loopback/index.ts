export {
  type AnthropicLoopback,
  type AnthropicLoopbackOptions,
  type AnthropicLoopbackRequest,
  type AnthropicScriptBlock,
  type AnthropicScriptError,
  type AnthropicScriptTurn,
  type AnthropicScriptUsage,
  startAnthropicLoopback,
} from "./anthropic.js";
export * from "./responses.js";
