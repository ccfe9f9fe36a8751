// Turning untrusted text into HTML: everything the agent could influence (its report, its
// patch, file names, trace events, grader output) passes through `esc`, and links through `href`.

export function esc(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/**
 * A relative link to a folder or file of the run: each path segment is percent-encoded, so a
 * task or variant id can neither end the attribute nor become a `javascript:` URL or a fragment.
 */
export function href(path: string): string {
  const encoded = path
    .split("/")
    .map((segment) => encodeURIComponent(segment))
    .join("/");
  return esc(encoded);
}
