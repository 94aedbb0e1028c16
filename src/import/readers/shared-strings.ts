/**
 * The limits of a workbook's shared strings table, which must be held whole while its sheet is
 * read (cells name their text by index into it). Beyond either the workbook is refused before
 * the import runs out of memory: 128 MB of text is about 4 million e-mail addresses, more than
 * a sheet's 1,048,576 rows with three unique text columns.
 */
export const SHARED_STRINGS_LIMITS = { bytes: 128 * 2 ** 20, count: 8_000_000 };

/**
 * A workbook's shared strings, stored as UTF-8 in one growing buffer with the end of each
 * string, not as one JS string each: a few hundred thousand strings are then a few MB outside
 * the heap instead of tens of MB inside it, which the garbage collector would let the heap grow
 * to a multiple of (docs/architecture/import.md, "Spreadsheets"). `get` decodes a string again each
 * time; the copy dies young.
 */
export class SharedStrings {
  private text = Buffer.allocUnsafe(64 * 1024);
  private ends = new Uint32Array(4096);
  private used = 0;
  private size = 0;

  constructor(private readonly limits = SHARED_STRINGS_LIMITS) {}

  get count(): number {
    return this.size;
  }

  /** Bytes of text held. */
  get bytes(): number {
    return this.used;
  }

  /** Appends the next string; false (and nothing added) when it would pass a limit. */
  add(value: string): boolean {
    if (this.size >= this.limits.count) return false;
    // At most 3 bytes of UTF-8 per UTF-16 unit: room for that, then the exact length is known.
    const room = value.length * 3;
    const limit = this.limits.bytes;
    if (this.used + room > limit && this.used + Buffer.byteLength(value) > limit) return false;
    if (this.used + room > this.text.length) this.growText(this.used + room);
    this.used += this.text.write(value, this.used, "utf8");
    if (this.size === this.ends.length) {
      const ends = new Uint32Array(this.ends.length * 2);
      ends.set(this.ends);
      this.ends = ends;
    }
    this.ends[this.size++] = this.used;
    return true;
  }

  /** The string at `index`, or undefined when there is none. */
  get(index: number): string | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.size) return undefined;
    const start = index === 0 ? 0 : this.ends[index - 1]!;
    return this.text.toString("utf8", start, this.ends[index]);
  }

  private growText(needed: number): void {
    // Doubling, but not far past the limit: the table's memory is what the limit states.
    const doubled = Math.min(this.text.length * 2, this.limits.bytes);
    const grown = Buffer.allocUnsafe(Math.max(needed, doubled));
    this.text.copy(grown, 0, 0, this.used);
    this.text = grown;
  }
}
