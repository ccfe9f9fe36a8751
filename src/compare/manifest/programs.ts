// Programs that will not start here: a command grader's program, or a forge CLI arm's. Each
// would end every trial in the same infrastructure error only after its agent had run (and been
// paid for), so `compare validate` and `compare run` report them before any trial.
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
export async function programFound(program: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (isAbsolute(program)) return isExecutable(program);
  const extensions =
    process.platform === "win32" ? ["", ...(env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";")] : [""];
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean))
    for (const extension of extensions)
      if (await isExecutable(join(dir, `${program}${extension}`))) return true;
  return false;
}

/**
 * One problem per command grader whose program is a bare name not found on PATH or an absolute
 * path that is not an executable file. Relative paths live in the trial and are not checked.
 */
export async function missingGraderPrograms(
  experiment: Experiment,
  env: NodeJS.ProcessEnv = process.env,
): Promise<InputProblem[]> {
  const problems: InputProblem[] = [];
  for (const task of experiment.tasks) {
    for (const grader of task.graders) {
      if (grader.kind !== "command" && !(grader.kind === "tests" && grader.runner === "junit"))
        continue;
      const program = grader.argv?.[0] ?? "";
      const relative = !isAbsolute(program) && /[\\/]/.test(program);
      if (program === "" || relative || (await programFound(program, env))) continue;
      problems.push({
        path: `${task.manifestField}.graders (${grader.id}).argv[0]`,
        message: `${isAbsolute(program) ? `${program} is not an executable file here` : `${program} is not on PATH`}: grader "${grader.id}" of task ${task.id} cannot start, and every trial would end in an infrastructure error (grader_failed) after its agent ran; ${isAbsolute(program) ? "point argv[0] at an executable" : `install ${program}`} or change the grader's argv`,
      });
    }
  }
  return problems;
}
