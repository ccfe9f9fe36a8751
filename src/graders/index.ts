export {
  type Grade,
  type GradeCheck,
  type GradeContext,
  type Grader,
  weightedScore,
} from "./types.js";
