// Request targets as the harness's proxies accept them (pure): one spelling per resource, so a
// rule that checks a path checks what the server behind the proxy will resolve.

/**
 * Why a request target is not a plain origin-form path in normal form, or null. The proxies
 * forward a path only as it was checked, so nothing a server in front of the API might resolve
 * another way passes: no absolute form (`GET http://host/…`), no dot segments, no empty segments,
 * no backslash, `;`, NUL or control characters, and no percent-encoded dot, slash, backslash, NUL
 * or percent sign at any depth (`%2e`, `%2f`, `%5c`, `%00`, `%252e`).
 */
export function requestTargetProblem(target: string): string | null {
  if (!target.startsWith("/"))
    return "only a path is accepted as the request target (no absolute URL or authority)";
  const question = target.indexOf("?");
  const path = question === -1 ? target : target.slice(0, question);
  const query = question === -1 ? "" : target.slice(question + 1);
  if (/[\u0000-\u0020\u007f\\;]/.test(path) || /[\u0000-\u001f\u007f]/.test(query))
    return "the path holds a backslash, a semicolon, a space or a control character";
  if (/%(?![0-9a-fA-F]{2})/.test(path)) return "the path holds a stray %";
  if (/%(2e|2f|5c|25|00)/i.test(path) || /%(25|00)/i.test(query))
    return "the path holds a percent-encoded dot, slash, backslash, NUL or percent sign";
  const segments = path.split("/").slice(1);
  if (segments.some((s, i) => s === "." || s === ".." || (s === "" && i < segments.length - 1)))
    return "the path holds a dot segment or an empty segment";
  return null;
}
