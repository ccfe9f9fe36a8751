/**
 * Replaces every occurrence of each `from` with its `to`, longest `from` first, so a path and a
 * longer spelling of it (a realpath containing it, say) never leave fragments. Empty `from`s
 * are ignored.
 */
export function replaceLongestFirst(
  text: string,
  replacements: Iterable<readonly [from: string, to: string]>,
): string {
  const ordered = [...replacements].filter(([from]) => from.length > 0);
  ordered.sort((a, b) => b[0].length - a[0].length);
  let out = text;
  for (const [from, to] of ordered) out = out.split(from).join(to);
  return out;
}

/** `text` with every regular-expression metacharacter escaped, to match it literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `'…'` for sh: the text verbatim, a single quote written as '\''. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}
