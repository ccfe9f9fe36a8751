// Workspace notes: a run's and a regrade's live in files of their own and are never taken for
// each other; a note goes only once the directory it names is really gone.
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  markWorkspace,
  REGRADE_WORKSPACE_MARKER,
  removeAbandonedWorkspaces,
  unmarkWorkspaceIfGone,
  WORKSPACE_MARKER,
} from "../../src/compare/run/workspace-marker.js";

let base: string;
let trialDir: string;
let tempParent: string;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), "hl-marker-"));
  trialDir = join(base, "out", "fixer", "trial-001");
  tempParent = join(base, "tmp");
  await mkdir(trialDir, { recursive: true });
  await mkdir(tempParent);
});
afterEach(() => rm(base, { recursive: true, force: true }));

async function leftover(name: string): Promise<string> {
  const dir = join(tempParent, name);
  await mkdir(join(dir, "trial"), { recursive: true });
  await writeFile(join(dir, "trial", "file.txt"), "left\n");
  return dir;
}

describe("workspace notes", () => {
  it("of a run and of a regrade sit side by side, and each one's directory is removed with it", async () => {
    const ofRun = await leftover("harnesslab-trial-run1");
    const ofRegrade = await leftover("harnesslab-trial-regrade1");
    await markWorkspace(trialDir, ofRun);
    await markWorkspace(trialDir, ofRegrade, "regrade");
    expect((await readdir(trialDir)).sort()).toEqual(
      [REGRADE_WORKSPACE_MARKER, WORKSPACE_MARKER].sort(),
    );
    expect(await removeAbandonedWorkspaces(trialDir, tempParent)).toEqual([
      { kind: "run", tempDir: ofRun, result: "removed" },
      { kind: "regrade", tempDir: ofRegrade, result: "removed" },
    ]);
    expect(await readdir(tempParent)).toEqual([]);
    expect(await readdir(trialDir)).toEqual([]);
  });

  it("stay when the directory they name is not one to remove, so nothing is forgotten", async () => {
    const elsewhere = join(base, "elsewhere");
    await mkdir(elsewhere);
    await markWorkspace(trialDir, elsewhere, "regrade");
    expect(await removeAbandonedWorkspaces(trialDir, tempParent)).toEqual([
      { kind: "regrade", tempDir: elsewhere, result: "refused" },
    ]);
    expect(await readdir(trialDir)).toEqual([REGRADE_WORKSPACE_MARKER]);
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it("are not taken for the other kind's: a regrade's note in a run's file is left alone", async () => {
    const dir = await leftover("harnesslab-trial-mixed1");
    await writeFile(
      join(trialDir, WORKSPACE_MARKER),
      JSON.stringify({ kind: "regrade", tempDir: dir, pid: 1 }),
    );
    const [found] = await removeAbandonedWorkspaces(trialDir, tempParent);
    expect(found).toMatchObject({ kind: "run", result: "unreadable" });
    expect(await readdir(tempParent)).toEqual(["harnesslab-trial-mixed1"]);
    expect(await readdir(trialDir)).toEqual([WORKSPACE_MARKER]);
  });

  it("written before notes had a kind still count as a run's", async () => {
    const dir = await leftover("harnesslab-trial-old1");
    await writeFile(join(trialDir, WORKSPACE_MARKER), JSON.stringify({ tempDir: dir, pid: 1 }));
    expect(await removeAbandonedWorkspaces(trialDir, tempParent)).toEqual([
      { kind: "run", tempDir: dir, result: "removed" },
    ]);
  });

  it("are given up by their writer only once the directory is gone", async () => {
    const dir = await leftover("harnesslab-trial-mine1");
    await markWorkspace(trialDir, dir, "regrade");
    expect(await unmarkWorkspaceIfGone(trialDir, dir, "regrade")).toBe(false);
    expect(await readdir(trialDir)).toEqual([REGRADE_WORKSPACE_MARKER]);
    await rm(dir, { recursive: true });
    expect(await unmarkWorkspaceIfGone(trialDir, dir, "regrade")).toBe(true);
    expect(await readdir(trialDir)).toEqual([]);
  });
});
