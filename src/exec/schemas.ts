import type { z } from "zod";
import { permissionDecisionsSchema, runtimeReceiptSchema } from "./receipt.js";

/** JSON Schemas this stage publishes under `schemas/` (file stem → schema). */
export const jsonSchemas: Record<string, z.ZodType> = {
  "permission-decisions": permissionDecisionsSchema,
  "runtime-receipt": runtimeReceiptSchema,
};
