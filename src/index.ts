// The package entry: re-exports each stage's stable surface.
export * from "./scoring/index.js";
export { type InputProblem, InvalidInputError } from "./shared/index.js";
