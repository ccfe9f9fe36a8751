// The seccomp filter every contained command runs under: the calls that could change a file
// without its stat data showing it are refused, with answers programs take as "not supported",
// and everything else (other ioctls on the same files, reading attributes) still works.
import { execFile } from "node:child_process";
import { access, chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { withSeccomp } from "../../src/sandbox/host.js";
import { statEvidenceFilter } from "../../src/sandbox/seccomp.js";
import { testSandbox } from "../support/sandbox.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "hl-seccomp-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const PROBE = `
import ctypes, errno, fcntl, os, struct
open('a', 'w').write('A' * 4096)
open('b', 'w').write('B' * 4096)
fa = os.open('a', os.O_RDWR); fb = os.open('b', os.O_RDWR)
def attempt(name, call):
    try:
        call(); print(name, 'ok')
    except OSError as e: print(name, errno.errorcode[e.errno])
move = struct.pack('IIQQQQ', 0, fb, 0, 0, 1, 0)
attempt('move-ext', lambda: fcntl.ioctl(fa, 0xC028660F, move))
# The kernel reads an ioctl's request as 32 bits: the high ones must not get it past the filter.
attempt('move-ext-high-bits', lambda: fcntl.ioctl(fa, 0xFFFFFFFFC028660F, move))
attempt('ficlone', lambda: fcntl.ioctl(fa, 0x40049409, fb))
attempt('setflags', lambda: fcntl.ioctl(fa, 0x40086602, struct.pack('q', 0)))
attempt('getflags', lambda: fcntl.ioctl(fa, 0x80086601, bytes(8)))
r, w = os.pipe(); os.write(w, b'xyz')
attempt('fionread', lambda: fcntl.ioctl(r, 0x541B, bytes(4)))
attempt('setxattr', lambda: os.setxattr('a', 'user.mark', b'1'))
attempt('removexattr', lambda: os.removexattr('a', 'user.mark'))
attempt('listxattr', lambda: os.listxattr('a'))
libc = ctypes.CDLL(None, use_errno=True)
def call(name, nr, *args):
    if libc.syscall(nr, *args) == -1: print(name, errno.errorcode[ctypes.get_errno()])
    else: print(name, 'ok')
params = ctypes.create_string_buffer(120)
# io_uring's operations (IORING_OP_SETXATTR among them) would never pass the filter.
call('io_uring_setup', 425, 8, params)
call('file_setattr', 469, -100, b'a', 0, 0, 0)
`;

describe("the sandbox's seccomp filter", () => {
  it("is built for the architectures the harness runs on, and not guessed for others", () => {
    for (const arch of ["x64", "arm64"]) {
      const program = statEvidenceFilter(arch);
      expect(program, arch).toBeInstanceOf(Buffer);
      // Whole `struct sock_filter` entries, within the kernel's limit of 4096.
      expect(program!.length % 8).toBe(0);
      expect(program!.length / 8).toBeLessThan(4096);
    }
    expect(statEvidenceFilter("ia32")).toBeUndefined();
    expect(statEvidenceFilter("riscv64")).toBeUndefined();
  });

  it("refuses the ioctls and attribute writes that change a file unseen, and nothing else", async () => {
    const sandbox = await testSandbox();
    expect(sandbox.changesShowInStat).toBe(process.arch === "x64" || process.arch === "arm64");
    if (!sandbox.changesShowInStat) {
      console.log(`no seccomp filter for ${process.arch}: the refusals are not checked here`);
      return;
    }
    const work = await mkdtemp(join(dir, "probe-"));
    const script = join(dir, "probe.py");
    await writeFile(script, PROBE);
    const result = await sandbox.run(["python3", script], {
      cwd: work,
      writable: [work],
      readOnly: [script],
      timeoutMs: 60_000,
      privateDir: dir,
    });
    expect(result.exitCode, result.stderr).toBe(0);
    const said = Object.fromEntries(
      result.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" ") as [string, string]),
    );
    expect(said).toMatchObject({
      "move-ext": "ENOTTY",
      "move-ext-high-bits": "ENOTTY",
      ficlone: "ENOTTY",
      setflags: "ENOTTY",
      setxattr: "ENOTSUP",
      removexattr: "ENOTSUP",
      io_uring_setup: "ENOSYS",
      file_setattr: "ENOSYS",
      fionread: "ok",
      listxattr: "ok",
    });
    // Reading the flags is not refused (a filesystem without them answers for itself).
    expect(said.getflags).not.toBe("ENOTTY");
    // The donor the refused call named still holds its bytes.
    expect(await readFile(join(work, "b"), "utf8")).toBe("B".repeat(4096));
  });
});

describe("the shell that opens the filter for bwrap (it runs outside the sandbox)", () => {
  it("runs no code from SHELLOPTS in its environment, even where /bin/sh is bash", async () => {
    // Beside the other files, not in them: the shell's user must reach it.
    const place = await mkdtemp(join(tmpdir(), "hl-seccomp-shell-"));
    onTestFinished(() => rm(place, { recursive: true, force: true }));
    // Written by the shell's trace prompt, as the user the test runs the shell as.
    await chmod(place, 0o777);
    const wrapped = withSeccomp("/dev/null", ["/bin/true"]);
    expect(wrapped).toContain("/bin/sh");
    // Debian's /bin/sh is dash, which reads neither; bash is the shell this is about.
    const asBash = wrapped.map((arg) => (arg === "/bin/sh" ? "/bin/bash" : arg));
    const unguarded = asBash.slice(asBash.indexOf("/bin/bash"));
    // Bash ignores PS4 from the environment when run as root: the shell runs as nobody here.
    const asUser =
      process.getuid?.() === 0
        ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        : [];
    const run = async (argv: string[], marker: string) => {
      const [command, ...args] = [...asUser, ...argv];
      await promisify(execFile)(command!, args, {
        cwd: place,
        env: { PATH: "/usr/bin:/bin", SHELLOPTS: "xtrace", PS4: `$(touch ${join(place, marker)})` },
        timeout: 30_000,
      });
      return access(join(place, marker)).then(
        () => true,
        () => false,
      );
    };
    // The attack works on the shell alone, so the guard is what stops it.
    expect(await run(unguarded, "unguarded")).toBe(true);
    expect(await run(asBash, "wrapped")).toBe(false);
  });
});
