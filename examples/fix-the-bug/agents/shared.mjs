// Helpers shared by the scripted agents of this example. They simulate typical
// runs of a coding agent through the same tools (and the same permission policy)
// a real host gets.

export const SOURCE = "src/index.js";
export const TEST = "test/duration.test.js";

const BUGGY = "  const compact = text.trim();\n";
/** The fix a careful engineer makes: whitespace between parts is not part of any part. */
export const FULL_FIX = '  const compact = text.replace(/\\s+/g, "");\n';
/** A plausible fix that forgets a case: String#replace with a string replaces only the first match. */
export const PARTIAL_FIX = '  const compact = text.trim().replace(" ", "");\n';

export async function readOrThrow(tools, path) {
  const result = await tools.read(path);
  if (!result.ok)
    throw new Error(`could not read ${path}: ${result.denied ? result.reason : result.error}`);
  return result.content;
}

/** Replaces the parsing line with `fixLine`, from whatever state the file is in. */
export async function applyFix(tools, fixLine) {
  const source = await readOrThrow(tools, SOURCE);
  const current = [BUGGY, FULL_FIX, PARTIAL_FIX].find((line) => source.includes(line));
  if (current === undefined) throw new Error("the parsing line is not where it was expected");
  if (current === fixLine) return { ok: true };
  return tools.edit(SOURCE, current, fixLine);
}

/** Runs the tests through the policy-checked Bash tool; true when they pass. */
export async function testsPass(tools) {
  const run = await tools.bash("npm test");
  return run.ok && run.exitCode === 0;
}
