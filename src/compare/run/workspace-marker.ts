// A trial's note, in its artifact folder, of the temporary directory a workspace for it lives
// in. It is written before that directory exists and removed once the directory is gone, so a
// process killed at any point (SIGKILL, a second Ctrl-C) leaves a note wherever it left a
// directory, and the next writer of --out (holding the lock, so no live workspace is touched)
// removes exactly those. A run and a regrade each note in a file of their own, so neither
// mistakes the other's note for its own. The note sits under --out, which no agent can reach,
// but it is still checked strictly before anything is deleted.
import { lstat, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../shared/index.js";
import { type AbandonedTempRemoval, removeAbandonedTrialTemp } from "../../workspace/index.js";

/** Who made the workspace: the trial's run (`compare run`) or a `compare regrade`. */
export type WorkspaceUser = "run" | "regrade";

/** Hidden, so it never reads as one of a trial's artifacts; a finished trial never has one. */
export const WORKSPACE_MARKER = ".workspace-in-use.json";
/** A regrade's note: a regrade re-uses finished trials' folders, which a run's note never names. */
export const REGRADE_WORKSPACE_MARKER = ".regrade-workspace-in-use.json";

const MARKER_FILES: Readonly<Record<WorkspaceUser, string>> = {
  run: WORKSPACE_MARKER,
  regrade: REGRADE_WORKSPACE_MARKER,
};

const markerSchema = z.strictObject({
  /** Absent in notes written before regrades made any. */
  kind: z.enum(["run", "regrade"]).optional(),
  tempDir: z.string(),
  pid: z.int(),
});

export async function markWorkspace(
  artifactDir: string,
  tempDir: string,
  kind: WorkspaceUser = "run",
): Promise<void> {
  await writeFileAtomic(
    join(artifactDir, MARKER_FILES[kind]),
    `${JSON.stringify({ kind, tempDir, pid: process.pid }, null, 2)}\n`,
  );
}

async function unmarkWorkspace(artifactDir: string, kind: WorkspaceUser = "run"): Promise<void> {
  await rm(join(artifactDir, MARKER_FILES[kind]), { force: true });
}

async function isGone(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/**
 * Removes the note once the directory it names is really gone; a directory that could not be
 * removed keeps its note, so the next writer of --out still finds it. `tempDir` undefined: no
 * directory was ever named (the note, if any, is removed).
 */
export async function unmarkWorkspaceIfGone(
  artifactDir: string,
  tempDir: string | undefined,
  kind: WorkspaceUser = "run",
): Promise<boolean> {
  if (tempDir !== undefined && !(await isGone(tempDir))) return false;
  await unmarkWorkspace(artifactDir, kind);
  return true;
}

export interface AbandonedWorkspace {
  kind: WorkspaceUser;
  /** The directory the note named (or the note's raw text when it was unreadable). */
  tempDir: string;
  /** `failed`: the directory could not be removed (its note stays for the next try). */
  result: AbandonedTempRemoval | "unreadable" | "failed";
}

async function removeNoted(
  artifactDir: string,
  tempParent: string,
  kind: WorkspaceUser,
): Promise<AbandonedWorkspace | undefined> {
  let text: string;
  try {
    text = await readFile(join(artifactDir, MARKER_FILES[kind]), "utf8");
  } catch {
    return undefined;
  }
  let parsed: z.infer<typeof markerSchema> | undefined;
  try {
    const result = markerSchema.safeParse(JSON.parse(text));
    parsed = result.success && (result.data.kind ?? "run") === kind ? result.data : undefined;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined) return { kind, tempDir: text.slice(0, 200), result: "unreadable" };
  let result: AbandonedWorkspace["result"];
  try {
    result = await removeAbandonedTrialTemp(parsed.tempDir, tempParent);
  } catch {
    result = "failed";
  }
  // A note whose directory is still there (refused, failed) stays: the directory may be one
  // this process must not touch, or removable later; the note never harms a trial.
  if (result === "removed" || result === "absent") await unmarkWorkspace(artifactDir, kind);
  return { kind, tempDir: parsed.tempDir, result };
}

/**
 * Removes the temporary directories dead processes' notes in a trial folder name (a run's and
 * a regrade's), when a note names one that is safe to delete (see `removeAbandonedTrialTemp`),
 * and then each such note. Call it holding the --out lock. Empty when the folder holds no note.
 */
export async function removeAbandonedWorkspaces(
  artifactDir: string,
  tempParent: string,
): Promise<AbandonedWorkspace[]> {
  const found: AbandonedWorkspace[] = [];
  for (const kind of ["run", "regrade"] as const) {
    const outcome = await removeNoted(artifactDir, tempParent, kind);
    if (outcome) found.push(outcome);
  }
  return found;
}

/**
 * `removeAbandonedWorkspaces` for callers that report one outcome per folder: the run's note
 * first, else the regrade's. Undefined when the folder holds no note.
 */
export async function removeAbandonedWorkspace(
  artifactDir: string,
  tempParent: string,
): Promise<AbandonedWorkspace | undefined> {
  return (await removeAbandonedWorkspaces(artifactDir, tempParent))[0];
}
