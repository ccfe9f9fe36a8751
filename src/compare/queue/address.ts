// The Redis a queue runs on, as the user gave it: checked, and shown without a password. Apart
// from the connections (./connection.ts), so reading `--queue` loads no Redis client.

export interface QueueAddress {
  /** The URL as given, for connecting. */
  url: string;
  /** The URL with any password masked, for messages. */
  shown: string;
}

export type ParsedAddress = { ok: true; address: QueueAddress } | { ok: false; message: string };

const ALLOWED =
  "redis://host:port[/db] or rediss://host:port[/db] (a password as redis://:password@host:port)";

/** Reads `--queue`'s value. */
export function parseQueueUrl(value: string): ParsedAddress {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, message: `${JSON.stringify(value)} is not a URL; expected ${ALLOWED}` };
  }
  // Masked on the parsed URL: `url.password` is percent-encoded, so it is not always the text
  // the user typed.
  const masked = new URL(value);
  if (masked.password !== "") masked.password = "***";
  const shown = url.password === "" ? value : masked.href;
  if (url.protocol !== "redis:" && url.protocol !== "rediss:")
    return { ok: false, message: `${shown} is not a Redis URL; expected ${ALLOWED}` };
  if (url.hostname === "")
    return { ok: false, message: `${shown} names no host; expected ${ALLOWED}` };
  const db = url.pathname.replace(/^\//, "");
  if (db !== "" && !/^\d{1,2}$/.test(db))
    return {
      ok: false,
      message: `${shown}: the database must be a number (0-15), not ${JSON.stringify(db)}`,
    };
  if (url.search !== "" || url.hash !== "")
    return { ok: false, message: `${shown}: no query or fragment is read; expected ${ALLOWED}` };
  return { ok: true, address: { url: value, shown } };
}
