import { DigestTable } from "../../orders/digest-table.js";
import { referenceDigest } from "../../orders/identity.js";

/**
 * Remembers each `reference` of the file with its line, so a second use is reported with the
 * first one's line. Keeps a digest per reference, not the reference, off the JS heap: about 29 MB
 * for a million rows once told how many the file holds (`reserve`; import-survey.ts), 42 MB when
 * left to double as it fills.
 */
export class ReferenceTracker {
  private readonly lines = new DigestTable();

  /** Records `reference` at `line`; returns the earlier line when it was already used. */
  claim(reference: string, line: number): number | undefined {
    // The digest the row's identity is made of: one hash a reference.
    const digest = referenceDigest(reference);
    return this.lines.claim(digest, line);
  }

  get size(): number {
    return this.lines.size;
  }

  /** Makes room for `count` references in all (DigestTable.reserve). */
  reserve(count: number): void {
    this.lines.reserve(count);
  }
}
