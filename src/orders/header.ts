import type { RowError } from "./row-error.js";

/** The fields an order row may hold besides `metadata.<key>` columns. */
export const ORDER_FIELDS = [
  "email",
  "product_code",
  "face_value",
  "template_id",
  "description",
  "reference",
] as const;

export const REQUIRED_FIELDS = ["email", "product_code", "face_value"] as const;

export const METADATA_PREFIX = "metadata.";

/** The header line after `--map`: the field of each column, in file order. */
export type ResolvedHeader = { ok: true; fields: string[] } | { ok: false; errors: RowError[] };

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
  const label = source.trim() ? JSON.stringify(source.trim()) : `number ${index + 1} (no name)`;
  return (
    `unknown column ${label}: expected ${ORDER_FIELDS.join(", ")} or metadata.<key>` +
    ` (rename a column with --map 'Header=field')`
  );
}

/**
 * Checks the header and renames columns by `map` (source header -> field) before the checks.
 * `line` is the physical line the header is on, 1 unless blank lines precede it.
 */
export function resolveHeader(
  names: readonly string[],
  map: Readonly<Record<string, string>> = {},
  line = 1,
): ResolvedHeader {
  const single = names.length === 1 ? names[0] : undefined;
  if (single?.includes(";")) {
    // A one-column header holding ';' is a ';' file read with ','; say so, not "unknown column".
    const message = `the header has one column ${JSON.stringify(single)}: is the file ';'-separated? use --delimiter ';'`;
    return { ok: false, errors: [{ line, column: "", message }] };
  }
  const errors: RowError[] = [];
  const fields: string[] = [];
  const seen = new Map<string, string>();
  names.forEach((source, index) => {
    const target = map[source.trim()] ?? source;
    const field = canonicalField(target);
    if (field === undefined) {
      errors.push({ line, column: source.trim(), message: unknownMessage(target, index) });
      fields.push("");
      return;
    }
    const earlier = seen.get(field);
    if (earlier !== undefined) {
      const both =
        earlier === source.trim()
          ? ""
          : ` (columns ${JSON.stringify(earlier)} and ${JSON.stringify(source.trim())})`;
      errors.push({ line, column: field, message: `duplicate column ${field}${both}` });
    }
    seen.set(field, source.trim());
    fields.push(field);
  });
  for (const required of REQUIRED_FIELDS) {
    if (!seen.has(required)) {
      errors.push({ line, column: required, message: `missing required column ${required}` });
    }
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, fields };
}
