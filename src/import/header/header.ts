import { grouped } from "../../grouped.js";
import type { RowError } from "../validation/row-error.js";
import { splitHeaderCurrency } from "./header-currency.js";
import { synonymField } from "./header-synonyms.js";
import { mapCandidate, mapOption } from "./map-suggestion.js";
import { cutName, NAMES_LISTED, nameList, shownName } from "./name-list.js";

/** The fields an order row may hold besides `metadata.<key>` columns. */
const ORDER_FIELDS = [
  "email",
  "product_code",
  "face_value",
  "template_id",
  "description",
  "reference",
  "send_at",
  "distribution",
  "recipient_reference",
  "product_codes",
  "selection_template_id",
  "currency",
] as const;

const REQUIRED_FIELDS = ["email", "product_code", "face_value"] as const;

/**
 * A required field, and the columns that stand in for it: a choice of products instead of
 * product_code; a distribution column instead of email (its link rows have none; the rows that
 * need one say so).
 */
const STAND_INS: Readonly<Record<string, readonly string[]>> = {
  product_code: ["product_codes", "selection_template_id"],
  email: ["distribution"],
};

export const METADATA_PREFIX = "metadata.";

/**
 * The columns an error file (`--skip-invalid`) adds after the row's own: what is wrong, and the
 * line the row was on. Importing the fixed error file recognises and ignores them.
 */
export const FIX_LIST_COLUMNS = ["error", "line"] as const;

/** Whether a header is one of FIX_LIST_COLUMNS (trimmed, any case). */
export function isFixListColumn(name: string): boolean {
  return (FIX_LIST_COLUMNS as readonly string[]).includes(name.trim().toLowerCase());
}

/** A column whose header is not its field's name, and how it was matched. */
export interface RenamedColumn {
  source: string;
  field: string;
  by: "map" | "synonym";
  /** The currency the header names (`Amount (USD)`): each row's product must be of it. */
  currency?: string;
}

/** A column that maps to no field: kept out of the order. `index` counts from 0. */
export interface IgnoredColumn {
  index: number;
  name: string;
}

/**
 * The header line after `--map` and the synonyms: the field of each column in file order ("" for
 * an ignored column), the columns renamed, the columns ignored.
 */
export type ResolvedHeader =
  | { ok: true; fields: string[]; renamed: RenamedColumn[]; ignored: IgnoredColumn[] }
  | { ok: false; errors: RowError[] };

export interface ResolveHeaderOptions {
  /** `--map`: source header -> field, matched first. */
  map?: Readonly<Record<string, string>>;
  /** The physical line the header is on. @defaultValue 1 */
  line?: number;
  /**
   * A column that maps to no field is an error rather than ignored (`--strict-columns`).
   * @defaultValue false
   */
  strictColumns?: boolean;
  /**
   * No email column is needed: rows are links by default (`--distribution link`).
   * @defaultValue false
   */
  emailOptional?: boolean;
}

/**
 * Names are trimmed and known fields matched case-insensitively, because spreadsheets add
 * spaces and capitals; a metadata key keeps its case, since it is sent to the service as is.
 */
function canonicalField(name: string): string | undefined {
  const trimmed = name.trim();
  const lower = trimmed.toLowerCase();
  if ((ORDER_FIELDS as readonly string[]).includes(lower)) return lower;
  if (lower.startsWith(METADATA_PREFIX) && trimmed.length > METADATA_PREFIX.length) {
    return METADATA_PREFIX + trimmed.slice(METADATA_PREFIX.length);
  }
  return undefined;
}

function unknownMessage(source: string, index: number): string {
  const label = source.trim() ? shownName(source.trim()) : `number ${index + 1} (no name)`;
  return (
    `unknown column ${label}: expected ${ORDER_FIELDS.join(", ")} or metadata.<key>` +
    ` (rename a column with --map 'Header=field')`
  );
}

/**
 * Checks the header. A column is matched by `map` (source header -> field) first, then by its
 * field name, then by the synonyms of `header-synonyms.ts`; a column none of them matches is
 * ignored (an error with `strictColumns`). The columns an error file adds (`error`, `line`) are
 * ignored and not reported. `line` is the physical line the header is on, 1
 * unless blank lines precede it.
 */
