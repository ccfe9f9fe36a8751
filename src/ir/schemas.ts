import type { z } from "zod";
import {
  componentContractSchema,
  compositionSpecSchema,
  harnessIrBundleSchema,
  harnessRevisionSchema,
  pluginManifestSchema,
  resolutionReportSchema,
  targetBindingSchema,
} from "./documents.js";

/** JSON Schemas this stage publishes under `schemas/` (file stem → schema): one per IR document kind. */
export const jsonSchemas: Record<string, z.ZodType> = {
  "ir-component-contract": componentContractSchema,
  "ir-target-binding": targetBindingSchema,
  "ir-plugin-manifest": pluginManifestSchema,
  "ir-composition-spec": compositionSpecSchema,
  "ir-bundle": harnessIrBundleSchema,
  "ir-revision": harnessRevisionSchema,
  "ir-resolution-report": resolutionReportSchema,
};
