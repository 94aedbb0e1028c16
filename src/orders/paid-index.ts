import { hash } from "node:crypto";
import { readSync, writeSync } from "node:fs";
import { openPrivateTempFile, type PrivateTempFile } from "../private-temp-file.js";
import { DigestTable } from "./digest-table.js";
import { CONTENT_IDENTITY, REF_IDENTITY } from "./identity.js";

/**
 * A row some campaign recorded, as the paid memory keeps it (docs/architecture/repeats.md): who
 * it pays what (its fingerprint), and where to find it again: its campaign, its identity in that
 * campaign's ledger, its file line, its currency and face value in minor units.
 */
export interface PaidEntry {
  campaign: string;
  fingerprint: string;
  identity: string;
  line: number;
  currency: string;
  /** Face value in the currency's minor units (a whole number, as text). */
  face: string;
  /** When it was recorded, ms since 1970. */
  at: number;
}

/** A paid memory file's row: [fingerprint, identity, line, currency, face units]. */
export type PaidRecord = readonly [string, string, number, string, string];

/**
 * An entry's record in the index's file, 8-byte aligned (its offset / 8 fits a table's value):
 * the older entry of its key (offset / 8 + 1, 0 for none), its batch, line, currency (a name),
 * the length of its text, the fingerprint's 32-byte digest, then the text: the identity (packed
 * when a digest's) and ` face`.
 */
const PREV = 0;
const BATCH = 4;
const LINE = 8;
const CURRENCY = 12;
const TEXT_LENGTH = 16;
const DIGEST = 20;
const TEXT = 52;
const ALIGN = 8;
/** Records are written through a buffer of this size; a bigger record is written alone. */
const WRITE_BYTES = 1 << 20;
/**
 * A read takes records no further apart than this in one `pread`, up to READ_BYTES at once: the
 * entries of a file imported again lie in the order of its rows, so a batch's are one read.
 */
const GAP_BYTES = 4096;
const READ_BYTES = 1 << 18;
/** Bytes read past a run's last record's start: most records are shorter (about 96 bytes). */
const RECORD_GUESS = 256;
/** No older entry of the same key. */
const NONE = 0;
/** The most campaign and currency names an index tells apart (a record's Uint16 currency). */
const MAX_NAMES = 0xffff;

/** How an entry's identity is held (identity.ts): a digest's 32 bytes, or the text itself. */
const TEXT_TAG = 0;
const REF_TAG = 1;
const CONTENT_TAG = 2;
const SPACE = 0x20;

/**
 * The other campaigns' paid memory as a file lookup holds it (docs/architecture/repeats.md, "The
 * check"): every entry of the window, written to a private temporary file (about 96 bytes an
 * entry), with only a table of their fingerprints' digests in memory (DigestTable of 8-byte
 * keys, made for the count expected: 16 bytes an entry). Held in typed arrays, the entries took
 * 86 MB of RSS per million, the most of what a repeat of a million rows held beyond a first
 * import; in the file they are the OS's cache's, which the system takes back when it needs it.
 *
 * An entry becomes a PaidEntry again only when a row of the import asks for its fingerprint, a
 * batch at a time: the batch's records are read in order of their place in the file, records
 * close together in one read. Reads are synchronous: from the OS's cache a read takes a few
 * microseconds, less than handing it to the thread pool would.
 *
 * The entries of one fingerprint are chained, newest first, and given back in the order they
 * were added. Entries added together (a line of the file) share their campaign and time, held
 * once per batch in memory.
 */
export class PaidIndex {
  private readonly heads: DigestTable;
  private readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  /** Per batch of entries added with one campaign and time: that campaign (a name) and time. */
  private readonly batchCampaign: number[] = [];
  private readonly batchAt: number[] = [];
  private count = 0;
  /** Bytes written to the file, and bytes waiting in `pending` after them. */
  private written = 0;
  private readonly pending = Buffer.alloc(WRITE_BYTES);
  private pendingLength = 0;
  private readonly scratch = Buffer.allocUnsafe(READ_BYTES + RECORD_GUESS);
  private closed = false;

  private constructor(
    private readonly file: PrivateTempFile,
    expected: number | undefined,
  ) {
    // Keyed by 8 bytes of each digest: a record read is compared in full (find), so two
    // fingerprints sharing them share a chain and are still told apart.
    this.heads = new DigestTable(expected === undefined ? undefined : Math.ceil(expected), 8);
  }

