import { InvalidInputError } from "../shared/index.js";

/** Input problems found before any trial ran (bad --out, unresolvable composition, bad contract, a resume of other inputs). */
export class ExperimentInputError extends InvalidInputError {}
