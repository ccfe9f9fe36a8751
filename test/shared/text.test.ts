import { describe, expect, it } from "vitest";
import { escapeRegExp, replaceLongestFirst } from "../../src/shared/index.js";

describe("replaceLongestFirst", () => {
  it("replaces a longer spelling before a shorter one it contains, leaving no fragments", () => {
    const text = "/private/tmp/t1/a and /tmp/t1/b";
    expect(
      replaceLongestFirst(text, [
        ["/tmp/t1", "<root>"],
        ["/private/tmp/t1", "<root>"],
      ]),
    ).toBe("<root>/a and <root>/b");
  });

  it("ignores empty patterns", () => {
    expect(replaceLongestFirst("abc", [["", "x"]])).toBe("abc");
  });
});

describe("escapeRegExp", () => {
  it("makes every metacharacter literal", () => {
    const text = "a.b*c+(d)[e]{f}|g^h$i\\j?";
    expect(new RegExp(`^${escapeRegExp(text)}$`).test(text)).toBe(true);
    expect(new RegExp(escapeRegExp("a.b")).test("axb")).toBe(false);
  });
});
