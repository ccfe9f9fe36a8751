// The compare stage's public surface: experiment model, manifest loading and planning.
export * from "./experiment.js";
export * from "./manifest/index.js";
export { planTrials, trialArtifactDir, trialDirName } from "./plan.js";
export { mulberry32, shuffleInPlace } from "./prng.js";
