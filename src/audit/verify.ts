import { type AuditEntry, entryHash, FIRST_PREV } from "./entry.js";

/** One stored entry as verify reads it: where it is (`line 7`, `row seq 7`) and its text. */
export interface StoredText {
  place: string;
  text: string;
}

/** What `audit verify` found: the chain whole, or the first entry that breaks it. */
export type VerifyResult =
  | { ok: true; entries: number; last: { seq: number; at: string; hash: string } | null }
  | { ok: false; entries: number; problem: string };

/** A listing read with its chain checked (`giftjobs audit`): the entries, and the check. */
export interface VerifiedListing {
  /** The entries the filter picks, oldest first, up to the first break when there is one. */
  entries: AuditEntry[];
  check: VerifyResult;
}

/** The newest entry as the store remembers it apart from the entries (a file's head). */
export interface TrailHead {
  seq: number;
  hash: string;
}

/**
 * Walks the entries in stored order and checks each against its own hash, its number and the
 * hash of the one before (docs/architecture/audit.md, "Verify"). The first break is named: an
 * entry changed (its text no longer matches its hash, or the next one's `prev`), removed (a
 * number missing) or reordered (a number out of place). `head`, when given, is what the store
 * remembers of its newest entry: the last ones removed, or the last one changed, show there.
 */
export async function verifyChain(
  stored: AsyncIterable<StoredText> | Iterable<StoredText>,
  head?: TrailHead,
  /** Told of each entry found whole so far, in order: a listing that verifies as it reads. */
  onEntry?: (entry: AuditEntry) => void,
): Promise<VerifyResult> {
  let previous: AuditEntry | undefined;
  let previousPlace = "";
  let count = 0;
  const seen = new Map<number, string>();
  const fail = (problem: string): VerifyResult => ({ ok: false, entries: count, problem });
  for await (const { place, text } of stored) {
    const entry = parseEntry(text);
    if (!entry) return fail(`${place}: not an audit entry (changed)`);
    const expected = (previous?.seq ?? 0) + 1;
    if (entryHash(entry) !== entry.hash)
      return fail(`entry ${entry.seq} (${place}) changed: its content does not match its hash`);
    if (entry.seq !== expected) return fail(outOfPlace(entry, place, expected, seen));
    const prevHash = previous?.hash ?? FIRST_PREV;
    if (entry.prev !== prevHash)
      return fail(
        previous
          ? `entry ${previous.seq} (${previousPlace}) changed: entry ${entry.seq} (${place}) was chained to another`
          : `entry 1 (${place}) changed: the first entry chains to nothing`,
      );
    seen.set(entry.seq, place);
    onEntry?.(entry);
    previous = entry;
    previousPlace = place;
    count += 1;
  }
  const headProblem = head && checkHead(previous, previousPlace, head);
  if (headProblem) return fail(headProblem);
  return {
    ok: true,
    entries: count,
    last: previous ? { seq: previous.seq, at: previous.at, hash: previous.hash } : null,
  };
}

function outOfPlace(
  entry: AuditEntry,
  place: string,
  expected: number,
  seen: Map<number, string>,
): string {
  if (entry.seq < expected) {
    const first = seen.get(entry.seq);
    return first
      ? `entry ${entry.seq} (${place}) is a copy of the one at ${first}`
      : `entry ${entry.seq} (${place}) is out of order: entry ${expected} was expected`;
  }
  const missing =
    entry.seq === expected + 1 ? `entry ${expected}` : `entries ${expected} to ${entry.seq - 1}`;
  return `${missing} removed or moved: ${place} holds entry ${entry.seq}`;
}

function checkHead(
  last: AuditEntry | undefined,
  place: string,
  head: TrailHead,
): string | undefined {
  const seq = last?.seq ?? 0;
  if (seq < head.seq) {
    const gone = seq + 1 === head.seq ? `entry ${head.seq}` : `entries ${seq + 1} to ${head.seq}`;
    return `${gone} removed: the trail ends at entry ${seq}, its head says ${head.seq}`;
  }
  if (seq === head.seq && last && last.hash !== head.hash)
    return `entry ${seq} (${place}) changed: it does not match the trail's head`;
  return undefined;
}

function parseEntry(text: string): AuditEntry | undefined {
  try {
    const value = JSON.parse(text) as AuditEntry;
    if (typeof value !== "object" || value === null) return undefined;
    if (!Number.isSafeInteger(value.seq) || typeof value.hash !== "string") return undefined;
    return value;
  } catch {
    return undefined;
  }
}

/** The entry stored as `text`, or undefined when it is none (verify names those). */
export function readEntry(text: string): AuditEntry | undefined {
  return parseEntry(text);
}
