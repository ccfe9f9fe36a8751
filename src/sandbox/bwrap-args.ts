// The bubblewrap command line for one contained command (pure: the host's layout is an input).
// The sandbox sees the operating system read-only, a handful of harmless /etc files, fresh
// /proc, /dev and /tmp, and exactly the directories the caller names; every namespace is new
// (no network but its own loopback, no other process, no host IPC) and no capability is kept.
import { posix } from "node:path";
import { isPathInside } from "../shared/index.js";

/** A top-level system entry of the host: a directory bound read-only, or a symlink recreated. */
export interface SystemEntry {
  path: string;
  kind: "dir" | "symlink";
  /** The link text, for a symlink (`usr/bin` for a merged-/usr `/bin`). */
  target?: string;
}

/** What the sandbox mirrors of the host, found once per process (see `inspectHost`). */
export interface HostLayout {
  /** `/usr`, `/bin`, `/lib`, … as they exist on the host. */
  system: SystemEntry[];
  /**
   * The Node.js installation the harness runs on, when it lies outside the system directories
   * (nvm, a tarball under /opt): bound read-only so `node` and `npm` work inside.
   */
  nodePrefix?: string;
  /** The host's PATH, filtered inside to the directories the sandbox can see. */
  path: string;
}

/** Files and directories of /etc a program needs to start and that hold no secret. */
const ETC_ENTRIES = [
  "/etc/passwd",
  "/etc/group",
  "/etc/hosts",
  "/etc/nsswitch.conf",
  "/etc/host.conf",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  "/etc/ssl/certs",
  "/etc/ssl/openssl.cnf",
  "/etc/ca-certificates",
  "/etc/pki/tls/certs",
  "/etc/pki/ca-trust",
  "/etc/localtime",
  "/etc/timezone",
  "/etc/mime.types",
  "/etc/services",
  "/etc/protocols",
  "/etc/os-release",
  "/etc/debian_version",
] as const;

/** HOME inside the sandbox: empty, private, on the size-capped /tmp. */
export const SANDBOX_HOME = "/tmp/home";
export const SANDBOX_TMP = "/tmp";

export interface BwrapArgsInput {
  layout: HostLayout;
  cwd: string;
  writable: readonly string[];
  readOnly: readonly string[];
  protect: readonly string[];
  /**
   * Host paths no command may see even when they lie inside a directory the sandbox binds
   * (an --out folder or the harness's own install under /usr): covered with an empty tmpfs.
   */
  hidden: readonly string[];
  /**
   * Of `hidden`, the ones that are files: covered with the host's /dev/null, which the sandbox
   * cannot open (its binds are nodev), since a tmpfs covers only a directory.
   */
  hiddenFiles?: readonly string[];
  tmpBytes: number;
  binds?: readonly { source: string; target: string; writable?: boolean }[];
  /** Keeps CAP_SETFCAP for root, which a nested sandbox needs to map its user namespace. */
  allowNestedSandbox?: boolean;
  /** Whether the harness runs as root (only then is a capability needed for nesting). */
  asRoot?: boolean;
}

/** Directories visible inside (read-only or writable), for deciding what PATH keeps. */
function visibleRoots(input: BwrapArgsInput): string[] {
  return [
    ...input.layout.system.map((entry) => entry.path),
    ...(input.layout.nodePrefix ? [input.layout.nodePrefix] : []),
    ...input.readOnly,
    ...input.writable,
  ];
}

/** PATH inside: the host's entries the sandbox can see, in the host's order. */
export function sandboxPath(input: BwrapArgsInput): string {
  const roots = visibleRoots(input);
  const kept = input.layout.path
    .split(":")
    .filter((dir) => posix.isAbsolute(dir) && roots.some((root) => isPathInside(root, dir)));
  const unique = [...new Set(kept)];
  return unique.length > 0 ? unique.join(":") : "/usr/local/bin:/usr/bin:/bin";
}

/** The bwrap options (everything before `--` and the command). */
export function bwrapArgs(input: BwrapArgsInput): string[] {
  const args = [
    // New user, pid, network, ipc, uts and cgroup namespaces: the command sees only its own
    // processes, only its own loopback interface, and cannot signal or trace anything outside.
    "--unshare-all",
    // Every process of the sandbox dies with bwrap, and bwrap with the harness.
    "--die-with-parent",
    // No controlling terminal: no TIOCSTI keystrokes pushed into the harness's terminal.
    "--new-session",
    // Without this, root inside the user namespace could remount the read-only binds writable.
    "--cap-drop",
    "ALL",
    // A nested sandbox maps root in a user namespace of its own, which the kernel allows root
    // only with CAP_SETFCAP (no capability to mount, so the read-only binds stay read-only).
    ...(input.allowNestedSandbox && input.asRoot ? ["--cap-add", "CAP_SETFCAP"] : []),
    "--hostname",
    "sandbox",
  ];
  for (const entry of input.layout.system) {
    if (entry.kind === "symlink" && entry.target !== undefined)
      args.push("--symlink", entry.target, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  for (const file of ETC_ENTRIES) args.push("--ro-bind-try", file, file);
  args.push("--proc", "/proc", "--dev", "/dev");
  args.push("--size", String(input.tmpBytes), "--tmpfs", "/dev/shm");
  args.push("--size", String(input.tmpBytes), "--tmpfs", SANDBOX_TMP, "--dir", SANDBOX_HOME);
  if (input.layout.nodePrefix)
    args.push("--ro-bind", input.layout.nodePrefix, input.layout.nodePrefix);
  // Masks come after what is mirrored whole (the system, the Node.js install, which may hold the
  // harness itself or npm's global config) and before the caller's binds, so a bind inside a
  // masked path is still visible.
  const mirrored = [
    ...input.layout.system.map((entry) => entry.path),
    ...(input.layout.nodePrefix ? [input.layout.nodePrefix] : []),
  ];
  const files = new Set(input.hiddenFiles ?? []);
  for (const path of input.hidden) {
    if (!mirrored.some((root) => root !== path && isPathInside(root, path))) continue;
    if (files.has(path)) args.push("--ro-bind", "/dev/null", path);
    else args.push("--tmpfs", path);
  }
  for (const dir of input.readOnly) args.push("--ro-bind", dir, dir);
  for (const dir of input.writable) args.push("--bind", dir, dir);
  for (const path of input.protect) args.push("--ro-bind-try", path, path);
  for (const bind of input.binds ?? [])
    args.push(bind.writable ? "--bind" : "--ro-bind", bind.source, bind.target);
  args.push("--chdir", input.cwd);
  return args;
}
