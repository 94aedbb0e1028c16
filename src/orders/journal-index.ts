import { hash } from "node:crypto";
import { DamagedFileError, parseFileJson } from "../catalog/damaged-file-error.js";
import { endsWithNewline, readNumberedLineBatches } from "../catalog/line-reader.js";
import { DigestTable } from "./digest-table.js";
import type { JournalLine } from "./journal.js";
import { orderKey } from "./keys.js";
import { MAX_ITEMS_PER_ORDER } from "./packing.js";

/** Lines to make room for at first; the arrays double as needed. */
const INITIAL_LINES = 1 << 10;

/** What pass 1 found of the journal's orders among this import's rows. */
export interface JournalVerdict {
  /** New rows of journal orders all of whose rows are new in this import: packed as recorded. */
  reproduced: number;
  /** Journal orders rebuilt, and the most rows one of them has. */
  orders: number;
  largest: number;
  /**
   * New rows of journal orders some of whose rows the ledger knows (the order was recorded, or
   * left out for another import's): nothing was sent for these under that order's key; they are
   * packed anew.
   */
  repacked: number;
  /** New rows of journal orders some of whose rows are not in this import at all. */
  incomplete: { rows: number; orders: number; missing: number };
}

/**
 * The journal of a campaign, read for an import (docs/architecture/keys-and-exactly-once.md, "Lost
 * ledger"): which recorded order each identity belongs to, each order's size (the rows it still
 * holds) and generation; and, as pass 1 classifies the rows, how many of each order's rows are new
 * to the ledger and how many it knows. An identity belongs to the line of the highest generation
 * that names it, the first such line: a later generation is a move made after the service answered
 * under the earlier key (a worker's or `orders retry --new-key`'s line, or a changed row
 * released after a final failure), and the earlier order keeps only the rows that did not move
 * (the ones the service refused under its key).
 *
 * A void line (JournalLine.void: a generation change whose REKEY refused) takes back one line of
 * its key written before it: that line is read as if never written. Void lines are rare, so the
 * journal is read once as it stands, and only when it holds some a second time, leaving out the
 * lines they take back (see load).
 *
 * Memory stays off the JS heap: identity digests in a DigestTable (about 40 bytes a row), a few
 * bytes a line in typed arrays. The lines themselves are not kept; an order's identities are
 * the new rows that name it, gathered again in pass 2.
 */
export class JournalIndex {
  private readonly table = new DigestTable();
  private sizes = new Uint8Array(INITIAL_LINES);
  private generations = new Uint32Array(INITIAL_LINES);
  /** Each line's API key fingerprint, as 1 + its place in `apiKeys` (0: none recorded). */
  private keyOf = new Uint8Array(INITIAL_LINES);
  private readonly apiKeys: string[] = [];
  /** Rows of each line this import found new to the ledger, and known to it. */
  private fresh = new Uint8Array(INITIAL_LINES);
  private known = new Uint8Array(INITIAL_LINES);
  private count = 0;
  /** The void lines read, by key: the numbers naming them, in order. */
  private readonly voids = new Map<string, number[]>();
  /** The numbers of the lines void lines took back (and of the void lines themselves). */
  private readonly skipped = new Set<number>();
  /** The number of the last line read: a second reading stops there. */
  private last = 0;
  /** On a second reading: the void lines the first one found, by key, those not yet used. */
  private readonly unused: Map<string, number[]> | undefined;

  /**
   * `path`: the journal's file, or where the database keeps it; messages name it. `voids`: on a
   * second reading, the void lines the first one found (see load).
   */
  private constructor(
    readonly path: string,
    voids?: ReadonlyMap<string, readonly number[]>,
  ) {
    if (voids) this.unused = new Map([...voids].map(([k, numbers]) => [k, [...numbers]]));
  }

  /** How many orders the journal holds (lines a void line took back, and void lines, not counted). */
  get lines(): number {
    return this.count;
  }

