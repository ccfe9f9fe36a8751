import type { z } from "zod";
import { forgeInfoSchema, writeLogSchema } from "./contract.js";

/** JSON Schemas this stage publishes under `schemas/` (file stem → schema). */
export const jsonSchemas: Record<string, z.ZodType> = {
  "forge-info": forgeInfoSchema,
  "forge-write-log": writeLogSchema,
};
