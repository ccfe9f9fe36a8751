// Hidden paths inside what the sandbox mirrors whole: the system directories and a Node.js
// installed outside them (nvm), where the harness itself or npm's global config may lie.

import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alwaysHidden } from "../../src/compare/run/containment.js";
import { bwrapArgs, type HostLayout } from "../../src/sandbox/bwrap-args.js";
import { createBwrapSandbox, detectSandbox } from "../../src/sandbox/index.js";

const layout: HostLayout = {
  system: [{ path: "/usr", kind: "dir" }],
  nodePrefix: "/opt/node",
  path: "/opt/node/bin:/usr/bin",
};

function args(hidden: string[], hiddenFiles: string[] = []): string[] {
  return bwrapArgs({
    layout,
    cwd: "/srv/trial",
    writable: ["/srv/trial"],
    readOnly: ["/opt/node/lib/node_modules/harnesslab/node_modules/@anthropic-ai"],
    protect: [],
    hidden,
    hiddenFiles,
    tmpBytes: 1024,
  });
}

/** Index of the option `name` followed by `values`, or -1. */
function at(list: string[], name: string, ...values: string[]): number {
  return list.findIndex(
    (word, i) => word === name && values.every((value, j) => list[i + 1 + j] === value),
  );
}

describe("masks", () => {
  it("cover hidden paths inside a Node.js install outside the system directories, after it is bound", () => {
    const built = args(
      ["/opt/node/lib/node_modules/harnesslab", "/opt/node/etc/npmrc", "/home/someone"],
      ["/opt/node/etc/npmrc"],
    );
    const prefix = at(built, "--ro-bind", "/opt/node", "/opt/node");
    const install = at(built, "--tmpfs", "/opt/node/lib/node_modules/harnesslab");
    const npmrc = at(built, "--ro-bind", "/dev/null", "/opt/node/etc/npmrc");
    expect(prefix).toBeGreaterThan(-1);
    expect(install).toBeGreaterThan(prefix);
    expect(npmrc).toBeGreaterThan(prefix);
    // A bind the caller asked for inside a masked path comes after the mask, so it is visible.
    expect(
      at(built, "--ro-bind", "/opt/node/lib/node_modules/harnesslab/node_modules/@anthropic-ai"),
    ).toBeGreaterThan(install);
    // Outside everything mirrored there is nothing to cover.
    expect(built).not.toContain("/home/someone");
  });

  it("include the run keys and npm's global config on every run", () => {
    const hidden = alwaysHidden();
    expect(hidden).toContain(process.env.HARNESSLAB_STATE_DIR);
    expect(hidden.some((path) => path.endsWith(join("etc", "npmrc")))).toBe(true);
  });
});

describe("a hidden file under a mirrored directory, live", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "hl-hidden-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const target = "/usr/lib/os-release";
  it.skipIf(!existsSync(target))(
    "reads as empty inside, and the directory around it stays",
    async () => {
      const support = await detectSandbox();
      if (!support.available) throw new Error(support.reason);
      const sandbox = createBwrapSandbox(support, { hidden: [target] });
      const ran = await sandbox.run(
        ["/bin/sh", "-c", `cat ${target} || echo unreadable; test -d /usr/lib && echo dir`],
        {
          cwd: dir,
          writable: [dir],
          timeoutMs: 20_000,
          privateDir: dir,
        },
      );
      expect(ran.exitCode, ran.stderr).toBe(0);
      expect(ran.stdout).toBe("unreadable\ndir\n");
    },
  );
});
