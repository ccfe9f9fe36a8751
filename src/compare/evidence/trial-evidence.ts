// Reading what verdict.html shows of one trial from its folder, within bounds. The agent under
// test controls how big these files get (a 1 GB trace, 200 000 tool calls, a patch that rewrites
// a data file), so nothing here reads a whole file into memory unless it is small: the patch and
// the texts are read up to a prefix, the trace's first and last events are read from each end of
// the file, and permission-decisions.json is scanned in chunks keeping only the decisions shown.
// A missing or unreadable file reads as empty: the page shows whatever evidence is left.
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { validationDocumentSchema } from "../../artifacts/index.js";
import { type WriteLogEntry, writeLogSchema } from "../../forge/index.js";
import {
  clipDecision,
  type DecisionsExcerpt,
  describeTraceLine,
  type EvidenceLimits,
  type Excerpt,
  type FileClip,
  headShare,
  type TraceRow,
  type TrialCheck,
  type TrialDecision,
  type TrialDetails,
} from "../../report/index.js";

/** Bytes read per patch.diff line the page may show (long lines are clipped on the page anyway). */
const PATCH_BYTES_PER_LINE = 512;
/** Bytes read of response.txt and stderr.txt (the page shows 20 000 characters). */
const TEXT_BYTES = 80 * 1024;
/** A trace up to this size is read whole; a bigger one from both ends. */
const TRACE_HEAD_BYTES = 1024 * 1024;
const TRACE_TAIL_BYTES = 256 * 1024;
/** A validation file bigger than this is not the harness's; its checks are not shown. */
const VALIDATION_BYTES = 16 * 1024 * 1024;
/** Chunk size of the streaming scans. */
const CHUNK_BYTES = 1024 * 1024;
/** A decision longer than this as JSON is counted but not shown. */
const DECISION_BYTES = 256 * 1024;
const STRING_STOP = /["\\]/g;

async function openOrNull(path: string): Promise<FileHandle | null> {
  return open(path, "r").catch(() => null);
}

async function sizeOf(handle: FileHandle): Promise<number> {
  const info = await handle.stat();
  return info.isFile() ? info.size : 0;
}

async function readRange(handle: FileHandle, start: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, start + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** A file's text, or its first `maxBytes` (cut after the last whole line when `wholeLines`). */
async function readTextPrefix(
  path: string,
  maxBytes: number,
  wholeLines = false,
): Promise<{ text: string; clip?: FileClip }> {
  const handle = await openOrNull(path);
  if (handle === null) return { text: "" };
  try {
    const size = await sizeOf(handle);
    const bytes = await readRange(handle, 0, Math.min(size, maxBytes));
    if (size <= maxBytes) return { text: bytes.toString("utf8") };
    const lastNewline = wholeLines ? bytes.lastIndexOf(10) : -1;
    const kept = lastNewline >= 0 ? bytes.subarray(0, lastNewline + 1) : bytes;
    // A multi-byte character cut at the end decodes to U+FFFD, which is what a reader should see.
    return { text: kept.toString("utf8"), clip: { totalBytes: size, readBytes: kept.length } };
  } finally {
    await handle.close();
  }
}

/** Whether bytes [start, end) of `buffer` hold anything but spaces, tabs and carriage returns. */
function hasContent(buffer: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const byte = buffer[i];
    if (byte !== 32 && byte !== 9 && byte !== 13) return true;
  }
  return false;
}

interface LineSpan {
  /** Byte offsets in the buffer (end excludes the newline). */
  start: number;
  end: number;
}

/** The lines of `buffer` that end in a newline (a last line without one is left out). */
function wholeLineSpans(buffer: Buffer): LineSpan[] {
  const spans: LineSpan[] = [];
  let start = 0;
  for (let nl = buffer.indexOf(10, start); nl !== -1; nl = buffer.indexOf(10, start)) {
    spans.push({ start, end: nl });
    start = nl + 1;
  }
  return spans;
}

/** Newlines, and lines with content, in bytes [start, end) of the file: streamed, never held. */
async function countLines(
  handle: FileHandle,
  start: number,
  end: number,
): Promise<{ newlines: number; events: number }> {
  let newlines = 0;
  let events = 0;
  let pendingContent = false;
  for (let at = start; at < end; at += CHUNK_BYTES) {
    const chunk = await readRange(handle, at, Math.min(CHUNK_BYTES, end - at));
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      if (pendingContent || hasContent(chunk, from, nl)) events++;
      pendingContent = false;
      newlines++;
      from = nl + 1;
    }
    if (hasContent(chunk, from, chunk.length)) pendingContent = true;
    if (chunk.length === 0) break;
  }
  if (pendingContent) events++;
  return { newlines, events };
}

