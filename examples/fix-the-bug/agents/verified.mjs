// Simulates typical runs of the candidate setup (verify-before-finishing + scope
// policy). Half of its first attempts are the same partial fix the baseline makes,
// but it runs the tests before finishing, sees the failure and repairs it.
import {
  applyFix,
  FULL_FIX,
  PARTIAL_FIX,
  readOrThrow,
  SOURCE,
  TEST,
  testsPass,
} from "./shared.mjs";

export default async function verifiedAgent({ tools, trial }) {
  await readOrThrow(tools, TEST);
  await readOrThrow(tools, SOURCE);
  const firstTry = trial.index % 2 === 1 ? PARTIAL_FIX : FULL_FIX;
  await applyFix(tools, firstTry);
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    if (await testsPass(tools)) {
      return `Fixed parseDuration to ignore all whitespace between parts; npm test passes (attempt ${attempt}).`;
    }
    await applyFix(tools, FULL_FIX);
  }
  return "Could not make npm test pass after 3 attempts.";
}
