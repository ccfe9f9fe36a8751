import { replaceLongestFirst } from "../shared/index.js";

/**
 * Replaces every spelling of the trial root in `text` with a placeholder. Pass both the path and
 * its realpath (macOS reaches /tmp through /private/tmp, and tools report either); on Windows the
 * forward-slash spelling is replaced too. Longest spellings go first so a realpath that contains
 * the other spelling is not half-replaced.
 */
export function replaceTrialRoot(
  text: string,
  root: string | readonly string[],
  placeholder = "<trial-root>",
): string {
  const spellings = new Set<string>();
  for (const path of typeof root === "string" ? [root] : root) {
    if (path.length <= 1) continue;
    spellings.add(path);
    if (path.includes("\\")) {
      spellings.add(path.replace(/\\/g, "/"));
      spellings.add(path.replace(/\\/g, "\\\\"));
    }
  }
  return replaceLongestFirst(
    text,
    [...spellings].map((spelling) => [spelling, placeholder] as const),
  );
}
