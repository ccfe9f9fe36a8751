// The baselines a run (or a regrade) shares between its workspaces: one per task, built the first
// time a workspace of that task is needed, removed when the run ends. Sharing is a saving only,
// never a new way to fail: a baseline that cannot be built leaves its task's workspaces to commit
// their own copies, which then report whatever stopped it (a changed fixture, a missing git).
//
// Without a sandbox (--unsafe-no-sandbox) nothing is shared. The agent's code then runs as the
// harness's user with no read-only view of `.git`, so it could write the shared packs in place
// through its own links and change the baseline of every later trial; checking the packs before
// each use would cost about what a private commit does and still leave the moment between check
// and use. Each trial commits its own copy there, as before sharing existed.
import {
  type BaselineArea,
  createBaselineArea,
  type SharedBaseline,
  type TreeSnapshot,
} from "../../workspace/index.js";
import type { TaskSpec } from "../experiment.js";
import { markWorkspace, unmarkWorkspaceIfGone, type WorkspaceUser } from "./workspace-marker.js";

export interface SharedBaselines {
  /** The task's baseline, or undefined: nothing shared in this run, or it could not be built. */
  forTask(task: TaskSpec, frozen: TreeSnapshot): Promise<SharedBaseline | undefined>;
  /** Removes every baseline (call it once no workspace is being made). Never throws. */
  dispose(): Promise<void>;
}

export interface ShareBaselinesOptions {
  /** False for a run without a sandbox: see the note at the top of this file. */
  enabled: boolean;
  /**
   * Where the area is noted before it exists (--out: the next writer there, holding its lock,
   * removes what a killed run left, as it does for trials' workspaces).
   */
  outDir: string;
  tempParent: string;
  user: WorkspaceUser;
}

export function shareBaselines(options: ShareBaselinesOptions): SharedBaselines {
  let area: Promise<BaselineArea | undefined> | undefined;
  let noted: string | undefined;
  const built = new Map<string, Promise<SharedBaseline | undefined>>();
  const openArea = () => {
    area ??= createBaselineArea({
      tempParent: options.tempParent,
      beforeCreate: async (dir) => {
        await markWorkspace(options.outDir, dir, options.user);
        noted = dir;
      },
    }).catch(() => undefined);
    return area;
  };
  return {
    forTask(task, frozen) {
      if (!options.enabled) return Promise.resolve(undefined);
      let baseline = built.get(task.id);
      if (baseline === undefined) {
        baseline = openArea().then((opened) =>
          opened?.build(task.fixtureDir, frozen).catch(() => undefined),
        );
        built.set(task.id, baseline);
      }
      return baseline;
    },
    async dispose() {
      await Promise.all(built.values());
      const opened = await area;
      await opened?.dispose().catch(() => {});
      // A baseline that could not be removed keeps its note, so the next writer still finds it.
      if (noted !== undefined)
        await unmarkWorkspaceIfGone(options.outDir, noted, options.user).catch(() => {});
    },
  };
}
