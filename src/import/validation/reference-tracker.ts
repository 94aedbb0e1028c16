import { hash } from "node:crypto";
import { DigestTable } from "../../orders/digest-table.js";

/**
 * Remembers each `reference` of the file with its line, so a second use is reported with the
 * first one's line. Keeps a digest per reference, not the reference: about 40 MB for a million
 * rows, off the JS heap.
 */
export class ReferenceTracker {
  private readonly lines = new DigestTable();

  /** Records `reference` at `line`; returns the earlier line when it was already used. */
  claim(reference: string, line: number): number | undefined {
    const digest = hash("sha256", reference, "buffer");
    const earlier = this.lines.get(digest);
    if (earlier !== undefined) return earlier;
    this.lines.set(digest, line);
    return undefined;
  }

  get size(): number {
    return this.lines.size;
  }
}
