import { readFile } from "node:fs/promises";
import type { z } from "zod";
import { duplicateKeyProblems } from "./json-keys.js";
import { readRegularFile } from "./regular-file.js";
import { InvalidInputError } from "./validation.js";

/** Why a file could not be read, for a person: `file not found`, `is a directory; expected …`. */
export function fileReadProblem(error: unknown, expected = "a file"): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") return "file not found";
  if (code === "EISDIR") return `is a directory; expected ${expected}`;
  return `cannot read (${code ?? String(error)})`;
}

/** Reads a UTF-8 file; a missing or unreadable file becomes an InvalidInputError naming it. */
export async function readTextFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    const reason = fileReadProblem(error);
    throw new InvalidInputError(path, [{ path: "(file)", message: reason }], reason);
  }
}

/** Reads and parses a JSON file; a syntax error names the line and column, a repeated key its path. */
export async function readJsonFile(path: string): Promise<unknown> {
  const text = await readTextFile(path);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const where = jsonErrorLocation(text);
    throw new InvalidInputError(
      path,
      [{ path: where, message: `not valid JSON: ${message}` }],
      "not valid JSON",
    );
  }
  const duplicates = duplicateKeyProblems(text);
  if (duplicates.length > 0) throw new InvalidInputError(path, duplicates, "repeated JSON keys");
  return value;
}

/** `line L, column C` of the first JSON syntax error in `text` (1-based). */
export function jsonErrorLocation(text: string): string {
  const offset = jsonErrorOffset(text);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return `line ${line}, column ${column}`;
}

/**
 * Offset of the first syntax error in `text`. Node 20's JSON.parse messages do not always
 * carry a position, so a small scanner finds it for the error message.
 */
function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const literal = (word: string) => {
    if (!text.startsWith(word, i)) fail();
    i += word.length;
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail();
      if (text[i] === "\\") {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? "x")) fail();
      }
      i++;
    }
    if (i >= text.length) fail();
    i++;
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!match) fail();
    i += match![0].length;
  };
  const members = (close: string, member: () => void) => {
    i++;
    ws();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      member();
      ws();
      if (text[i] === ",") i++;
      else if (text[i] === close) {
        i++;
        return;
      } else fail();
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{")
      members("}", () => {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ":") fail();
        i++;
        value();
      });
    else if (c === "[") members("]", value);
    else if (c === '"') string();
    else if (c === "t") literal("true");
    else if (c === "f") literal("false");
    else if (c === "n") literal("null");
    else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) number();
    else fail();
  };
  try {
    value();
    ws();
    return Math.min(i, text.length);
  } catch (offset) {
    return typeof offset === "number" ? Math.min(offset, text.length) : 0;
  }
}

/**
 * A JSON file's value when the file exists, parses and passes `schema`; otherwise undefined.
 * For files a run wrote itself, where anything else means "not (yet) written whole". With
 * `maxBytes`, only a regular file (no link, no FIFO) of at most that size is read: for files
 * someone else may have put there.
 */
export async function readValidJsonFile<S extends z.ZodType>(
  path: string,
  schema: S,
  maxBytes?: number,
): Promise<z.output<S> | undefined> {
  try {
    let text: string;
    if (maxBytes === undefined) text = await readFile(path, "utf8");
    else {
      const read = await readRegularFile(path, maxBytes);
      if (!read.ok) return undefined;
      text = read.value.toString("utf8");
    }
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
