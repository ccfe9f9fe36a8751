import { readFile } from "node:fs/promises";
import { InvalidInputError } from "./validation.js";

/** Reads a UTF-8 file; a missing or unreadable file becomes an InvalidInputError naming it. */
export async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "file not found"
        : code === "EISDIR"
          ? "is a directory, expected a file"
          : `cannot read (${code ?? String(error)})`;
    throw new InvalidInputError(path, [{ path: "(file)", message: reason }], reason);
  }
}

/** Reads and parses a JSON file; a syntax error names the line and column. */
export async function readJsonFile(path: string): Promise<unknown> {
  const text = await readTextFile(path);
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message);
    let where = "(file)";
    if (position) {
      const offset = Number(position[1]);
      const before = text.slice(0, offset);
      const line = before.split("\n").length;
      const column = offset - before.lastIndexOf("\n");
      where = `line ${line}, column ${column}`;
    }
    throw new InvalidInputError(
      path,
      [{ path: where, message: `not valid JSON: ${message}` }],
      "not valid JSON",
    );
  }
}
