import { hash } from "node:crypto";
import { DigestTable } from "./digest-table.js";

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
/** Bytes of `identity face` an entry takes, about: `ref:` and 43 characters, a space, 4 digits. */
const TEXT_BYTES = 52;
/** No next entry of the same fingerprint. */
const NONE = 0xffffffff;

/** A paid memory file's row: [fingerprint, identity, line, currency, face units]. */
export type PaidRecord = readonly [string, string, number, string, string];

/**
 * The other campaigns' paid memory as a file lookup holds it (docs/architecture/repeats.md, "The
 * check"): every entry in the window, kept outside the JS heap in typed arrays, about 130 bytes
 * an entry where an object each cost about 700 bytes of heap (a million remembered rows held
 * 2.6 GB of RSS during an import that repeated them all). An entry becomes a PaidEntry again only
 * when a row of the import asks for its fingerprint, a batch at a time.
 *
 * Fingerprints are keyed by the first 16 bytes of their digest (DigestTable); the entries of one fingerprint
 * are chained, newest first, and given back in the order they were added.
 */
export class PaidIndex {
  private readonly heads = new DigestTable();
  private readonly names: string[] = [];
  private readonly nameIndex = new Map<string, number>();
  private capacity: number;
  private count = 0;
  /** Per entry: the next (older) entry of its fingerprint, its campaign and currency (names), line. */
  private next: Uint32Array;
  private campaign: Uint32Array;
  private currency: Uint32Array;
  private line: Uint32Array;
  private at: Float64Array;
  /** Per entry `identity face`, UTF-8, one after another; `ends` marks where each stops. */
  private text: Buffer;
  private textLength = 0;
  private ends: Uint32Array;

  /** `expected`: about how many entries will be added (room made at once, none wasted growing). */
  constructor(expected = INITIAL) {
    const capacity = Math.max(INITIAL, Math.ceil(expected));
    this.capacity = capacity;
    this.next = new Uint32Array(capacity);
    this.campaign = new Uint32Array(capacity);
    this.currency = new Uint32Array(capacity);
    this.line = new Uint32Array(capacity);
    this.at = new Float64Array(capacity);
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
    this.next[i] = this.heads.get(key) ?? NONE;
    this.heads.set(key, i);
    this.campaign[i] = this.nameOf(campaign);
    this.currency[i] = this.nameOf(currency);
    this.line[i] = line;
    this.at[i] = at;
    this.addText(`${identity} ${face}`);
    this.ends[i] = this.textLength;
  }

  /** The entries with `fingerprint`, oldest added first. */
  find(fingerprint: string): PaidEntry[] {
    const found: PaidEntry[] = [];
    let i = this.heads.get(keyOf(fingerprint)) ?? NONE;
    for (; i !== NONE; i = this.next[i]!) found.push(this.entry(i, fingerprint));
    return found.reverse();
  }

  private entry(i: number, fingerprint: string): PaidEntry {
    const start = i === 0 ? 0 : this.ends[i - 1]!;
    const text = this.text.toString("utf8", start, this.ends[i]);
    const space = text.lastIndexOf(" ");
    return {
      campaign: this.names[this.campaign[i]!]!,
      fingerprint,
      identity: text.slice(0, space),
      line: this.line[i]!,
      currency: this.names[this.currency[i]!]!,
      face: text.slice(space + 1),
      at: this.at[i]!,
    };
  }

  /** Campaign and currency names, each held once. */
  private nameOf(name: string): number {
    let index = this.nameIndex.get(name);
    if (index === undefined) {
      index = this.names.push(name) - 1;
      this.nameIndex.set(name, index);
    }
    return index;
  }

  private addText(text: string): void {
    const bytes = Buffer.byteLength(text);
    if (this.textLength + bytes > this.text.length) {
      const bigger = Buffer.alloc(Math.max(this.text.length * 1.5, this.textLength + bytes));
      this.text.copy(bigger, 0, 0, this.textLength);
      this.text = bigger;
    }
    this.textLength += this.text.write(text, this.textLength);
  }

  private grow(): void {
    this.capacity = Math.ceil(this.capacity * 1.5);
    const grown = <T extends Uint32Array | Float64Array>(old: T): T => {
      const bigger = new (old.constructor as new (n: number) => T)(this.capacity);
      bigger.set(old);
      return bigger;
    };
    this.next = grown(this.next);
    this.campaign = grown(this.campaign);
    this.currency = grown(this.currency);
    this.line = grown(this.line);
    this.at = grown(this.at);
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
