/** Slots to start with; the table doubles when half full. */
const INITIAL_SLOTS = 1 << 12;

/**
 * A hash table from 128-bit digests to whole numbers, held in typed arrays: 20 bytes a slot
 * outside the JS heap, where a Map of strings costs about 100 bytes an entry on it and slows
 * every garbage collection. An import keeps one entry per row of a file of a million rows.
 *
 * Keys are the first 16 bytes of a SHA-256 digest. Two different inputs share them with a
 * chance of about n²/2^129 (below 10^-26 for a billion rows), so the table treats equal
 * prefixes as equal inputs.
 */
export class DigestTable {
  private slots = INITIAL_SLOTS;
  /** Four 32-bit words of key per slot. */
  private keys = new Uint32Array(INITIAL_SLOTS * 4);
  /** value + 1 per slot; 0 marks an empty slot. */
  private values = new Uint32Array(INITIAL_SLOTS);
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(digest: Uint8Array): number | undefined {
    const slot = this.find(words(digest));
    const stored = this.values[slot]!;
    return stored === 0 ? undefined : stored - 1;
  }

  /** `value` is a whole number below 2^32 - 1. */
  set(digest: Uint8Array, value: number): void {
    if (!Number.isInteger(value) || value < 0 || value >= 0xffffffff)
      throw new RangeError(`DigestTable value out of range: ${value}`);
    const key = words(digest);
    const slot = this.find(key);
    if (this.values[slot] === 0) {
      this.keys.set(key, slot * 4);
      this.count += 1;
    }
    this.values[slot] = value + 1;
    if (this.count * 2 > this.slots) this.grow();
  }

  /**
   * The digest's value (0 when absent), which then goes up by one: get and set in one lookup,
   * for a count kept a row at a time (OccurrenceCounter).
   */
  increment(digest: Uint8Array): number {
    const key = words(digest);
    const slot = this.find(key);
    // value + 1 is stored: the old value is stored - 1, the new one stored (set's limit).
    const stored = this.values[slot]!;
    if (stored === 0) {
      this.keys.set(key, slot * 4);
      this.values[slot] = 2;
      this.count += 1;
      if (this.count * 2 > this.slots) this.grow();
      return 0;
    }
    if (stored >= 0xffffffff) throw new RangeError(`DigestTable value out of range: ${stored}`);
    this.values[slot] = stored + 1;
    return stored - 1;
  }

  /** The slot holding `key`, else the empty slot where it would go (linear probing). */
  private find(key: Uint32Array): number {
    const mask = this.slots - 1;
    // SHA-256 output is uniform: its first word is a good index as it is.
    for (let slot = key[0]! & mask; ; slot = (slot + 1) & mask) {
      if (this.values[slot] === 0) return slot;
      const at = slot * 4;
      if (
        this.keys[at] === key[0] &&
        this.keys[at + 1] === key[1] &&
        this.keys[at + 2] === key[2] &&
        this.keys[at + 3] === key[3]
      )
        return slot;
    }
  }

  private grow(): void {
    const { keys, values, slots } = this;
    this.slots = slots * 2;
    this.keys = new Uint32Array(this.slots * 4);
    this.values = new Uint32Array(this.slots);
    for (let slot = 0; slot < slots; slot++) {
      if (values[slot] === 0) continue;
      const key = keys.subarray(slot * 4, slot * 4 + 4);
      const to = this.find(key);
      this.keys.set(key, to * 4);
      this.values[to] = values[slot]!;
    }
  }
}

/** The first 16 bytes of a digest as four 32-bit words. */
function words(digest: Uint8Array): Uint32Array {
  if (digest.length < 16) throw new RangeError("DigestTable keys are at least 16 bytes");
  const view = new DataView(digest.buffer, digest.byteOffset, 16);
  return Uint32Array.of(
    view.getUint32(0, true),
    view.getUint32(4, true),
    view.getUint32(8, true),
    view.getUint32(12, true),
  );
}
