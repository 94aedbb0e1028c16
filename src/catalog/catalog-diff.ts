import { type CompactRecord, DIFF_FIELDS, recordOfText } from "./compact-record.js";
import type { CatalogDiff, DiffChange } from "./diff-file.js";
import { PreviousDigests } from "./previous-digests.js";
import type { PreviousRecords } from "./previous-records.js";

export type { CatalogDiff, DiffChange } from "./diff-file.js";

/**
 * Builds the diff while the new snapshot streams past: each new record's digest is compared
 * with the previous one of its code, which is then marked seen, so whatever is not seen at the
 * end was removed. Memory: a digest per previous code plus the differences, never products. The
 * old values of changed and removed codes are read back from the previous snapshot at the end.
 */
export class DiffBuilder {
  private readonly added: CatalogDiff["added"] = [];
  /** The record texts of codes whose digest changed; parsed only at the end. */
  private readonly changed: string[] = [];
  private unchanged = 0;
  private readonly before: PreviousDigests;
  /** Codes of this run the previous snapshot did not have, to tell when one repeats. */
  private readonly newCodes = new Set<string>();

  constructor(private readonly previous: PreviousRecords | undefined) {
    this.before = previous?.digests ?? new PreviousDigests();
  }

  /**
   * Marks `code` seen. Returns its previous digest (null when the previous snapshot did not
   * have it), or undefined when this run has seen it already: a repeated code.
   */
  see(code: string): string | null | undefined {
    const before = this.before.see(code);
    if (before !== null) return before;
    if (this.newCodes.has(code)) return undefined;
    this.newCodes.add(code);
    return null;
  }

  /**
   * Compares a code's record with its previous digest (`before`, from see()): `digest` is
   * recordDigest(record), and `record` the product's record text (serialiseProduct); equal
   * digests mean nothing the diff tracks changed.
   */
  compare(
    code: string,
    name: unknown,
    before: string | null,
    digest: string,
    record: string,
  ): void {
    if (before === null) this.added.push({ code, name });
    else if (before === digest) this.unchanged += 1;
    else this.changed.push(record);
  }

  async finish(to: string): Promise<CatalogDiff> {
    const removedCodes = this.before.unseen();
    this.newCodes.clear();
    const records = this.changed.map(recordOfText);
    const wanted = new Set([...removedCodes, ...records.map((r) => r.code)]);
    const old = (await this.previous?.read(wanted)) ?? new Map<string, CompactRecord>();
    const changed: DiffChange[] = [];
    for (const record of records) {
      const change = fieldChanges(old.get(record.code), record);
      // A record text can differ where no diffed field does (a snapshot written by an older
      // giftjobs, whose texts had another shape): that is no change.
      if (Object.keys(change.fields).length > 0) changed.push(change);
      else this.unchanged += 1;
    }
    return {
      from: this.previous?.name ?? null,
      to,
      summary: {
        added: this.added.length,
        removed: removedCodes.length,
        changed: changed.length,
        unchanged: this.unchanged,
      },
      added: this.added,
      removed: removedCodes.map((code) => ({ code, name: old.get(code)?.name ?? null })),
      changed,
    };
  }
}

function fieldChanges(old: CompactRecord | undefined, record: CompactRecord): DiffChange {
  const fields: DiffChange["fields"] = {};
  for (const field of DIFF_FIELDS) {
    if (JSON.stringify(old?.[field]) !== JSON.stringify(record[field])) {
      fields[field] = { old: old?.[field] ?? null, new: record[field] };
    }
  }
  return { code: record.code, name: record.name, fields };
}