/**
 * trace.jsonl as the rows the page shows: the first `headShare(maxRows)` events and the last
 * ones, described (parsed) only when shown; events between are counted, not kept.
 */
async function readTraceExcerpt(path: string, maxRows: number): Promise<Excerpt<TraceRow>> {
  const empty: Excerpt<TraceRow> = { head: [], omitted: 0, tail: [] };
  const handle = await openOrNull(path);
  if (handle === null) return empty;
  try {
    const size = await sizeOf(handle);
    const headRows = headShare(maxRows);
    const tailRows = maxRows - headRows;
    if (size <= TRACE_HEAD_BYTES + TRACE_TAIL_BYTES) {
      const text = (await readRange(handle, 0, size)).toString("utf8");
      const lines = text
        .split("\n")
        .map((line, index) => ({ line, number: index + 1 }))
        .filter(({ line }) => line.trim() !== "");
      const describe = ({ line, number }: (typeof lines)[number]) =>
        describeTraceLine(line, number);
      const rows = (part: typeof lines) =>
        part.map(describe).filter((row): row is TraceRow => row !== null);
      if (lines.length <= maxRows) return { head: rows(lines), omitted: 0, tail: [] };
      return {
        head: rows(lines.slice(0, headRows)),
        omitted: lines.length - maxRows,
        tail: rows(lines.slice(lines.length - tailRows)),
      };
    }

    // The beginning: whole lines of the first chunk, up to the head's share of events.
    const headChunk = await readRange(handle, 0, TRACE_HEAD_BYTES);
    const head: TraceRow[] = [];
    let headEnd = 0;
    let headLines = 0;
    for (const span of wholeLineSpans(headChunk)) {
      if (head.length >= headRows) break;
      headEnd = span.end + 1;
      headLines++;
      if (!hasContent(headChunk, span.start, span.end)) continue;
      const row = describeTraceLine(headChunk.toString("utf8", span.start, span.end), headLines);
      if (row !== null) head.push(row);
    }

    // The end: whole lines of the last chunk (its first line may be cut, so it is skipped).
    const tailFrom = size - TRACE_TAIL_BYTES;
    const tailChunk = await readRange(handle, tailFrom - 1, TRACE_TAIL_BYTES + 1);
    const firstBreak = tailChunk.indexOf(10);
    const tailSpans: LineSpan[] = [];
    if (firstBreak !== -1) {
      let start = firstBreak + 1;
      for (let nl = tailChunk.indexOf(10, start); ; nl = tailChunk.indexOf(10, start)) {
        const end = nl === -1 ? tailChunk.length : nl;
        if (hasContent(tailChunk, start, end)) tailSpans.push({ start, end });
        if (nl === -1) break;
        start = nl + 1;
      }
    }
    const kept = tailRows > 0 ? tailSpans.slice(Math.max(0, tailSpans.length - tailRows)) : [];
    const tailStart = kept.length > 0 ? tailFrom - 1 + kept[0]!.start : size;

    const middle = await countLines(handle, headEnd, tailStart);
    // Every line before the first kept one is numbered, blank or not.
    let lineNumber = headLines + middle.newlines + 1;
    const tail: TraceRow[] = [];
    kept.forEach((span, k) => {
      const previous = kept[k - 1];
      if (previous !== undefined)
        for (let i = previous.start; i < span.start; i++) if (tailChunk[i] === 10) lineNumber++;
      const row = describeTraceLine(tailChunk.toString("utf8", span.start, span.end), lineNumber);
      if (row !== null) tail.push(row);
    });
    return { head, omitted: middle.events, tail };
  } finally {
    await handle.close();
  }
}

