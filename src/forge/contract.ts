// The forge's external formats: the line `harness forge serve` prints and the write log
// kept as trial evidence. One zod schema each, published under schemas/.
import { z } from "zod";

export const forgeInfoSchema = z
  .strictObject({
    url: z.string().describe("instance root on 127.0.0.1; the API is at url + /api/v1"),
    token: z.string().describe("authenticates as `user` (Authorization: token …)"),
    owner: z.string(),
    repo: z.string(),
    user: z.string(),
    cloneUrl: z
      .string()
      .optional()
      .describe("file:// URL of the bare git repository, when there is one"),
  })
  .describe("the line `harness forge serve` prints on stdout");

export const writeLogEntrySchema = z
  .strictObject({
    seq: z.int().positive().describe("1, 2, 3 … in the order the forge answered"),
    at: z.string().describe("when (forge clock, whole seconds, UTC)"),
    method: z.string(),
    path: z.string().describe("request path without the query string"),
    actor: z
      .string()
      .nullable()
      .describe("the authenticated login; null when anonymous or refused"),
    status: z.int().describe("the HTTP status the forge answered"),
    summary: z
      .record(z.string(), z.unknown())
      .describe("the request body, texts cut at 120 characters, the token blanked"),
  })
  .describe("one write the local forge accepted or refused");

export const writeLogSchema = z.array(writeLogEntrySchema).describe("the local forge's write log");

export type ForgeInfo = z.infer<typeof forgeInfoSchema>;
export type WriteLogEntry = z.infer<typeof writeLogEntrySchema>;
