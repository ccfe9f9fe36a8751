import type { z } from "zod";
import {
  frozenTasksSchema,
  runManifestSchema,
  setupDocumentSchema,
  toolUseDocumentSchema,
  trialMetricsSchema,
  validationDocumentSchema,
  verdictDocumentSchema,
} from "./contract.js";

/** JSON Schemas this stage publishes under `schemas/` (file stem → schema). */
export const jsonSchemas: Record<string, z.ZodType> = {
  "run-manifest": runManifestSchema,
  "frozen-task": frozenTasksSchema,
  verdict: verdictDocumentSchema,
  "trial-metrics": trialMetricsSchema,
  validation: validationDocumentSchema,
  "tool-use": toolUseDocumentSchema,
  setup: setupDocumentSchema,
};
