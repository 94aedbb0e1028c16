import type { CatalogDiff, DiffChange } from "./catalog-diff.js";

function value(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

function changeLine(change: DiffChange): string {
  const fields = Object.entries(change.fields).map(
    ([field, c]) => `${field} ${value(c?.old)} -> ${value(c?.new)}`,
  );
  return `  ~ ${change.code}: ${fields.join("; ")}`;
}

/** One line: `+3 added, -1 removed, ~2 changed (since SNAPSHOT)`. */
export function diffSummaryLine(diff: Pick<CatalogDiff, "from" | "summary">): string {
  const { added, removed, changed } = diff.summary;
  const since = diff.from ? `since ${diff.from}` : "first snapshot";
  return `+${added} added, -${removed} removed, ~${changed} changed (${since})`;
}

/** The diff for a terminal: the summary line, then up to `limit` lines of each kind. */
export function diffText(diff: CatalogDiff, limit = 20): string {
  const lines = [diffSummaryLine(diff)];
  const section = <T>(items: T[], line: (item: T) => string) => {
    for (const item of items.slice(0, limit)) lines.push(line(item));
    if (items.length > limit) lines.push(`  … and ${items.length - limit} more (see --json)`);
  };
  section(diff.added, (a) => `  + ${a.code} ${value(a.name)}`);
  section(diff.removed, (r) => `  - ${r.code} ${value(r.name)}`);
  section(diff.changed, changeLine);
  return lines.join("\n");
}
