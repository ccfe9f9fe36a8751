// A trial's note, in its artifact folder, of the temporary directory its workspace lives in.
// It is written before that directory exists and removed once the directory is gone, so a
// process killed at any point (SIGKILL, a second Ctrl-C) leaves a note wherever it left a
// directory, and `--resume` removes exactly those. The note sits under --out, which no agent
// can reach, but it is still checked strictly before anything is deleted.
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../shared/index.js";
import { type AbandonedTempRemoval, removeAbandonedTrialTemp } from "../workspace/index.js";

/** Hidden, so it never reads as one of a trial's artifacts; a finished trial never has one. */
export const WORKSPACE_MARKER = ".workspace-in-use.json";

const markerSchema = z.strictObject({ tempDir: z.string(), pid: z.int() });

export async function markWorkspace(artifactDir: string, tempDir: string): Promise<void> {
  await writeFileAtomic(
    join(artifactDir, WORKSPACE_MARKER),
    `${JSON.stringify({ tempDir, pid: process.pid }, null, 2)}\n`,
  );
}

export async function unmarkWorkspace(artifactDir: string): Promise<void> {
  await rm(join(artifactDir, WORKSPACE_MARKER), { force: true });
}

export interface AbandonedWorkspace {
  /** The directory the note named (or the note's raw text when it was unreadable). */
  tempDir: string;
  result: AbandonedTempRemoval | "unreadable";
}

/**
 * Removes the temporary directory a dead run's trial left, when its note names one that is
 * safe to delete (see `removeAbandonedTrialTemp`), then the note itself. Undefined when the
 * folder holds no note.
 */
export async function removeAbandonedWorkspace(
  artifactDir: string,
  tempParent: string,
): Promise<AbandonedWorkspace | undefined> {
  let text: string;
  try {
    text = await readFile(join(artifactDir, WORKSPACE_MARKER), "utf8");
  } catch {
    return undefined;
  }
  let parsed: z.infer<typeof markerSchema> | undefined;
  try {
    const result = markerSchema.safeParse(JSON.parse(text));
    parsed = result.success ? result.data : undefined;
  } catch {
    parsed = undefined;
  }
  const outcome: AbandonedWorkspace =
    parsed === undefined
      ? { tempDir: text.slice(0, 200), result: "unreadable" }
      : {
          tempDir: parsed.tempDir,
          result: await removeAbandonedTrialTemp(parsed.tempDir, tempParent),
        };
  await unmarkWorkspace(artifactDir);
  return outcome;
}