function readDecision(value: unknown): TrialDecision {
  const record = (typeof value === "object" && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  const text = (key: string) => (typeof record[key] === "string" ? (record[key] as string) : "");
  return clipDecision({
    seq: typeof record.seq === "number" ? record.seq : null,
    tool: text("tool"),
    decision: text("decision"),
    rule: text("rule"),
    reason: text("reason"),
    inputSummary: text("inputSummary"),
  });
}

function parseDecision(json: string | null, length: number): TrialDecision {
  if (json === null)
    return {
      seq: null,
      tool: "",
      decision: "",
      rule: "",
      reason: `(a decision of ${length} characters, too large to show)`,
      inputSummary: "",
    };
  try {
    return readDecision(JSON.parse(json));
  } catch {
    return readDecision(undefined);
  }
}

/**
 * The objects of the top-level `decisions` array of permission-decisions.json, one at a time,
 * from a chunked read: a small scanner tracks strings and nesting, so only one decision's text
 * is held at once (and none beyond DECISION_BYTES).
 */
async function scanDecisions(
  handle: FileHandle,
  size: number,
  onDecision: (json: string | null, length: number) => void,
): Promise<void> {
  const decoder = new TextDecoder("utf-8");
  let depth = 0;
  let inString = false;
  let escaped = false;
  let key = "";
  let lastKey = "";
  let inDecisions = false;
  let parts: string[] | null = null;
  let partsLength = 0;
  let oversized = false;
  for (let at = 0; at < size; at += CHUNK_BYTES) {
    const bytes = await readRange(handle, at, Math.min(CHUNK_BYTES, size - at));
    if (bytes.length === 0) break;
    const chunk = decoder.decode(bytes, { stream: at + bytes.length < size });
    let captureFrom = parts === null ? -1 : 0;
    const keep = (end: number) => {
      if (parts === null || captureFrom < 0) return;
      if (!oversized) {
        partsLength += end - captureFrom;
        if (partsLength > DECISION_BYTES) {
          oversized = true;
          parts = [];
        } else parts.push(chunk.slice(captureFrom, end));
      } else partsLength += end - captureFrom;
    };
    for (let i = 0; i < chunk.length; i++) {
      if (inString) {
        if (escaped) {
          escaped = false;
          continue;
        }
        // Jump to the next quote or backslash: most of the file is the inside of strings.
        STRING_STOP.lastIndex = i;
        const stop = STRING_STOP.exec(chunk);
        const stopAt = stop === null ? chunk.length : stop.index;
        if (depth === 1 && key.length < 64)
          key += chunk.slice(i, Math.min(stopAt, i + 64 - key.length));
        i = stopAt;
        if (stop === null) break;
        if (chunk.charCodeAt(i) === 92) escaped = true;
        else {
          inString = false;
          if (depth === 1) lastKey = key;
        }
        continue;
      }
      const c = chunk.charCodeAt(i);
      if (c === 34) {
        inString = true;
        key = "";
      } else if (c === 123 || c === 91) {
        if (c === 91 && depth === 1 && lastKey === "decisions") inDecisions = true;
        else if (c === 123 && depth === 2 && inDecisions) {
          parts = [];
          partsLength = 0;
          oversized = false;
          captureFrom = i;
        }
        depth++;
      } else if (c === 125 || c === 93) {
        depth--;
        if (depth === 2 && c === 125 && parts !== null) {
          keep(i + 1);
          onDecision(oversized ? null : parts.join(""), partsLength);
          parts = null;
          captureFrom = -1;
        } else if (depth === 1 && c === 93) inDecisions = false;
      }
    }
    keep(chunk.length);
  }
}

/** permission-decisions.json as the rows the page shows, with counts over the whole file. */
async function readDecisionsExcerpt(path: string, maxRows: number): Promise<DecisionsExcerpt> {
  const excerpt: DecisionsExcerpt = { head: [], omitted: 0, tail: [], total: 0, denied: 0 };
  const handle = await openOrNull(path);
  if (handle === null) return excerpt;
  const headRows = headShare(maxRows);
  const tailRows = maxRows - headRows;
  try {
    await scanDecisions(handle, await sizeOf(handle), (json, length) => {
      const decision = parseDecision(json, length);
      excerpt.total++;
      if (decision.decision === "deny") excerpt.denied++;
      if (excerpt.head.length < headRows) excerpt.head.push(decision);
      else if (tailRows > 0) {
        excerpt.tail.push(decision);
        if (excerpt.tail.length > tailRows) {
          excerpt.tail.shift();
          excerpt.omitted++;
        }
      } else excerpt.omitted++;
    });
  } finally {
    await handle.close();
  }
  return excerpt;
}

async function readChecks(path: string): Promise<{ checks: TrialCheck[]; clip?: FileClip }> {
  const { text, clip } = await readTextPrefix(path, VALIDATION_BYTES);
  if (clip !== undefined) return { checks: [], clip: { ...clip, readBytes: 0 } };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { checks: [] };
  }
  const validation = validationDocumentSchema.safeParse(json);
  if (!validation.success) return { checks: [] };
  return {
    checks: validation.data.grades.flatMap((g) =>
      g.checks.map((c) => ({
        grader: g.grader,
        id: c.id,
        passed: c.passed,
        detail: c.detail,
        ...(c.evidence === undefined ? {} : { evidence: c.evidence }),
      })),
    ),
  };
}