  /** The number of the last line read (a torn last line is not one); 0 when there is none. */
  get lastLine(): number {
    return this.last;
  }

  /**
   * Whether the line numbered `number` is left out: a void line, or a line one took back (its
   * rows belong where they did before it: docs/architecture/keys-and-exactly-once.md, "One key
   * while an order may exist").
   */
  leftOut(number: number): boolean {
    return this.skipped.has(number);
  }

  /**
   * An empty index when there is no journal yet. A journal with void lines is read a second
   * time, up to the line the first reading ended on (an append made meanwhile is left for the
   * next import, as if made after this read), each line a void line takes back left out.
   */
  static async load(path: string, campaign: string): Promise<JournalIndex> {
    const first = await JournalIndex.readFile(new JournalIndex(path), campaign);
    if (first.voids.size === 0) return first;
    return JournalIndex.readFile(new JournalIndex(path, first.voids), campaign, first.last);
  }

  private static async readFile(
    index: JournalIndex,
    campaign: string,
    until = Number.POSITIVE_INFINITY,
  ): Promise<JournalIndex> {
    const terminated = await endsWithNewline(index.path);
    if (terminated === undefined) return index;
    let held: { text: string; number: number } | undefined;
    for await (const { lines, first } of readNumberedLineBatches(index.path)) {
      for (const [offset, text] of lines.entries()) {
        // One line behind: the last one is dropped when the file does not end with a newline.
        if (held) index.addLine(held.text, held.number, campaign);
        held = { text, number: first + offset };
        if (held.number > until) return index;
      }
    }
    if (held && terminated) index.addLine(held.text, held.number, campaign);
    return index;
  }

  /** The journal order (line index) an identity belongs to, if any. */
  lineOf(identity: string): number | undefined {
    // A new campaign's journal is empty: no row is hashed to learn that.
    if (this.table.size === 0) return undefined;
    return this.table.get(digestOf(identity));
  }

  /** Counts a row of this import against its journal order; returns that order, if any. */
  note(identity: string, newToLedger: boolean): number | undefined {
    const line = this.lineOf(identity);
    if (line === undefined) return undefined;
    const counts = newToLedger ? this.fresh : this.known;
    counts[line] = counts[line]! + 1;
    return line;
  }

  /** Whether a journal order is rebuilt as recorded: every row of it new in this import. */
  reproduces(line: number): boolean {
    return this.known[line] === 0 && this.fresh[line] === this.sizes[line];
  }

  size(line: number): number {
    return this.sizes[line]!;
  }

  generation(line: number): number {
    return this.generations[line]!;
  }

  /** The fingerprint of the API key the line's order was recorded for, if the line names one. */
  apiKey(line: number): string | undefined {
    const at = this.keyOf[line]!;
    return at === 0 ? undefined : this.apiKeys[at - 1];
  }

  /** What pass 1 found (see JournalVerdict); call once every row is noted. */
  verdict(): JournalVerdict {
    const verdict: JournalVerdict = {
      reproduced: 0,
      orders: 0,
      largest: 0,
      repacked: 0,
      incomplete: { rows: 0, orders: 0, missing: 0 },
    };
    for (let line = 0; line < this.count; line++) {
      const fresh = this.fresh[line]!;
      if (fresh === 0) continue;
      if (this.known[line]! > 0) verdict.repacked += fresh;
      else if (fresh < this.sizes[line]!) {
        verdict.incomplete.rows += fresh;
        verdict.incomplete.orders += 1;
        verdict.incomplete.missing += this.sizes[line]! - fresh;
      } else {
        verdict.reproduced += fresh;
        verdict.orders += 1;
        verdict.largest = Math.max(verdict.largest, fresh);
      }
    }
    return verdict;
  }

