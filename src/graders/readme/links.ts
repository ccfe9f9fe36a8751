import { resolveInsideTrial } from "../trial-paths.js";
import type { ReadmeLink, ReadmeLinkKind } from "./markdown.js";

export type LinkTarget =
  | { kind: "skipped"; reason: string }
  | { kind: "remote" }
  | { kind: "local"; path: string }
  | { kind: "invalid"; reason: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

/** Pure: what a link target is, before touching the file system. */
export function classifyLinkTarget(url: string): LinkTarget {
  const trimmed = url.trim();
  if (trimmed === "") return { kind: "invalid", reason: "empty link target" };
  if (trimmed.startsWith("#")) return { kind: "skipped", reason: "anchor" };
  if (trimmed.startsWith("//")) return { kind: "remote" };
  const scheme = SCHEME.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    if (scheme === "http" || scheme === "https") return { kind: "remote" };
    if (scheme === "mailto" || scheme === "data") return { kind: "skipped", reason: scheme };
    return { kind: "invalid", reason: `unsupported scheme ${scheme}:` };
  }
  const withoutSuffix = trimmed.replace(/[?#].*$/s, "");
  if (withoutSuffix === "") return { kind: "skipped", reason: "query or anchor only" };
  let decoded: string;
  try {
    decoded = decodeURIComponent(withoutSuffix);
  } catch {
    return { kind: "invalid", reason: "malformed percent-encoding" };
  }
  if (decoded.includes("\0")) return { kind: "invalid", reason: "NUL in path" };
  // GitHub reads a leading slash as the repository root, not the file-system root.
  return { kind: "local", path: decoded.replace(/^\/+/, "") || "." };
}

interface LinkFinding {
  kind: ReadmeLinkKind;
  url: string;
  line: number;
  problem: string;
}

export interface LinksEvidence {
  checked: number;
  skipped: number;
  remote: number;
  failures: LinkFinding[];
}

/**
 * Local links must resolve to something inside the repository (after symlinks);
 * remote links fail only when the contract forbids them; anchors, mailto: and data: are
 * skipped. No network access ever happens here.
 */
export async function checkLinks(
  links: readonly ReadmeLink[],
  realRoot: string,
  forbidRemoteLinks: boolean,
): Promise<LinksEvidence> {
  const evidence: LinksEvidence = { checked: 0, skipped: 0, remote: 0, failures: [] };
  for (const link of links) {
    const target = classifyLinkTarget(link.url);
    const fail = (problem: string) =>
      evidence.failures.push({ kind: link.kind, url: link.url, line: link.line, problem });
    switch (target.kind) {
      case "skipped":
        evidence.skipped += 1;
        break;
      case "invalid":
        evidence.checked += 1;
        fail(target.reason);
        break;
      case "remote":
        evidence.remote += 1;
        if (forbidRemoteLinks) fail("remote link (the contract forbids remote links)");
        break;
      case "local": {
        evidence.checked += 1;
        const resolved = await resolveInsideTrial(realRoot, target.path);
        if (!resolved.ok) fail(resolved.message);
        break;
      }
    }
  }
  return evidence;
}