/** The forge write log shown per trial: its first entries, read from at most this many bytes. */
const WRITE_LOG_BYTES = 256 * 1024;
const WRITE_LOG_ROWS = 50;

/** A forge trial's write log (bounded), and which state files it has; undefined for other trials. */
async function readForgeEvidence(trialDir: string): Promise<TrialDetails["forge"]> {
  const exists = async (name: string) => {
    const handle = await openOrNull(join(trialDir, name));
    await handle?.close();
    return handle !== null;
  };
  const [before, after] = await Promise.all([
    exists("forge-before.json"),
    exists("forge-after.json"),
  ]);
  if (!before) return undefined;
  const { text, clip } = await readTextPrefix(
    join(trialDir, "forge-write-log.json"),
    WRITE_LOG_BYTES,
  );
  let entries: WriteLogEntry[] = [];
  if (clip === undefined)
    try {
      const parsed = writeLogSchema.safeParse(JSON.parse(text));
      if (parsed.success) entries = parsed.data;
    } catch {
      // an unreadable log shows as empty; the file is linked
    }
  return {
    hasAfter: after,
    writes: entries.slice(0, WRITE_LOG_ROWS).map((e) => ({
      method: e.method,
      path: e.path,
      actor: e.actor,
      status: e.status,
    })),
    totalWrites: clip === undefined ? entries.length : null,
  };
}

/** One trial's evidence for the page, within `limits` (from `evidenceLimits`). */
export async function readTrialEvidence(
  trialDir: string,
  limits: EvidenceLimits,
  validationFile = "validation.json",
): Promise<TrialDetails> {
  const [patch, response, stderr, trace, decisions, checks, forge] = await Promise.all([
    readTextPrefix(join(trialDir, "patch.diff"), limits.diff.maxLines * PATCH_BYTES_PER_LINE, true),
    readTextPrefix(join(trialDir, "response.txt"), TEXT_BYTES),
    readTextPrefix(join(trialDir, "stderr.txt"), TEXT_BYTES),
    readTraceExcerpt(join(trialDir, "trace.jsonl"), limits.traceRows),
    readDecisionsExcerpt(join(trialDir, "permission-decisions.json"), limits.decisionRows),
    readChecks(join(trialDir, validationFile)),
    readForgeEvidence(trialDir),
  ]);
  const clips: NonNullable<TrialDetails["clips"]> = {};
  if (patch.clip) clips.patch = patch.clip;
  if (response.clip) clips.response = response.clip;
  if (stderr.clip) clips.stderr = stderr.clip;
  if (checks.clip) clips.validation = checks.clip;
  return {
    patch: patch.text,
    response: response.text,
    stderr: stderr.text,
    trace,
    decisions,
    checks: checks.checks,
    ...(forge === undefined ? {} : { forge }),
    ...(Object.keys(clips).length > 0 ? { clips } : {}),
  };
}