  /**
   * An index of journal lines read from elsewhere (the database's journal, in order), each
   * with the number that names it in an error; `where` names the journal in messages. The
   * database holds no void lines (PgJournal.voidChange deletes the row instead): it is read once.
   */
  static async fromBatches(
    where: string,
    campaign: string,
    batches: AsyncIterable<readonly { line: JournalLine; number: number }[]>,
  ): Promise<JournalIndex> {
    const index = new JournalIndex(where);
    for await (const batch of batches)
      for (const { line, number } of batch) index.addParsed(line, number, campaign);
    return index;
  }

  private addLine(text: string, number: number, campaign: string): void {
    this.addParsed(parseFileJson<JournalLine>(text, this.path, number), number, campaign);
  }

  private addParsed(line: JournalLine, number: number, campaign: string): void {
    const { g, k, i, a } = line;
    const shaped =
      Number.isInteger(g) &&
      g >= 0 &&
      g < 0xffffffff &&
      typeof k === "string" &&
      Array.isArray(i) &&
      i.length > 0 &&
      i.length <= MAX_ITEMS_PER_ORDER &&
      i.every((id) => typeof id === "string") &&
      (line.void === undefined || line.void === true);
    if (!shaped) throw new DamagedFileError(this.path, number, "not an order as written");
    if (orderKey(campaign, g, i) !== k)
      throw new DamagedFileError(
        this.path,
        number,
        `its key is not the key of its rows in campaign ${campaign} (the journal of another campaign?)`,
      );
    this.last = number;
    if (line.void) {
      this.skipped.add(number);
      if (!this.unused) this.voids.set(k, [...(this.voids.get(k) ?? []), number]);
      return;
    }
    if (this.takenBack(k, number)) {
      this.skipped.add(number);
      return;
    }
    const at = this.count;
    this.makeRoom(at + 1);
    this.sizes[at] = i.length;
    this.generations[at] = g;
    this.keyOf[at] = typeof a === "string" ? this.apiKeyPlace(a) : 0;
    this.count += 1;
    for (const identity of i) {
      const digest = digestOf(identity);
      const before = this.table.get(digest);
      // Named again in the same generation (two imports at once): the first order keeps it.
      if (before !== undefined && this.generations[before]! >= g) continue;
      // A later generation takes the row from the order it moved out of (see the class comment).
      if (before !== undefined) this.sizes[before] = this.sizes[before]! - 1;
      this.table.set(digest, at);
    }
  }

  /**
   * On a second reading, whether a void line takes back this line of key `k`: each void line
   * takes the first line of its key not yet taken that was written before it (lines of one key
   * are alike but for `a`, which one matters little). A void line with no such line before it
   * (a damaged journal) takes nothing. The void lines of each key are used in order.
   */
  private takenBack(k: string, number: number): boolean {
    const voids = this.unused?.get(k);
    if (!voids) return false;
    // Void lines written before this line could only take earlier lines: they are spent.
    while (voids.length > 0 && voids[0]! < number) voids.shift();
    if (voids.length === 0) return false;
    voids.shift();
    return true;
  }

  /** 1 + the fingerprint's place in `apiKeys` (a journal names a few keys at most). */
  private apiKeyPlace(fingerprint: string): number {
    let at = this.apiKeys.indexOf(fingerprint);
    if (at < 0 && this.apiKeys.length < 255) at = this.apiKeys.push(fingerprint) - 1;
    return at + 1;
  }

  private makeRoom(lines: number): void {
    if (lines <= this.sizes.length) return;
    const grown = this.sizes.length * 2;
    this.sizes = grow(this.sizes, new Uint8Array(grown));
    this.generations = grow(this.generations, new Uint32Array(grown));
    this.keyOf = grow(this.keyOf, new Uint8Array(grown));
    this.fresh = grow(this.fresh, new Uint8Array(grown));
    this.known = grow(this.known, new Uint8Array(grown));
  }
}

function grow<T extends Uint8Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

function digestOf(identity: string): Buffer {
  return hash("sha256", identity, "buffer");
}
