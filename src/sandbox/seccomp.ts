// The seccomp filter every contained command runs under (pure: the program is built from the
// CPU architecture). It refuses the few calls that change a file without the change showing in
// the file's stat data: the defragmentation and range-exchange ioctls that move another file's
// blocks into a file while leaving its times alone (ext4's EXT4_IOC_MOVE_EXT, XFS's
// XFS_IOC_SWAPEXT and XFS_IOC_EXCHANGE_RANGE, f2fs's F2FS_IOC_MOVE_RANGE), the inode flag and
// fsxattr ioctls and file_setattr, extended attributes (which carry ACLs), and io_uring, whose
// operations bypass the filter. With them refused, a file whose ctime did not move still holds
// what it held (on filesystems whose shared mappings mark writes: see `restoreKnownTree`), which
// lets the harness check a tree a command could write by its stat data instead of reading every
// byte again. Programs take the answers as "not supported here" (ENOTTY for an ioctl, ENOTSUP for
// an attribute, ENOSYS for a call) and carry on; libuv and liburing fall back from io_uring.

/** `struct sock_filter` instructions of classic BPF, as seccomp takes them. */
const LOAD_WORD = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JUMP_IF_EQUAL = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const AND = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RETURN = 0x06; // BPF_RET | BPF_K

const SECCOMP_RET_ALLOW = 0x7fff0000;
const SECCOMP_RET_ERRNO = 0x00050000;
const ENOSYS = 38;
const ENOTTY = 25;
const ENOTSUP = 95;

/** Offsets in `struct seccomp_data`: nr, arch, then args[6] as 64-bit words from 16. */
const NR = 0;
const ARCH = 4;
/** The low 32 bits of args[1] (both architectures are little-endian): an ioctl's request. */
const IOCTL_REQUEST_LOW = 24;

/**
 * The ioctls refused, by type and number (the low 16 bits of the request; direction and size
 * are left out, so a 32-bit variant of the same call is refused too).
 */
const REFUSED_IOCTLS = [
  0x660f, // EXT4_IOC_MOVE_EXT ('f', 15): moves a donor file's blocks into the file
  0x586d, // XFS_IOC_SWAPEXT ('X', 109): swaps two files' extents (xfs_fsr)
  0x5881, // XFS_IOC_EXCHANGE_RANGE ('X', 129)
  0xf509, // F2FS_IOC_MOVE_RANGE (0xf5, 9)
  0x6602, // FS_IOC_SETFLAGS ('f', 2), chattr
  0x5820, // FS_IOC_FSSETXATTR ('X', 32): project id and inode flags
  0x9409, // FICLONE (0x94, 9): shares another file's blocks
  0x940d, // FICLONERANGE (0x94, 13)
  0x5882, // XFS_IOC_START_COMMIT ('X', 130), with the next: XFS's atomic range exchange
  0x5883, // XFS_IOC_COMMIT_RANGE ('X', 131)
  0x6685, // FS_IOC_ENABLE_VERITY ('f', 133): would make a file unwritable for good
  0x6613, // FS_IOC_SET_ENCRYPTION_POLICY ('f', 19; v1 and v2): a directory no key then opens
  0x6617, // FS_IOC_ADD_ENCRYPTION_KEY ('f', 23)
];

/**
 * Calls refused on every ABI with ENOSYS (same numbers everywhere): io_uring, whose operations
 * (IORING_OP_SETXATTR among them) never pass this filter, and file_setattr (Linux 6.17), which
 * sets the inode flags the ioctls above would.
 */
const REFUSED_CALLS = [425, 426, 427, 469];

interface ArchitectureCalls {
  audit: number;
  ioctl: number[];
  /** setxattr, lsetxattr, fsetxattr, removexattr, lremovexattr, fremovexattr, and the *at forms. */
  xattrWrites: number[];
}

/** The ABIs a process of each Node.js architecture can make system calls through. */
const ARCHITECTURES: Record<string, ArchitectureCalls[]> = {
  x64: [
    // x86_64; its x32 calls come with the same audit arch and bit 30 set.
    {
      audit: 0xc000003e,
      ioctl: [16, 0x40000000 | 16, 0x40000000 | 514],
      xattrWrites: [188, 189, 190, 197, 198, 199, 463, 466].flatMap((nr) => [nr, 0x40000000 | nr]),
    },
    // i386 calls (int 0x80) a 64-bit process can still make.
    { audit: 0x40000003, ioctl: [54], xattrWrites: [226, 227, 228, 235, 236, 237, 463, 466] },
  ],
  arm64: [
    { audit: 0xc00000b7, ioctl: [29], xattrWrites: [5, 6, 7, 14, 15, 16, 463, 466] },
    { audit: 0x40000028, ioctl: [54], xattrWrites: [226, 227, 228, 235, 236, 237, 463, 466] },
  ],
};