export function resolveHeader(
  names: readonly string[],
  options: ResolveHeaderOptions = {},
): ResolvedHeader {
  const { map = {}, line = 1 } = options;
  const single = names.length === 1 ? names[0] : undefined;
  if (single?.includes(";")) {
    // A one-column header holding ';' is a ';' file read with ','; say so, not "unknown column".
    const message = `the header has one column ${shownName(single)}: is the file ';'-separated? use --delimiter ';'`;
    return { ok: false, errors: [{ line, column: "", message }] };
  }
  const errors: RowError[] = [];
  const fields: string[] = [];
  const renamed: RenamedColumn[] = [];
  const ignored: IgnoredColumn[] = [];
  const seen = new Map<string, string>();
  names.forEach((source, index) => {
    const name = source.trim();
    // Own keys only: a header named "constructor" or "__proto__" is a header, not a mapping.
    const mapped = Object.hasOwn(map, name) ? map[name] : undefined;
    let field = canonicalField(mapped ?? source);
    let by: RenamedColumn["by"] | undefined = mapped === undefined ? undefined : "map";
    // A --map target or a metadata column must be right: those are never ignored.
    const named = mapped !== undefined || name.toLowerCase().startsWith(METADATA_PREFIX);
    if (mapped === undefined && isFixListColumn(name)) {
      // An error file's own columns: ignored without a word, --strict-columns or not.
      fields.push("");
      return;
    }
    let currency: string | undefined;
    if (field === undefined && !named) {
      ({ field, currency } = fieldOfHeader(source));
      by = "synonym";
    }
    if (field === undefined) {
      if (named || options.strictColumns) {
        errors.push({
          line,
          column: cutName(name),
          message: unknownMessage(mapped ?? source, index),
        });
      } else ignored.push({ index, name });
      fields.push("");
      return;
    }
    if (by !== undefined && name.toLowerCase() !== field)
      renamed.push({ source: name, field, by, ...(currency ? { currency } : {}) });
    const earlier = seen.get(field);
    if (earlier !== undefined) {
      const both =
        earlier === name ? "" : ` (columns ${shownName(earlier)} and ${shownName(name)})`;
      errors.push({ line, column: field, message: `duplicate column ${field}${both}` });
    }
    seen.set(field, name);
    fields.push(field);
  });
  const missing = REQUIRED_FIELDS.filter((required) => {
    if (required === "email" && options.emailOptional) return false;
    const standIns = STAND_INS[required] ?? [];
    return !seen.has(required) && !standIns.some((field) => seen.has(field));
  });
  // Columns no field claimed (ignored, or unknown with --strict-columns): candidates for --map.
  const unclaimed = names.filter(
    (name, i) => fields[i] === "" && name.trim() !== "" && !isFixListColumn(name),
  );
  errors.push(...missingErrors(missing, { names, unclaimed, line }));
  return errors.length > 0
    ? { ok: false, errors: boundErrors(errors, line) }
    : { ok: true, fields, renamed, ignored };
}

/**
 * The field of a header by the synonyms, or the face value's for a header naming a currency
 * (`Amount (USD)`, `Betrag (€)`), with that currency (none for `$`).
 */
function fieldOfHeader(source: string): { field?: string; currency?: string } {
  const field = synonymField(source);
  if (field !== undefined) return { field };
  const split = splitHeaderCurrency(source);
  if (split === undefined) return {};
  const base = canonicalField(split.base) ?? synonymField(split.base);
  if (base !== "face_value") return {};
  return { field: base, ...(split.currency ? { currency: split.currency } : {}) };
}

/**
 * A missing required column, with the file's headers (bounded) on the first, and the `--map`
 * that would fix each when an unclaimed header looks like its field (docs/order-files.md,
 * "Spreadsheets as exported").
 */
function missingErrors(
  missing: readonly string[],
  {
    names,
    unclaimed,
    line,
  }: { names: readonly string[]; unclaimed: readonly string[]; line: number },
): RowError[] {
  const headers = names.map((n) => n.trim()).filter((n) => n !== "");
  const taken = new Set<string>();
  return missing.map((field, i) => {
    const parts = [`missing required column ${field}`];
    if (i === 0)
      parts.push(
        headers.length > 0 ? `the file's headers: ${nameList(headers)}` : "the header is empty",
      );
    const candidate = mapCandidate(
      unclaimed.filter((name) => !taken.has(name)),
      field,
    );
    if (candidate !== undefined) {
      taken.add(candidate);
      parts.push(`try ${mapOption(candidate, field)}`);
    } else if (i === 0 && unclaimed.length > 0) {
      parts.push(`name its column with ${mapOption("Header", field)}`);
    }
    return { line, column: field, message: parts.join("; ") };
  });
}

/**
 * Errors of one kind past NAMES_LISTED are summed up in one more: a header of 100,000 unknown
 * columns is refused in a short line.
 */
function boundErrors(errors: RowError[], line: number): RowError[] {
  const kinds = new Map<string, number>();
  const kept: RowError[] = [];
  for (const error of errors) {
    const kind = error.message.startsWith("unknown column")
      ? "unknown columns"
      : error.message.startsWith("duplicate column")
        ? "duplicate columns"
        : "";
    const count = (kinds.get(kind) ?? 0) + 1;
    kinds.set(kind, count);
    if (kind === "" || count <= NAMES_LISTED) kept.push(error);
  }
  for (const [kind, count] of kinds) {
    if (kind !== "" && count > NAMES_LISTED)
      kept.push({
        line,
        column: "",
        message: `and ${grouped(count - NAMES_LISTED)} more ${kind}`,
      });
  }
  return kept;
}

/**
 * How many of a row's cells name a column the import knows (a field, a synonym, a
 * `metadata.<key>` or a `--map` source): how a header row is told from a title row above it.
 */
export function knownColumns(
  names: readonly string[],
  map: Readonly<Record<string, string>> = {},
): number {
  let known = 0;
  for (const source of names) {
    const name = source.trim();
    if (name === "") continue;
    if (Object.hasOwn(map, name) || canonicalField(name) || fieldOfHeader(name).field) known += 1;
  }
  return known;
}
