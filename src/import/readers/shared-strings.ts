import type { XmlHandler } from "./sheet-xml.js";

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

/**
 * The strings of xl/sharedStrings.xml from its XML's events (SheetXml), each `<si>` as
 * exceljs's reader read it: its text, or its rich text runs (`<r>`) joined; the text events
 * of an `<si>` are joined, a `<t>` starting again. Unlike exceljs, a phonetic run (`<rPh>`,
 * the reading of Japanese text) is skipped: exceljs read the reading in place of the text.
 */
export class SharedStringsParser implements XmlHandler {
  /** Strings read and not yet taken. */
  readonly strings: string[] = [];
  private current: string | undefined;
  private runs: string[] | undefined;
  private phonetic = 0;

  open(name: string): void {
    if (name === "rPh") this.phonetic++;
    if (this.phonetic > 0) return;
    if (name === "si") {
      this.current = undefined;
      this.runs = undefined;
    } else if (name === "t") this.current = undefined;
  }

  text(text: string): void {
    if (this.phonetic === 0) this.current = this.current === undefined ? text : this.current + text;
  }

  close(name: string): void {
    if (name === "rPh") this.phonetic--;
    if (this.phonetic > 0 || name === "rPh") return;
    if (name === "r") {
      this.runs ??= [];
      this.runs.push(this.current ?? "");
      this.current = undefined;
    } else if (name === "si") {
      this.strings.push(this.runs === undefined ? (this.current ?? "") : this.runs.join(""));
      this.current = undefined;
      this.runs = undefined;
    }
  }
}