type Instruction = [code: number, jumpIfTrue: number, jumpIfFalse: number, k: number];

/** Labels resolved to relative jumps once the program is laid out. */
type Pending =
  | { op: "load"; offset: number }
  | { op: "and"; mask: number }
  | { op: "jeq"; value: number; to: string }
  | { op: "return"; value: number }
  | { op: "label"; name: string };

function assemble(pending: readonly Pending[]): Instruction[] {
  const at = new Map<string, number>();
  let count = 0;
  for (const step of pending) {
    if (step.op === "label") at.set(step.name, count);
    else count += 1;
  }
  const program: Instruction[] = [];
  for (const step of pending) {
    const index = program.length;
    switch (step.op) {
      case "label":
        break;
      case "load":
        program.push([LOAD_WORD, 0, 0, step.offset]);
        break;
      case "and":
        program.push([AND, 0, 0, step.mask]);
        break;
      case "return":
        program.push([RETURN, 0, 0, step.value]);
        break;
      case "jeq": {
        const target = at.get(step.to);
        if (target === undefined) throw new Error(`seccomp: no label ${step.to}`);
        const jump = target - index - 1;
        if (jump < 0 || jump > 255) throw new Error("seccomp: jump out of range");
        program.push([JUMP_IF_EQUAL, jump, 0, step.value]);
        break;
      }
    }
  }
  return program;
}

/**
 * The filter for a Node.js architecture (`process.arch`) as bwrap's `--seccomp` reads it, or
 * undefined where no filter is known (the harness then checks trees by their content alone).
 */
export function statEvidenceFilter(arch: string): Buffer | undefined {
  const abis = ARCHITECTURES[arch];
  if (abis === undefined) return undefined;
  const allow: Pending = { op: "return", value: SECCOMP_RET_ALLOW };
  const steps: Pending[] = [{ op: "load", offset: ARCH }];
  abis.forEach((abi, i) => {
    steps.push({ op: "jeq", value: abi.audit, to: `abi-${i}` });
  });
  // A call through an ABI not listed (a binary translator's) is refused: the filter could not
  // tell what it is, and the probe then finds no sandbox starts with it, so none is used.
  steps.push({ op: "return", value: SECCOMP_RET_ERRNO | ENOSYS });
  abis.forEach((abi, i) => {
    steps.push({ op: "label", name: `abi-${i}` }, { op: "load", offset: NR });
    for (const nr of abi.ioctl) steps.push({ op: "jeq", value: nr >>> 0, to: "ioctl" });
    for (const nr of abi.xattrWrites)
      steps.push({ op: "jeq", value: nr >>> 0, to: "refuse-xattr" });
    for (const nr of REFUSED_CALLS) {
      steps.push({ op: "jeq", value: nr, to: "refuse-call" });
      // x32 makes the same calls with bit 30 set.
      if (abi.audit === 0xc000003e)
        steps.push({ op: "jeq", value: (0x40000000 | nr) >>> 0, to: "refuse-call" });
    }
    steps.push(allow);
  });
  steps.push(
    { op: "label", name: "ioctl" },
    { op: "load", offset: IOCTL_REQUEST_LOW },
    { op: "and", mask: 0xffff },
  );
  for (const request of REFUSED_IOCTLS)
    steps.push({ op: "jeq", value: request, to: "refuse-ioctl" });
  steps.push(
    allow,
    { op: "label", name: "refuse-ioctl" },
    { op: "return", value: SECCOMP_RET_ERRNO | ENOTTY },
    { op: "label", name: "refuse-xattr" },
    { op: "return", value: SECCOMP_RET_ERRNO | ENOTSUP },
    { op: "label", name: "refuse-call" },
    { op: "return", value: SECCOMP_RET_ERRNO | ENOSYS },
  );
  const program = assemble(steps);
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    bytes.writeUInt16LE(code, i * 8);
    bytes.writeUInt8(jt, i * 8 + 2);
    bytes.writeUInt8(jf, i * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return bytes;
}
