import { z } from "zod";
import { readmePackageContractSchema } from "./readme/contract.js";
import type { Grade } from "./types.js";

export const gradeCheckSchema = z
  .strictObject({
    id: z.string().min(1),
    weight: z.number().min(0),
    passed: z.boolean(),
    detail: z.string().describe("What was found, for a person."),
    evidence: z
      .unknown()
      .optional()
      .describe(
        "Machine-readable evidence: output tails, failing links, matched claims, per-file scope.",
      ),
  })
  .describe("One deterministic check inside a grade.");

/** The document one grader produces; `validation.json` keeps one per grader. */
export const gradeSchema = z
  .strictObject({
    grader: z.string().min(1),
    checks: z.array(gradeCheckSchema),
    score: z.number().min(0).max(100).describe("Weighted percentage of passed checks."),
    passed: z.boolean().describe("True only when every check passed."),
    summary: z
      .string()
      .optional()
      .describe("For a failed grade: the grader's one-line account of why (forge differences)."),
  })
  .describe("A grader's result.");

// Keeps the schema and the Grade interface from drifting apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const gradeMatchesInterface: Same<z.output<typeof gradeSchema>, Grade> = true;
void gradeMatchesInterface;

/** JSON Schemas this stage publishes under `schemas/` (file stem → schema). */
export const jsonSchemas: Record<string, z.ZodType> = {
  grade: gradeSchema,
  "readme-package-contract": readmePackageContractSchema,
};
