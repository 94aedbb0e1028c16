/** Slots to start with; the table doubles when half full. */
const INITIAL_SLOTS = 1 << 12;
/**
 * How full a table made for a known count may get before it grows: linear probing stays short
 * at three quarters full (about 2.5 probes a hit), and a million keys then take 27 MB, not the
 * 42 MB of a table doubled at half full.
 */
const PRESIZED_LOAD = 0.75;

/**
 * A hash table from 128-bit digests to whole numbers, held in typed arrays: 20 bytes a slot
 * outside the JS heap, where a Map of strings costs about 100 bytes an entry on it and slows
 * every garbage collection. An import keeps one entry per row of a file of a million rows.
 *
 * Keys are the first 16 bytes of a SHA-256 digest. Two different inputs share them with a
 * chance of about n²/2^129 (below 10^-26 for a billion rows), so the table treats equal
 * prefixes as equal inputs. A table of 8-byte keys takes 12 bytes a slot, not 20, for a user
 * that keeps the whole digest elsewhere and compares it on each hit (PaidIndex): 8 bytes are
 * shared by two of a million keys with a chance of about 1 in 37 million.
 */
export class DigestTable {
  private slots: number;
  /** 32-bit words of key per slot: 4, or 2 for 8-byte keys. */
  private readonly words: 2 | 4;
  /** `words` words of key per slot. */
  private keys: Uint32Array;
  /** value + 1 per slot; 0 marks an empty slot. */
  private values: Uint32Array;
  private count = 0;
  /** The share of slots in use past which the table grows, and by how much. */
  private maxLoad: number;
  private growth = 2;

  /**
   * `expected`: how many keys it will hold, when that is known before (PaidIndex): the table is
   * made that size at once, three quarters full at most. Unknown: it starts small and doubles
   * when half full. `keyBytes`: the bytes of each digest it keys by, its first 16 or 8.
   */
  constructor(expected?: number, keyBytes: 8 | 16 = 16) {
    this.words = keyBytes === 8 ? 2 : 4;
    this.maxLoad = expected === undefined ? 0.5 : PRESIZED_LOAD;
    this.slots = Math.max(INITIAL_SLOTS, Math.ceil((expected ?? 0) / PRESIZED_LOAD) + 1);
    this.keys = new Uint32Array(this.slots * this.words);
    this.values = new Uint32Array(this.slots);
  }

  get size(): number {
    return this.count;
  }

  /** Bytes its arrays take. */
  get bytes(): number {
    return this.keys.byteLength + this.values.byteLength;
  }

  /**
   * Makes room for `count` keys in all, three quarters full at most, when it has less: one
   * rehash of the keys so far rather than the doublings to come, and a table of 1.33 slots a key
   * rather than up to 4 (an import's tables, once it can tell how many rows its file holds).
   */
  reserve(count: number): void {
    const slots = Math.ceil(count / PRESIZED_LOAD) + 1;
    if (slots <= this.slots) return;
    this.rehash(slots);
    this.maxLoad = PRESIZED_LOAD;
    // Told too few, it was told nearly enough: half as much again, not twice as much.
    this.growth = 1.5;
  }

  get(digest: Uint8Array): number | undefined {
    const stored = this.values[this.find(digest)]!;
    return stored === 0 ? undefined : stored - 1;
  }

  /** `value` is a whole number below 2^32 - 1. */
  set(digest: Uint8Array, value: number): void {
    this.replace(digest, value);
  }

  /** set, in the same lookup telling the value it replaced (undefined for a new key). */
  replace(digest: Uint8Array, value: number): number | undefined {
    checkValue(value);
    const slot = this.find(digest);
    const stored = this.values[slot]!;
    this.values[slot] = value + 1;
    if (stored !== 0) return stored - 1;
    this.add(slot, digest);
    return undefined;
  }

