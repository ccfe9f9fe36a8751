import type { z } from "zod";
import {
  repoStateSchema,
  scoringResultSchema,
  scoringSpecSchema,
  submissionSchema,
} from "./contract.js";

/** JSON Schemas this stage publishes under `schemas/` (file stem → schema). */
export const jsonSchemas: Record<string, z.ZodType> = {
  "repo-state": repoStateSchema,
  "scoring-spec": scoringSpecSchema,
  submission: submissionSchema,
  "scoring-result": scoringResultSchema,
};
