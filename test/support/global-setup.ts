// Runs once before the suite: the tests run agent-written code the way a run does, contained by
// bubblewrap, so a machine where it cannot start fails here with what to install, instead of
// every such test failing on its own.
import { detectSandbox } from "../../src/sandbox/index.js";

export default async function requireSandbox(): Promise<void> {
  const support = await detectSandbox();
  if (!support.available)
    throw new Error(
      `harnesslab's tests need the OS sandbox: ${support.reason}. To fix: ${support.fix}`,
    );
}