  /**
   * The digest's value when it has one, left as it is; else `value` is stored and undefined
   * returned: get then set in one lookup, for a file's references (ReferenceTracker).
   */
  claim(digest: Uint8Array, value: number): number | undefined {
    checkValue(value);
    const slot = this.find(digest);
    const stored = this.values[slot]!;
    if (stored !== 0) return stored - 1;
    this.values[slot] = value + 1;
    this.add(slot, digest);
    return undefined;
  }

  /**
   * The digest's value (0 when absent), which then goes up by one: get and set in one lookup,
   * for a count kept a row at a time (OccurrenceCounter).
   */
  increment(digest: Uint8Array): number {
    const slot = this.find(digest);
    // value + 1 is stored: the old value is stored - 1, the new one stored (set's limit).
    const stored = this.values[slot]!;
    if (stored === 0) {
      this.values[slot] = 2;
      this.add(slot, digest);
      return 0;
    }
    if (stored >= 0xffffffff) throw new RangeError(`DigestTable value out of range: ${stored}`);
    this.values[slot] = stored + 1;
    return stored - 1;
  }

  /** The digest's key written into `slot`, whose value was just set; grows when it is time. */
  private add(slot: number, digest: Uint8Array): void {
    const at = slot * this.words;
    this.keys[at] = word(digest, 0);
    this.keys[at + 1] = word(digest, 4);
    if (this.words === 4) {
      this.keys[at + 2] = word(digest, 8);
      this.keys[at + 3] = word(digest, 12);
    }
    this.count += 1;
    if (this.count > this.slots * this.maxLoad) this.grow();
  }

  /**
   * The slot holding the digest's key, else the empty slot where it would go (linear probing).
   * The key's words are read into locals, not an array: a lookup allocates nothing (an import
   * makes two a row).
   */
  private find(digest: Uint8Array): number {
    if (digest.length < this.words * 4)
      throw new RangeError(`DigestTable keys are at least ${this.words * 4} bytes`);
    if (this.words === 2) return this.findWords(word(digest, 0), word(digest, 4), 0, 0);
    return this.findWords(word(digest, 0), word(digest, 4), word(digest, 8), word(digest, 12));
  }

  private findWords(k0: number, k1: number, k2: number, k3: number): number {
    const { slots, keys, values, words } = this;
    // SHA-256 output is uniform: its first word is a good index as it is. A presized table's
    // count of slots is no power of two: the word is taken modulo it (its low 31 bits, a small
    // integer to V8, whose modulo is an integer one).
    for (let slot = (k0 & 0x7fffffff) % slots; ; slot = slot + 1 === slots ? 0 : slot + 1) {
      if (values[slot] === 0) return slot;
      const at = slot * words;
      if (
        keys[at] === k0 &&
        keys[at + 1] === k1 &&
        (words === 2 || (keys[at + 2] === k2 && keys[at + 3] === k3))
      )
        return slot;
    }
  }

  private grow(): void {
    this.rehash(Math.ceil(this.slots * this.growth));
  }

  private rehash(size: number): void {
    const { keys, values, slots, words } = this;
    this.slots = size;
    this.keys = new Uint32Array(this.slots * words);
    this.values = new Uint32Array(this.slots);
    for (let slot = 0; slot < slots; slot++) {
      if (values[slot] === 0) continue;
      const at = slot * words;
      const to =
        words === 2
          ? this.findWords(keys[at]!, keys[at + 1]!, 0, 0)
          : this.findWords(keys[at]!, keys[at + 1]!, keys[at + 2]!, keys[at + 3]!);
      this.keys.set(keys.subarray(at, at + words), to * words);
      this.values[to] = values[slot]!;
    }
  }
}

/** A value the table can hold: a whole number below 2^32 - 1 (it stores value + 1). */
function checkValue(value: number): void {
  if (!Number.isInteger(value) || value < 0 || value >= 0xffffffff)
    throw new RangeError(`DigestTable value out of range: ${value}`);
}

/** The little-endian 32-bit word of a digest at `at`, unsigned. */
function word(digest: Uint8Array, at: number): number {
  return (
    (digest[at]! | (digest[at + 1]! << 8) | (digest[at + 2]! << 16) | (digest[at + 3]! << 24)) >>> 0
  );
}
