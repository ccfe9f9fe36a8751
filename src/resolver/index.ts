// The resolver stage's public surface: IR bundle + composition (+ host) → revision + report.
export { mergePermissions } from "./permissions.js";
export { type ResolveOptions, type ResolveResult, resolveComposition } from "./resolve.js";
export { selectPluginVersion } from "./select.js";