  /**
   * An empty index, its file under `parent` (TMPDIR by default). `expected`: about how many
   * entries will be added (its table made that size at once, none wasted growing).
   */
  static async create(expected?: number, parent?: string): Promise<PaidIndex> {
    const file = await openPrivateTempFile(
      "the paid memory's lookup file",
      "about 100 bytes a remembered row",
      parent,
    );
    return new PaidIndex(file, expected);
  }

  get size(): number {
    return this.count;
  }

  /** Adds one entry of `campaign`, recorded at `at` (ms). */
  add(campaign: string, at: number, [fingerprint, identity, line, currency, face]: PaidRecord) {
    const digest = digestOf(fingerprint);
    const at8 = (this.written + this.pendingLength) / ALIGN;
    const record = this.record(2 + Buffer.byteLength(identity) + face.length);
    const older = this.heads.replace(digest, at8) ?? -1;
    record.writeUInt32LE(older + 1, PREV);
    record.writeUInt32LE(this.batchOf(this.nameOf(campaign), at), BATCH);
    record.writeUInt32LE(line, LINE);
    record.writeUInt16LE(this.nameOf(currency), CURRENCY);
    digest.copy(record, DIGEST, 0, 32);
    const length = writeText(record, TEXT, identity, face) - TEXT;
    record.writeUInt32LE(length, TEXT_LENGTH);
    this.commit(TEXT + length, record);
    this.count += 1;
  }

  /** For each fingerprint (undefined: a row naming nobody), its entries, oldest added first. */
  find(fingerprints: readonly (string | undefined)[]): PaidEntry[][] {
    const found = fingerprints.map((): PaidEntry[] => []);
    // A first campaign's import asks for each of its rows: nothing to read.
    if (this.count === 0) return found;
    this.flush();
    const digests = fingerprints.map((f) => (f === undefined ? undefined : digestOf(f)));
    let wanted: Wanted[] = [];
    digests.forEach((digest, row) => {
      const head = digest && this.heads.get(digest);
      if (head !== undefined) wanted.push({ row, at8: head });
    });
    // Each round reads the records asked for and asks for the older ones of their keys.
    while (wanted.length > 0) {
      const older: Wanted[] = [];
      this.read(wanted, (want, record, start) => {
        const digest = digests[want.row]!;
        if (digest.compare(record, start + DIGEST, start + DIGEST + 32, 0, 32) === 0)
          found[want.row]!.push(this.entry(record, start, fingerprints[want.row]!));
        const prev = record.readUInt32LE(start + PREV);
        if (prev !== NONE) older.push({ row: want.row, at8: prev - 1 });
      });
      wanted = older;
    }
    for (const entries of found) entries.reverse();
    return found;
  }

  /** Closes and so removes its file; the index answers nothing after. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.file.close();
  }

  /** Room for a record of TEXT + `textBytes` at most, in `pending` (or a buffer of its own). */
  private record(textBytes: number): Buffer {
    const bytes = TEXT + textBytes + ALIGN;
    if (bytes > WRITE_BYTES) {
      this.flush();
      return Buffer.alloc(bytes);
    }
    if (this.pendingLength + bytes > WRITE_BYTES) this.flush();
    return this.pending.subarray(this.pendingLength);
  }

  /** Takes the record of `bytes` made in `record` (see record()), padded to ALIGN. */
  private commit(bytes: number, record: Buffer): void {
    const padded = Math.ceil(bytes / ALIGN) * ALIGN;
    if (record.buffer === this.pending.buffer) {
      this.pendingLength += padded;
      return;
    }
    this.writeAll(record.subarray(0, padded));
  }

  private flush(): void {
    if (this.pendingLength === 0) return;
    const length = this.pendingLength;
    this.pendingLength = 0;
    this.writeAll(this.pending.subarray(0, length));
  }

  private writeAll(bytes: Buffer): void {
    const fd = this.fd();
    for (let done = 0; done < bytes.length; )
      done += writeSync(fd, bytes, done, bytes.length - done, this.written + done);
    this.written += bytes.length;
  }

  /**
   * Reads the records `wanted` asks for, in order of their place in the file, and hands each to
   * `take` with the buffer holding it and where it starts there.
   */
  private read(wanted: Wanted[], take: (want: Wanted, record: Buffer, start: number) => void) {
    wanted.sort((a, b) => a.at8 - b.at8);
    for (let first = 0; first < wanted.length; ) {
      const from = wanted[first]!.at8 * ALIGN;
      let last = first;
      while (last + 1 < wanted.length) {
        const next = wanted[last + 1]!.at8 * ALIGN;
        if (next - wanted[last]!.at8 * ALIGN > GAP_BYTES || next - from > READ_BYTES) break;
        last += 1;
      }
      const end = this.readAt(this.scratch, from, wanted[last]!.at8 * ALIGN + RECORD_GUESS - from);
      for (let i = first; i <= last; i++) {
        const start = wanted[i]!.at8 * ALIGN - from;
        if (
          start + TEXT <= end &&
          start + TEXT + this.scratch.readUInt32LE(start + TEXT_LENGTH) <= end
        )
          take(wanted[i]!, this.scratch, start);
        else take(wanted[i]!, this.recordAt(wanted[i]!.at8 * ALIGN), 0);
      }
      first = last + 1;
    }
  }

