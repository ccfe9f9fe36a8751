// Duplicate keys in a JSON document. JSON.parse keeps the last of two equal keys without a word,
// so a manifest that sets `timeoutMs` twice silently runs with whichever came last; every
// JSON input the user writes is checked for them, and each one is named with its line.
import { visit } from "jsonc-parser";
import type { InputProblem } from "./validation.js";

/** One problem per key that repeats a key of the same object, at the JSON path of that object. */
export function duplicateKeyProblems(text: string): InputProblem[] {
  const problems: InputProblem[] = [];
  // Per open object: its keys with the line each was first seen on.
  const objects: Map<string, number>[] = [];
  visit(text, {
    onObjectBegin: () => {
      objects.push(new Map());
    },
    onObjectEnd: () => {
      objects.pop();
    },
    onObjectProperty: (property, _offset, _length, startLine, _startCharacter, pathSupplier) => {
      const keys = objects.at(-1);
      if (keys === undefined) return;
      const first = keys.get(property);
      if (first === undefined) {
        keys.set(property, startLine + 1);
        return;
      }
      problems.push({
        path: formatPath([...pathSupplier(), property]),
        message: `duplicate key ${JSON.stringify(property)} on line ${startLine + 1} (first on line ${first}); JSON keeps only one, so say it once`,
      });
    },
  });
  return problems;
}

function formatPath(segments: readonly (string | number)[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out === "" ? "(root)" : out;
}

/** A JSON object (not null, not an array): what a document's fields are read from. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
