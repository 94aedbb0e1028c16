import { type CompactRecord, DIFF_FIELDS, type DiffField } from "./compact-record.js";

export interface DiffChange {
  code: string;
  name: unknown;
  /** Only the fields that changed, each with its old and new value. */
  fields: Partial<Record<DiffField, { old: unknown; new: unknown }>>;
}

/** `diff.json`: what changed between the previous snapshot and this one, by code. */
export interface CatalogDiff {
  /** Name of the snapshot compared with; null for the first snapshot (everything is added). */
  from: string | null;
  to: string;
  summary: { added: number; removed: number; changed: number; unchanged: number };
  added: { code: string; name: unknown }[];
  removed: { code: string; name: unknown }[];
  changed: DiffChange[];
}

/**
 * Builds the diff while the new snapshot streams past: each new record is compared with the
 * previous one of its code (kept as its JSON line), which is then dropped, so whatever is left
 * at the end was removed. Memory: the previous records plus the differences, never products.
 */
export class DiffBuilder {
  private readonly added: CatalogDiff["added"] = [];
  private readonly changed: DiffChange[] = [];
  private unchanged = 0;

  constructor(
    private readonly previous: Map<string, string>,
    private readonly from: string | null,
  ) {}

  /** `line` is JSON.stringify(record): equal lines mean nothing the diff tracks changed. */
  observe(record: CompactRecord, line: string): void {
    const before = this.previous.get(record.code);
    if (before === undefined) {
      this.added.push({ code: record.code, name: record.name });
      return;
    }
    this.previous.delete(record.code);
    if (before === line) {
      this.unchanged += 1;
      return;
    }
    const old = JSON.parse(before) as CompactRecord;
    const fields: DiffChange["fields"] = {};
    for (const field of DIFF_FIELDS) {
      if (JSON.stringify(old[field]) !== JSON.stringify(record[field])) {
        fields[field] = { old: old[field], new: record[field] };
      }
    }
    this.changed.push({ code: record.code, name: record.name, fields });
  }

  finish(to: string): CatalogDiff {
    const removed: CatalogDiff["removed"] = [];
    for (const [code, line] of this.previous) {
      removed.push({ code, name: (JSON.parse(line) as CompactRecord).name });
    }
    this.previous.clear();
    return {
      from: this.from,
      to,
      summary: {
        added: this.added.length,
        removed: removed.length,
        changed: this.changed.length,
        unchanged: this.unchanged,
      },
      added: this.added,
      removed,
      changed: this.changed,
    };
  }
}
