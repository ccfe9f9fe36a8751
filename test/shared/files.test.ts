import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { InvalidInputError, readJsonFile, validateWith } from "../../src/shared/index.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-files-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function errorOf(text: string): Promise<InvalidInputError> {
  const file = join(dir, `f${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, text);
  try {
    await readJsonFile(file);
  } catch (error) {
    return error as InvalidInputError;
  }
  throw new Error("expected an error");
}

describe("readJsonFile", () => {
  it("names the line and column of a syntax error", async () => {
    const error = await errorOf('{\n  "a": 1,\n  "b": }\n');
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.problems[0]?.path).toBe("line 3, column 8");
  });

  it("names the end of the text for truncated JSON", async () => {
    const error = await errorOf('{"a": [1, 2');
    expect(error.problems[0]?.path).toBe("line 1, column 12");
  });

  it("names a missing file", async () => {
    await expect(readJsonFile(join(dir, "nope.json"))).rejects.toThrow(
      /nope\.json: file not found/,
    );
  });
});

describe("validateWith", () => {
  it("tells a missing field from a wrong type", () => {
    const schema = z.strictObject({ a: z.string(), b: z.number() });
    const result = validateWith(schema, { b: "x", c: 1 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      { path: "a", message: "expected string (missing)" },
      { path: "b", message: "expected number" },
      { path: "c", message: "unknown field (not allowed here)" },
    ]);
  });
});
