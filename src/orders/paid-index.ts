import { hash } from "node:crypto";
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

/** Room for this many entries to start with; the columns grow by half when full. */
const INITIAL = 1 << 12;
/** Bytes of an entry's identity and face value, about: a packed `ref:` digest, a space, 4 digits. */
const TEXT_BYTES = 40;
/** No next entry of the same fingerprint. */
const NONE = 0xffffffff;
/** The most campaign and currency names an index tells apart (Uint16 columns). */
const MAX_NAMES = 0xffff;

/** How an entry's identity is held (identity.ts): a digest's 32 bytes, or the text itself. */
const TEXT = 0;
const REF = 1;
const CONTENT = 2;
const SPACE = 0x20;

/** A paid memory file's row: [fingerprint, identity, line, currency, face units]. */
export type PaidRecord = readonly [string, string, number, string, string];

/**
 * The other campaigns' paid memory as a file lookup holds it (docs/architecture/repeats.md, "The
 * check"): every entry in the window, kept outside the JS heap in typed arrays, about 85 bytes
 * an entry where an object each cost about 700 bytes of heap (a million remembered rows held
 * 2.6 GB of RSS during an import that repeated them all). An entry becomes a PaidEntry again only
 * when a row of the import asks for its fingerprint, a batch at a time.
 *
 * Fingerprints are keyed by the first 16 bytes of their digest (DigestTable, made for the count
 * expected); the entries of one fingerprint are chained, newest first, and given back in the
 * order they were added. Entries added together (a line of the file) share their campaign and
 * time, held once per batch; an identity that is a digest is held as its 32 bytes.
 */
export class PaidIndex {
  private readonly heads: DigestTable;
  private readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  /** Per batch of entries added with one campaign and time: that campaign (a name) and time. */
  private readonly batchCampaign: number[] = [];
  private readonly batchAt: number[] = [];
  private capacity: number;
  private count = 0;
  /** Per entry: the next (older) entry of its fingerprint, its batch, currency (a name), line. */
  private next: Uint32Array;
  private batch: Uint32Array;
  private currency: Uint16Array;
  private line: Uint32Array;
  /** Per entry its identity (packed) and ` face`, one after another; `ends` marks each end. */
  private text: Buffer;
  private textLength = 0;
  private ends: Uint32Array;

  /** `expected`: about how many entries will be added (room made at once, none wasted growing). */
  constructor(expected?: number) {
    const capacity = Math.max(INITIAL, Math.ceil(expected ?? 0));
    this.heads = new DigestTable(expected === undefined ? undefined : capacity);
    this.capacity = capacity;
    this.next = new Uint32Array(capacity);
    this.batch = new Uint32Array(capacity);
    this.currency = new Uint16Array(capacity);
    this.line = new Uint32Array(capacity);
    this.ends = new Uint32Array(capacity);
    this.text = Buffer.alloc(capacity * TEXT_BYTES);
  }

  get size(): number {
    return this.count;
  }

  /** Adds one entry of `campaign`, recorded at `at` (ms). */
  add(campaign: string, at: number, [fingerprint, identity, line, currency, face]: PaidRecord) {
    if (this.count === this.capacity) this.grow();
    const i = this.count++;
    const key = keyOf(fingerprint);
    this.next[i] = this.heads.replace(key, i) ?? NONE;
    this.batch[i] = this.batchOf(this.nameOf(campaign), at);
    this.currency[i] = this.nameOf(currency);
    this.line[i] = line;
    this.addText(identity, face);
    this.ends[i] = this.textLength;
  }

  /** The entries with `fingerprint`, oldest added first. */
  find(fingerprint: string): PaidEntry[] {
    // A first campaign's import asks for each of its rows: no key to decode.
    if (this.count === 0) return [];
    const found: PaidEntry[] = [];
    let i = this.heads.get(keyOf(fingerprint)) ?? NONE;
    for (; i !== NONE; i = this.next[i]!) found.push(this.entry(i, fingerprint));
    return found.reverse();
  }

  private entry(i: number, fingerprint: string): PaidEntry {
    const start = i === 0 ? 0 : this.ends[i - 1]!;
    const end = this.ends[i]!;
    // The face is digits: the last space is the one before it, whatever bytes the identity holds.
    const space = this.text.lastIndexOf(SPACE, end - 1);
    const batch = this.batch[i]!;
    return {
      campaign: this.names[this.batchCampaign[batch]!]!,
      fingerprint,
      identity: this.identityAt(start, space),
      line: this.line[i]!,
      currency: this.names[this.currency[i]!]!,
      face: this.text.toString("latin1", space + 1, end),
      at: this.batchAt[batch]!,
    };
  }

  private identityAt(start: number, end: number): string {
    const { text } = this;
    switch (text[start]) {
      case REF:
        return `ref:${text.toString("base64url", start + 1, start + 33)}`;
      case CONTENT:
        return `h:${text.toString("base64url", start + 1, start + 33)}${text.toString("latin1", start + 33, end)}`;
      default:
        return text.toString("utf8", start + 1, end);
    }
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

  /** An entry's identity, packed when it is a digest's text, then a space and its face. */
  private addText(identity: string, face: string): void {
    // At most: a tag, the identity as UTF-8, a space and the face.
    this.room(2 + Buffer.byteLength(identity) + face.length);
    const { text } = this;
    let at = this.textLength;
    if (REF_IDENTITY.test(identity)) {
      text[at++] = REF;
      at += text.write(identity.slice(4), at, "base64url");
    } else if (CONTENT_IDENTITY.test(identity)) {
      text[at++] = CONTENT;
      at += text.write(identity.slice(2, 45), at, "base64url");
      at += text.write(identity.slice(45), at, "latin1");
    } else {
      text[at++] = TEXT;
      at += text.write(identity, at, "utf8");
    }
    text[at++] = SPACE;
    this.textLength = at + text.write(face, at, "latin1");
  }

  private room(bytes: number): void {
    if (this.textLength + bytes <= this.text.length) return;
    const bigger = Buffer.alloc(Math.max(this.text.length * 1.5, this.textLength + bytes));
    this.text.copy(bigger, 0, 0, this.textLength);
    this.text = bigger;
  }

  private grow(): void {
    this.capacity = Math.ceil(this.capacity * 1.5);
    const grown = <T extends Uint32Array | Uint16Array>(old: T): T => {
      const bigger = new (old.constructor as new (n: number) => T)(this.capacity);
      bigger.set(old);
      return bigger;
    };
    this.next = grown(this.next);
    this.batch = grown(this.batch);
    this.currency = grown(this.currency);
    this.line = grown(this.line);
    this.ends = grown(this.ends);
  }
}

/** A fingerprint (base64url SHA-256: paid-fingerprint.ts) is its own digest; anything else is hashed. */
function keyOf(fingerprint: string): Buffer {
  return SHA256_TEXT.test(fingerprint)
    ? Buffer.from(fingerprint, "base64url")
    : hash("sha256", fingerprint, "buffer");
}

const SHA256_TEXT = /^[A-Za-z0-9_-]{43}$/;
