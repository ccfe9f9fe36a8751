import type { z } from "zod";
import { verdictStatisticsSchema } from "./contract.js";

/** JSON Schemas this stage publishes under `schemas/` (file stem → schema). */
export const jsonSchemas: Record<string, z.ZodType> = {
  "verdict-statistics": verdictStatisticsSchema,
};
