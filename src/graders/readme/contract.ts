import { z } from "zod";
import {
  InvalidInputError,
  readJsonFile,
  type Validated,
  validateWith,
} from "../../shared/index.js";

const text = (what: string) => z.string().regex(/\S/, `${what} must be a non-blank string`);

function noDuplicates(
  values: readonly string[],
  context: z.RefinementCtx,
  normalize = (v: string) => v,
) {
  const seen = new Map<string, number>();
  values.forEach((value, index) => {
    const key = normalize(value);
    const first = seen.get(key);
    if (first === undefined) seen.set(key, index);
    else
      context.addIssue({
        code: "custom",
        path: [index],
        message: `duplicate of entry [${first}] (${JSON.stringify(value)})`,
      });
  });
}

const uniqueList = (what: string, normalize?: (v: string) => string) =>
  z.array(text(what)).superRefine((values, context) => noDuplicates(values, context, normalize));

/**
 * The `readme-package-v1` contract (docs/graders.md). Every field is required and unknown
 * fields are rejected, so a typo cannot silently switch a check off.
 */
export const readmePackageContractSchema = z
  .strictObject({
    requiredHeadings: uniqueList("a heading", (v) => v.trim().toLowerCase()).describe(
      "Headings the README must contain (any level; compared case-insensitively).",
    ),
    publicApi: uniqueList("an export name").describe(
      "Names the package entry must export and the README must show in code.",
    ),
    requiredCodeTokens: uniqueList("a code token").describe(
      "Tokens that must each appear in the README's code (fenced blocks or inline code).",
    ),
    requiredAnyCodeTokens: z
      .array(uniqueList("a code token").min(1, "a group needs at least one token"))
      .describe("Groups of tokens; at least one token of every group must appear in code."),
    forbiddenClaims: uniqueList("a claim", (v) => v.toLowerCase()).describe(
      "Phrases that must not appear anywhere in the README (case-insensitive).",
    ),
    exampleLanguages: uniqueList("a language", (v) => v.toLowerCase())
      .min(1, "at least one example language is needed for the Quick Start")
      .describe("Fenced-code languages whose Quick Start blocks are executed."),
    forbidRemoteLinks: z
      .boolean()
      .describe("When true, any http(s) link or bare URL outside code fails the links check."),
  })
  .describe("Contract of the readme-package-v1 grader.");

export type ReadmePackageContract = z.output<typeof readmePackageContractSchema>;

/** Validates an already-parsed contract document; problems carry JSON paths. */
export function validateReadmeContract(input: unknown): Validated<ReadmePackageContract> {
  return validateWith(readmePackageContractSchema, input);
}

/**
 * Reads and validates a contract file. Throws InvalidInputError naming the file and
 * every problem by JSON path (e.g. `requiredAnyCodeTokens[0][1]`).
 */
export async function loadReadmeContract(path: string): Promise<ReadmePackageContract> {
  const document = await readJsonFile(path);
  const result = validateReadmeContract(document);
  if (!result.ok)
    throw new InvalidInputError(path, result.problems, "invalid readme-package-v1 contract");
  return result.value;
}
