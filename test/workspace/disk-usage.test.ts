// What a tree takes on disk, as the disk budget's watch measures it: every entry counts, whatever
// its name is made of.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diskUsage } from "../../src/workspace/index.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-disk-usage-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("diskUsage", () => {
  it("counts what lies under a name that is not UTF-8 (it would not survive decoding)", async () => {
    const root = join(dir, "tree");
    const hidden = Buffer.concat([Buffer.from(`${root}/`), Buffer.from([0xff, 0xfe])]);
    await mkdir(hidden, { recursive: true });
    const file = Buffer.concat([hidden, Buffer.from("/data")]);
    await writeFile(file, Buffer.alloc(4 * 1024 * 1024, 1));
    expect(await diskUsage(root)).toBeGreaterThanOrEqual(4 * 1024 * 1024);
  });
});
