// Grader programs that will not start here: a warning before any trial, since each trial would
// otherwise end in the same infrastructure error only after its agent has run (and been paid for).
import { access, constants } from "node:fs/promises";
import { delimiter, isAbsolute, join } from "node:path";
import type { InputProblem } from "../../shared/index.js";
import type { Experiment } from "../experiment.js";

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, process.platform === "win32" ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether `program` starts as a grader would start it: a bare name from PATH, or an absolute path. */
async function programFound(program: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (isAbsolute(program)) return isExecutable(program);
  const extensions =
    process.platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";")] : [""];
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean))
    for (const extension of extensions)
      if (await isExecutable(join(dir, `${program}${extension}`))) return true;
  return false;
}

/**
 * One warning per command grader whose program is a bare name not found on PATH or an absolute
 * path that is not an executable file. Relative paths live in the trial and are not checked.
 */
export async function missingGraderPrograms(
  experiment: Experiment,
  env: NodeJS.ProcessEnv = process.env,
): Promise<InputProblem[]> {
  const warnings: InputProblem[] = [];
  for (const task of experiment.tasks) {
    for (const grader of task.graders) {
      if (grader.kind !== "command") continue;
      const program = grader.argv[0] ?? "";
      const relative = !isAbsolute(program) && /[\\/]/.test(program);
      if (program === "" || relative || (await programFound(program, env))) continue;
      warnings.push({
        path: `${task.manifestField}.graders (${grader.id}).argv[0]`,
        message: isAbsolute(program)
          ? `${program} is not an executable file here: every trial of task ${task.id} would end in an infrastructure error (grader_failed) after its agent ran`
          : `${program} is not on PATH: every trial of task ${task.id} would end in an infrastructure error (grader_failed) after its agent ran`,
      });
    }
  }
  return warnings;
}
