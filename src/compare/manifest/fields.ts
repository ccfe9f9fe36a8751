// Field schemas shared by every manifest version. Each carries the message a person
// sees when the field is wrong, and what the published JSON Schema should say.
import { z } from "zod";
import { isPlainArgv } from "../../policy/index.js";
import { CODING_TOOLS } from "../experiment.js";
import {
  normalizeChangeSurfacePath,
  PORTABLE_RELATIVE_PATH_PATTERN,
  portablePathProblem,
} from "./paths.js";

/** Tools a bounded coding run must expose: reading, editing, writing and validating. */
export const REQUIRED_TOOLS = ["Read", "Edit", "Write", "Bash"] as const;
/** Tools that reach the network; a run with `network: "deny"` must disallow them. */
export const NETWORK_TOOLS = ["WebFetch", "WebSearch"] as const;

const MAX_TIMEOUT_MS = 1_800_000;
const MIN_TIMEOUT_MS = 1_000;

export function integerFrom(min: number, max: number) {
  const message = `expected an integer from ${min} to ${max}`;
  return z.int({ error: message }).min(min, message).max(max, message);
}

export function portablePath(description: string) {
  return z
    .string({ error: "expected a path (string) relative to the manifest's directory" })
    .superRefine((value, ctx) => {
      const problem = portablePathProblem(value);
      if (problem !== undefined) ctx.addIssue({ code: "custom", message: problem });
    })
    .meta({ description, pattern: PORTABLE_RELATIVE_PATH_PATTERN });
}

/** An expected file: a portable path inside the repository, never `.git`. */
const changeSurfacePath = z
  .string({ error: "expected a file path (string) relative to the repository root" })
  .superRefine((value, ctx) => {
    const normalized = normalizeChangeSurfacePath(value);
    if (!normalized.ok) ctx.addIssue({ code: "custom", message: normalized.problem });
  })
  .meta({
    description: "A file the agent may change, relative to the repository root ('/' separators).",
    pattern: PORTABLE_RELATIVE_PATH_PATTERN,
  });

export function expectedFiles(min: number, max: number) {
  const message = `expected a list of ${min} to ${max} unique file paths`;
  return z.array(changeSurfacePath, { error: message }).min(min, message).max(max, message).meta({
    description:
      "The allowed change surface: the files the agent may change (unique, relative to the repository root).",
    uniqueItems: true,
  });
}

/** Composition ids follow the `.harness` identifier rule (docs/language.md). */
export const compositionId = z
  .string({ error: "expected a composition id (string)" })
  .regex(
    /^[_a-zA-Z][\w-]*$/,
    "expected a composition id: a letter or _, then letters, digits, _ or -",
  )
  .max(128, "expected at most 128 characters");

export const kebabId = (what: string) =>
  z
    .string({ error: `expected ${what} (string)` })
    .regex(
      /^[a-z0-9]+(?:-[a-z0-9]+)*$/,
      `expected ${what} in kebab-case: lowercase letters and digits separated by single "-"`,
    )
    .max(64, "expected at most 64 characters");

export const modelName = z
  .string({ error: "expected a model name (string)" })
  .min(1, "expected a non-empty model name")
  .max(200, "expected at most 200 characters")
  .regex(/^[^\u0000-\u001f\u007f]*$/, "must not contain control characters");

export const toolsList = z
  .array(
    z.enum(CODING_TOOLS, {
      error: `expected one of ${CODING_TOOLS.map((t) => JSON.stringify(t)).join(", ")}`,
    }),
    { error: "expected a list of tool names" },
  )
  .min(1, "expected 1 to 32 tool names")
  .max(32, "expected 1 to 32 tool names")
  .meta({
    description: `Tools the agent sees: a subset of ${CODING_TOOLS.join(", ")} that includes ${REQUIRED_TOOLS.join(", ")}.`,
    uniqueItems: true,
    allOf: REQUIRED_TOOLS.map((tool) => ({ contains: { const: tool } })),
  });

export const allowedToolsList = z
  .array(z.string(), { error: "expected an empty list" })
  .max(
    0,
    "must be empty: nothing is auto-approved, every tool call goes through the bounded permission callback",
  )
  .meta({ description: "Auto-approved tools. Must be empty." });

export const disallowedToolsList = z
  .array(
    z
      .string({ error: "expected a tool name (string)" })
      .min(1, "expected a non-empty tool name")
      .max(128, "expected at most 128 characters"),
    { error: "expected a list of tool names" },
  )
  .max(64, "expected at most 64 tool names")
  .meta({
    description: `Tools the host must never offer; includes ${NETWORK_TOOLS.join(" and ")} because the network is denied.`,
    uniqueItems: true,
    allOf: NETWORK_TOOLS.map((tool) => ({ contains: { const: tool } })),
  });

/**
 * Only `default`: the other modes either auto-approve (acceptEdits, bypassPermissions)
 * or forbid edits (plan), and both defeat the bounded permission callback.
 */
export const permissionMode = z.literal("default").meta({
  description: 'Host permission mode. Only "default": every call reaches the permission callback.',
});

export const maxTurns = integerFrom(2, 50).meta({ description: "Agent turn limit per trial." });

export const timeoutMs = integerFrom(MIN_TIMEOUT_MS, MAX_TIMEOUT_MS).meta({
  description: "Wall-clock limit of one trial's agent run, in milliseconds.",
});

export const networkDeny = z.literal("deny").meta({
  description: 'Network access of the agent. Only "deny".',
});

export const seed = integerFrom(0, 4_294_967_295).meta({
  description: "uint32 seed of the trial-order shuffle (mulberry32 + Fisher–Yates).",
});

/** What the Bash policy (`isPlainArgv`) accepts in a word, in words, for the error message. */
const PLAIN_WORD_CHARACTERS = "letters, digits and _ . / : = @ % + , -";

export const validationCommands = z
  .array(
    z
      .array(
        z
          .string({ error: "expected an argument (string)" })
          .min(1, "expected a non-empty argument")
          .max(1000, "expected at most 1000 characters")
          // The policy built from this list refuses anything else when the run starts, so the
          // loader applies the very same rule now instead of letting a valid-looking run crash.
          .superRefine((value, ctx) => {
            if (value !== "" && !isPlainArgv([value]))
              ctx.addIssue({
                code: "custom",
                message: `${JSON.stringify(value)} contains characters the Bash policy cannot allow (only ${PLAIN_WORD_CHARACTERS}): each command is an argv list matched word for word, never through a shell`,
              });
          }),
        { error: 'expected a command as an argv list, e.g. ["npm", "test"]' },
      )
      .min(1, 'expected a command as a non-empty argv list, e.g. ["npm", "test"]')
      .max(64, "expected at most 64 arguments"),
    { error: 'expected a list of argv lists, e.g. [["npm", "test"], ["node", "--test"]]' },
  )
  .max(64, "expected at most 64 commands")
  .meta({
    description:
      "The only Bash commands the agent may run, each an argv list matched exactly (no shell).",
    uniqueItems: true,
  });
