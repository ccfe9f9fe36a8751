import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadReadmeContract, validateReadmeContract } from "../../src/graders/index.js";
import { InvalidInputError } from "../../src/shared/index.js";
import { cleanupTemporaryDirs, contractPath, repoRoot, temporaryDir } from "./support.js";

afterEach(cleanupTemporaryDirs);

const conformanceContract = join(
  repoRoot,
  "../shared/conformance/harness-v0.1/grader-contract.json",
);

const valid = {
  requiredHeadings: ["Installation"],
  publicApi: ["createPool"],
  requiredCodeTokens: ["signal"],
  requiredAnyCodeTokens: [["npm test", "node --test"]],
  forbiddenClaims: ["CommonJS"],
  exampleLanguages: ["js"],
  forbidRemoteLinks: true,
};

function problems(input: unknown) {
  const result = validateReadmeContract(input);
  if (result.ok) throw new Error("expected the contract to be rejected");
  return result.problems;
}

describe("readme-package-v1 contract", () => {
  const sharedPresent = existsSync(conformanceContract);
  it.skipIf(!sharedPresent)(
    `loads better-harness's grader-contract.json from ../shared/conformance unchanged${sharedPresent ? "" : " (skipped: that folder is not present in this checkout)"}`,
    async () => {
      const contract = await loadReadmeContract(conformanceContract);
      expect(contract.publicApi).toEqual(["retry", "RetryExhaustedError", "DEFAULT_MAX_ATTEMPTS"]);
      expect(contract.requiredAnyCodeTokens).toEqual([["npm test", "node --test"]]);
    },
  );

  it("loads the example contract", async () => {
    const contract = await loadReadmeContract(contractPath);
    expect(contract.publicApi).toEqual(["createPool", "PoolFullError", "DEFAULT_CONCURRENCY"]);
  });

  it("rejects an unknown field, naming it by path", () => {
    expect(problems({ ...valid, requiredHeading: ["API"] })).toEqual([
      { path: "requiredHeading", message: "unknown field (not allowed here)" },
    ]);
  });

  it("rejects a missing field", () => {
    const { forbidRemoteLinks: _, ...rest } = valid;
    expect(problems(rest)).toEqual([
      { path: "forbidRemoteLinks", message: expect.stringMatching(/^expected boolean/) },
    ]);
  });

  it("names nested positions of bad values", () => {
    const found = problems({
      ...valid,
      requiredAnyCodeTokens: [["npm test"], ["ok", 3], []],
      publicApi: ["createPool", " "],
    });
    expect(found.map((p) => p.path).sort()).toEqual([
      "publicApi[1]",
      "requiredAnyCodeTokens[1][1]",
      "requiredAnyCodeTokens[2]",
    ]);
  });

  it("rejects duplicates, comparing headings and claims case-insensitively", () => {
    const found = problems({
      ...valid,
      requiredHeadings: ["API", "api"],
      forbiddenClaims: ["Redis", "redis"],
      publicApi: ["a", "A"],
    });
    expect(found).toEqual([
      { path: "requiredHeadings[1]", message: 'duplicate of entry [0] ("api")' },
      { path: "forbiddenClaims[1]", message: 'duplicate of entry [0] ("redis")' },
    ]);
  });

  it("requires at least one example language", () => {
    expect(problems({ ...valid, exampleLanguages: [] }).map((p) => p.path)).toEqual([
      "exampleLanguages",
    ]);
  });

  it("throws InvalidInputError naming the file and the JSON path", async () => {
    const dir = await temporaryDir();
    const path = join(dir, "contract.json");
    await writeFile(path, JSON.stringify({ ...valid, exampleLanguages: "js" }));
    const error = await loadReadmeContract(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).message).toContain(path);
    expect((error as InvalidInputError).problems).toEqual([
      { path: "exampleLanguages", message: "expected array" },
    ]);
  });

  it("reports a file that is not JSON", async () => {
    const dir = await temporaryDir();
    const path = join(dir, "contract.json");
    await writeFile(path, '{\n  "publicApi": [,]\n}');
    await expect(loadReadmeContract(path)).rejects.toThrow(/not valid JSON/);
  });
});