  /** One record read alone: one longer than the read that found its start. */
  private recordAt(offset: number): Buffer {
    const head = Buffer.alloc(TEXT);
    this.readAt(head, offset, TEXT);
    const record = Buffer.alloc(TEXT + head.readUInt32LE(TEXT_LENGTH));
    this.readAt(record, offset, record.length);
    return record;
  }

  /** Reads up to `length` bytes at `offset` into `into`; the bytes read (fewer at the end). */
  private readAt(into: Buffer, offset: number, length: number): number {
    const fd = this.fd();
    let done = 0;
    while (done < length) {
      const n = readSync(fd, into, done, length - done, offset + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  private fd(): number {
    if (this.closed) throw new Error("the paid index is closed");
    return this.file.handle.fd;
  }

  private entry(record: Buffer, start: number, fingerprint: string): PaidEntry {
    const textStart = start + TEXT;
    const end = textStart + record.readUInt32LE(start + TEXT_LENGTH);
    // The face is digits: the last space is the one before it, whatever bytes the identity holds.
    const space = record.lastIndexOf(SPACE, end - 1);
    const batch = record.readUInt32LE(start + BATCH);
    return {
      campaign: this.names[this.batchCampaign[batch]!]!,
      fingerprint,
      identity: identityAt(record, textStart, space),
      line: record.readUInt32LE(start + LINE),
      currency: this.names[record.readUInt16LE(start + CURRENCY)]!,
      face: record.toString("latin1", space + 1, end),
      at: this.batchAt[batch]!,
    };
  }

  /** The batch of entries added with this campaign and time: the last one, or a new one. */
  private batchOf(campaign: number, at: number): number {
    const last = this.batchAt.length - 1;
    if (last >= 0 && this.batchAt[last] === at && this.batchCampaign[last] === campaign)
      return last;
    this.batchCampaign.push(campaign);
    return this.batchAt.push(at) - 1;
  }

  /** Campaign and currency names, each held once. */
  private nameOf(name: string): number {
    let index = this.nameIndex.get(name);
    if (index === undefined) {
      if (this.names.length === MAX_NAMES)
        throw new RangeError(`PaidIndex holds at most ${MAX_NAMES} names`);
      index = this.names.push(name) - 1;
      this.nameIndex.set(name, index);
    }
    return index;
  }
}

/** A record asked for: for the fingerprint of `row`, at offset `at8` * ALIGN. */
interface Wanted {
  row: number;
  at8: number;
}

/** An entry's identity, packed when it is a digest's text, then a space and its face. */
function writeText(into: Buffer, start: number, identity: string, face: string): number {
  let at = start;
  if (REF_IDENTITY.test(identity)) {
    into[at++] = REF_TAG;
    at += into.write(identity.slice(4), at, "base64url");
  } else if (CONTENT_IDENTITY.test(identity)) {
    into[at++] = CONTENT_TAG;
    at += into.write(identity.slice(2, 45), at, "base64url");
    at += into.write(identity.slice(45), at, "latin1");
  } else {
    into[at++] = TEXT_TAG;
    at += into.write(identity, at, "utf8");
  }
  into[at++] = SPACE;
  return at + into.write(face, at, "latin1");
}

function identityAt(text: Buffer, start: number, end: number): string {
  switch (text[start]) {
    case REF_TAG:
      return `ref:${text.toString("base64url", start + 1, start + 33)}`;
    case CONTENT_TAG:
      return `h:${text.toString("base64url", start + 1, start + 33)}${text.toString("latin1", start + 33, end)}`;
    default:
      return text.toString("utf8", start + 1, end);
  }
}

/** A fingerprint (base64url SHA-256: paid-fingerprint.ts) is its own digest; anything else is hashed. */
function digestOf(fingerprint: string): Buffer {
  return SHA256_TEXT.test(fingerprint)
    ? Buffer.from(fingerprint, "base64url")
    : hash("sha256", fingerprint, "buffer");
}

const SHA256_TEXT = /^[A-Za-z0-9_-]{43}$/;
