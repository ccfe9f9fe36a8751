import type { z } from "zod";
import {
  componentContractSchema,
  compositionSpecSchema,
  harnessIrBundleSchema,
  harnessRevisionSchema,
  irSchemasV2,
  pluginManifestSchema,
  resolutionReportSchema,
  targetBindingSchema,
} from "./documents.js";

/**
 * JSON Schemas this stage publishes under `schemas/` (file stem → schema): one per IR document
 * kind and version (`ir-…` for IR 0.1.0, `ir-0.2-…` for IR 0.2.0).
 */
export const jsonSchemas: Record<string, z.ZodType> = {
  "ir-component-contract": componentContractSchema,
  "ir-target-binding": targetBindingSchema,
  "ir-plugin-manifest": pluginManifestSchema,
  "ir-composition-spec": compositionSpecSchema,
  "ir-bundle": harnessIrBundleSchema,
  "ir-revision": harnessRevisionSchema,
  "ir-resolution-report": resolutionReportSchema,
  "ir-0.2-component-contract": irSchemasV2.componentContract,
  "ir-0.2-target-binding": irSchemasV2.targetBinding,
  "ir-0.2-plugin-manifest": irSchemasV2.pluginManifest,
  "ir-0.2-composition-spec": irSchemasV2.compositionSpec,
  "ir-0.2-bundle": irSchemasV2.bundle,
  "ir-0.2-revision": irSchemasV2.revision,
  "ir-0.2-resolution-report": irSchemasV2.resolutionReport,
};
