import type { z } from "zod";
import { harnessCompareV1Schema } from "./manifest/schema-v1.js";
import { harnessCompareV2Schema } from "./manifest/schema-v2.js";

/** JSON Schemas this stage publishes under `schemas/` (file stem → schema). */
export const jsonSchemas: Record<string, z.ZodType> = {
  "harness-compare-v1": harnessCompareV1Schema,
  "harness-compare-v2": harnessCompareV2Schema,
};
