// Git's index file (`.git/index`, formats 2 and 3 with SHA-1 ids), read and written for one
// purpose: giving the entries of an index git wrote the stat data of a copy the harness made, so
// that git trusts the copy's files by their stat data instead of hashing every one of them
// again (what `git update-index --refresh` would do). Entry ids, modes, flags and extensions are
// kept as git wrote them. The format: git's Documentation/gitformat-index.txt.
import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";

const SIGNATURE = "DIRC";
const HEADER_BYTES = 12;
const SHA1_BYTES = 20;
/** ctime, mtime (seconds and nanoseconds), dev, ino, mode, uid, gid, size: 32 bits each. */
const STAT_BYTES = 40;
const FLAGS_OFFSET = STAT_BYTES + SHA1_BYTES;
const EXTENDED_FLAG = 0x4000;
const NAME_LENGTH_MASK = 0xfff;
const MODE_OFFSET = 24;
const SIZE_OFFSET = 36;

/** An index git wrote, with where each entry's stat data lie. */
export interface IndexLayout {
  readonly bytes: Buffer;
  /** Each entry's path (as git stores it, `/`-separated) and the offset of its stat data. */
  readonly entries: ReadonlyArray<{ readonly path: string; readonly offset: number }>;
}

function malformed(why: string): Error {
  return new Error(`the baseline's index cannot be read: ${why}`);
}

/** Reads where each entry of `bytes` lies; throws when it is not an index this module writes. */
export function readIndexLayout(bytes: Buffer): IndexLayout {
  if (bytes.length < HEADER_BYTES + SHA1_BYTES || bytes.toString("latin1", 0, 4) !== SIGNATURE)
    throw malformed("no DIRC signature");
  const version = bytes.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw malformed(`format ${version}, not 2 or 3`);
  const body = bytes.length - SHA1_BYTES;
  const checksum = createHash("sha1").update(bytes.subarray(0, body)).digest();
  if (!checksum.equals(bytes.subarray(body))) throw malformed("its checksum does not match");
  const count = bytes.readUInt32BE(8);
  const entries: { path: string; offset: number }[] = [];
  let offset = HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (offset + FLAGS_OFFSET + 2 > body) throw malformed(`entry ${i} runs past the end`);
    const flags = bytes.readUInt16BE(offset + FLAGS_OFFSET);
    const nameStart = offset + FLAGS_OFFSET + (flags & EXTENDED_FLAG ? 4 : 2);
    const nameEnd = bytes.indexOf(0, nameStart);
    if (nameEnd === -1 || nameEnd >= body) throw malformed(`entry ${i} has no end`);
    const nameLength = flags & NAME_LENGTH_MASK;
    if (nameLength !== NAME_LENGTH_MASK && nameLength !== nameEnd - nameStart)
      throw malformed(`entry ${i}'s name length does not match its name`);
    entries.push({ path: bytes.toString("utf8", nameStart, nameEnd), offset });
    // Names are padded with 1 to 8 NULs to a multiple of 8 bytes from the entry's start.
    offset += (nameStart - offset + (nameEnd - nameStart) + 8) & ~7;
  }
  if (offset > body) throw malformed("its entries run past the end");
  return { bytes, entries };
}

const LOW_32 = 0xffff_ffffn;
const BILLION = 1_000_000_000n;

/**
 * The index with each entry's stat data taken from `statOf(path)` (an entry without any keeps
 * git's), and a new checksum. Git keeps only seconds of a time (Debian's git compares no
 * nanoseconds), so an entry whose ctime falls in the second `indexSecond` of the index file
 * itself or later, while its mtime does not, gets size 0, as git's own "racily clean" entries
 * do: git then reads its content instead of trusting stat data that a change within that same
 * second would leave alone. Entries whose mtime falls in that second git already reads itself.
 * With `indexSecond` unknown, every entry gets size 0.
 */
export function indexWithStats(
  layout: IndexLayout,
  statOf: (path: string) => BigIntStats | undefined,
  indexSecond: bigint | undefined,
): Buffer {
  const bytes = Buffer.from(layout.bytes);
  for (const entry of layout.entries) {
    const info = statOf(entry.path);
    if (info === undefined) continue;
    const at = entry.offset;
    const ctimeSecond = info.ctimeNs / BILLION;
    const mtimeSecond = info.mtimeNs / BILLION;
    const fields = [
      ctimeSecond,
      info.ctimeNs % BILLION,
      mtimeSecond,
      info.mtimeNs % BILLION,
      info.dev,
      info.ino,
    ];
    fields.forEach((value, i) => {
      bytes.writeUInt32BE(Number(value & LOW_32), at + i * 4);
    });
    // The mode stays git's (100644 or 100755), which git compares with the file's own.
    bytes.writeUInt32BE(Number(info.uid & LOW_32), at + MODE_OFFSET + 4);
    bytes.writeUInt32BE(Number(info.gid & LOW_32), at + MODE_OFFSET + 8);
    const smudged =
      indexSecond === undefined || (ctimeSecond >= indexSecond && mtimeSecond < indexSecond);
    bytes.writeUInt32BE(smudged ? 0 : Number(info.size & LOW_32), at + SIZE_OFFSET);
  }
  const body = bytes.length - SHA1_BYTES;
  createHash("sha1").update(bytes.subarray(0, body)).digest().copy(bytes, body);
  return bytes;
}
