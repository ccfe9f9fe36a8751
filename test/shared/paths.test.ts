import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { isPathInside } from "../../src/shared/index.js";

const parent = resolve("/srv/fixture");

describe("isPathInside", () => {
  it("counts the parent itself and everything below it as inside", () => {
    expect(isPathInside(parent, parent)).toBe(true);
    expect(isPathInside(parent, join(parent, "src", "index.js"))).toBe(true);
  });

  it("counts names that merely start with two dots as inside", () => {
    expect(isPathInside(parent, join(parent, "..out"))).toBe(true);
    expect(isPathInside(parent, join(parent, "..data", "x"))).toBe(true);
    expect(isPathInside(parent, join(parent, "..."))).toBe(true);
  });

  it("counts the parent's parent, its siblings and unrelated paths as outside", () => {
    expect(isPathInside(parent, resolve("/srv"))).toBe(false);
    expect(isPathInside(parent, resolve("/srv/fixture-copy"))).toBe(false);
    expect(isPathInside(parent, resolve("/srv/..out"))).toBe(false);
    expect(isPathInside(parent, resolve("/etc/passwd"))).toBe(false);
  });
});
