export {
  type AnthropicLoopback,
  type AnthropicLoopbackOptions,
  type AnthropicScriptTurn,
  startAnthropicLoopback,
} from "./anthropic.js";
export * from "./responses.js";
