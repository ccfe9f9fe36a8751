// The artifacts stage: the shapes of the files a run writes under --out (docs/artifacts.md), a
// leaf that the stages writing them (compare) and reading them (report) both import, so data
// flows one way between those two.
export * from "./contract.js";
