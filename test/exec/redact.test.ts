import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isSecretKey, redact, redactText, secretValuesFromEnv } from "../../src/exec/index.js";

describe("redact", () => {
  it("replaces values under credential keys at any depth", () => {
    const input = {
      apiKey: "abc",
      ANTHROPIC_API_KEY: "sk-ant-xyz",
      headers: {
        Authorization: "Bearer abc",
        "x-api-key": "k",
        Cookie: "s=1",
        "set-cookie": ["a"],
      },
      nested: [
        { password: "hunter2", client_secret: "cs", accessToken: "at", refresh_token: "rt" },
      ],
      auth: { type: "oauth", value: "v" },
      credentials: { user: "u" },
      token: "plain-token-string",
      privateKey: "-----BEGIN",
    };
    expect(redact(input)).toEqual({
      apiKey: "[REDACTED]",
      ANTHROPIC_API_KEY: "[REDACTED]",
      headers: {
        Authorization: "[REDACTED]",
        "x-api-key": "[REDACTED]",
        Cookie: "[REDACTED]",
        "set-cookie": "[REDACTED]",
      },
      nested: [
        {
          password: "[REDACTED]",
          client_secret: "[REDACTED]",
          accessToken: "[REDACTED]",
          refresh_token: "[REDACTED]",
        },
      ],
      auth: "[REDACTED]",
      credentials: "[REDACTED]",
      token: "[REDACTED]",
      privateKey: "[REDACTED]",
    });
  });

  it("keeps usage counters, limits and descriptive fields that merely mention tokens or keys", () => {
    const input = {
      usage: {
        input_tokens: 12,
        output_tokens: 3,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 7,
        reasoningTokens: 2,
      },
      max_tokens: 4096,
      tokens: { input: 1, output: 2 },
      total_tokens: "15",
      keyword: "export",
      keys: ["a", "b"],
      key: "workflow.verify",
      apiKeySource: "ANTHROPIC_API_KEY",
      token_type: "bearer",
      tokenizer: "cl100k",
      author: "someone",
      credits: 3.5,
    };
    expect(redact(input)).toEqual(input);
  });

  it("does not mistake an object referenced twice for a cycle, but marks a real cycle", () => {
    const shared = { model: "m", usage: { input_tokens: 1 } };
    const twice = { a: shared, b: shared, list: [shared, shared] };
    expect(redact(twice)).toEqual({ a: shared, b: shared, list: [shared, shared] });

    const cyclic: Record<string, unknown> = { name: "root" };
    cyclic.self = cyclic;
    cyclic.children = [{ parent: cyclic }];
    expect(redact(cyclic)).toEqual({
      name: "root",
      self: "[Circular]",
      children: [{ parent: "[Circular]" }],
    });
  });

  it("masks known secret values and bearer strings inside text", () => {
    const secrets = ["super-secret-value-123"];
    const result = redact(
      { log: "sending super-secret-value-123 with Authorization: Bearer abcdefghijkl", n: 1 },
      { secretValues: secrets },
    );
    expect(JSON.stringify(result)).not.toContain("super-secret-value-123");
    expect(JSON.stringify(result)).not.toContain("abcdefghijkl");
    expect(redactText("key sk-ant-api03-abcdefghijklmnop end")).toBe("key [REDACTED] end");
  });

  it("finds the secret values in an environment by name", () => {
    const values = secretValuesFromEnv({
      ANTHROPIC_API_KEY: "sk-ant-1234567890",
      GITHUB_TOKEN: "ghp_1234567890",
      MY_SERVICE_PASSWORD: "correct horse",
      PATH: "/usr/bin:/bin",
      HOME: "/home/u",
      SHORT_TOKEN: "abc",
      MAX_TOKENS: "100000000",
    });
    expect(values.sort()).toEqual(["correct horse", "ghp_1234567890", "sk-ant-1234567890"]);
  });

  it("produces JSON-safe output: errors without stacks, binary as a size, dates as ISO", () => {
    const error = Object.assign(new Error("boom at /home/u/project"), { code: "E_X", apiKey: "k" });
    const result = redact({
      error,
      data: Buffer.from("abc"),
      when: new Date(0),
      big: 10n,
      fn: () => 1,
      missing: undefined,
      list: [undefined, 1],
      inf: Number.POSITIVE_INFINITY,
      map: new Map([
        ["password", "x"],
        ["ok", "y"],
      ]),
    });
    expect(result).toEqual({
      error: {
        name: "Error",
        message: "boom at /home/u/project",
        code: "E_X",
        apiKey: "[REDACTED]",
      },
      data: "[binary 3 bytes]",
      when: "1970-01-01T00:00:00.000Z",
      big: "10",
      list: [null, 1],
      inf: "Infinity",
      map: { password: "[REDACTED]", ok: "y" },
    });
  });

  it("never lets a value stored under a secret key through, and never mutates its input", () => {
    const secret = "S3CR3T-VALUE-never-seen";
    fc.assert(
      fc.property(
        fc.jsonValue(),
        fc.constantFrom("password", "apiKey", "Authorization", "client_secret"),
        (doc, key) => {
          const input = { doc, wrapper: { [key]: secret, doc } };
          const before = JSON.stringify(input);
          const output = JSON.stringify(redact(input));
          expect(output).not.toContain(secret);
          expect(JSON.stringify(input)).toBe(before);
        },
      ),
    );
  });
});

describe("isSecretKey", () => {
  it.each([
    ["password", "x", true],
    ["api_key", "x", true],
    ["githubToken", "ghp", true],
    ["githubToken", 5, false],
    ["input_tokens", "5", false],
    ["auth_method", "oauth", false],
    ["secretName", "db", false],
    ["monkey", "x", false],
    ["key", "x", false],
  ] as const)("%s with %j → %s", (key, value, expected) => {
    expect(isSecretKey(key, value)).toBe(expected);
  });
});
