import type { DiffField } from "./compact-record.js";

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
