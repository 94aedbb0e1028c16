/**
 * The previous snapshot's record digests, one per code, in that snapshot's product order, and
 * which of them this run has seen.
 *
 * A catalog comes back in the same order night after night, so each code is first looked for
 * where the last one found left off: a string comparison instead of a hash-table lookup, and
 * loading needs no table at all (about 0.1 s of a 100k sync). The first code out of order
 * builds a table by code, and from then on every code not at the expected place is looked up
 * in it, so any order works.
 */
export class PreviousDigests {
  private readonly codes: string[] = [];
  private readonly digests: string[] = [];
  private seen = new Uint8Array(0);
  /** Where the next code is expected. */
  private next = 0;
  private byCode: Map<string, number> | undefined;

  /** Adds the next code of the previous snapshot; each code once (digests.txt holds each once). */
  push(code: string, digest: string): void {
    this.codes.push(code);
    this.digests.push(digest);
  }

  /**
   * Marks `code` seen. Returns its previous digest (null when the previous snapshot did not have
   * it), or undefined when it was marked seen already.
   */
  see(code: string): string | null | undefined {
    const at = this.find(code);
    if (at === -1) return null;
    if (this.seen.length !== this.codes.length) this.seen = new Uint8Array(this.codes.length);
    if (this.seen[at] === 1) return undefined;
    this.seen[at] = 1;
    return this.digests[at] as string;
  }

  /**
   * The codes never seen, in the previous snapshot's order. digests.txt holds each code once;
   * one damaged to repeat a line must still not list a code seen under its other line, nor list
   * a code twice. The second pass runs only when something was removed.
   */
  unseen(): string[] {
    const unseen = new Set<string>();
    for (let i = 0; i < this.codes.length; i++) {
      if (this.seen[i] !== 1) unseen.add(this.codes[i] as string);
    }
    if (unseen.size === 0) return [];
    for (let i = 0; i < this.codes.length; i++) {
      if (this.seen[i] === 1) unseen.delete(this.codes[i] as string);
    }
    return [...unseen];
  }

  private find(code: string): number {
    if (this.codes[this.next] === code) return this.next++;
    this.byCode ??= this.table();
    const at = this.byCode.get(code) ?? -1;
    if (at !== -1) this.next = at + 1;
    return at;
  }

  private table(): Map<string, number> {
    const table = new Map<string, number>();
    for (let i = this.codes.length - 1; i >= 0; i--) table.set(this.codes[i] as string, i);
    return table;
  }
}
