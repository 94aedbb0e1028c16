import { writeFile } from "node:fs/promises";
import type { CatalogIndex, CatalogIndexEntry } from "../catalog/index-entry.js";

export interface SampleOptions {
  rows: number;
  /** Distinct products used. @defaultValue 4 */
  products?: number;
  /** Only products of this currency. @defaultValue the most common currency among candidates */
  currency?: string;
  /** Domain of the made-up recipients. @defaultValue example.com (reserved, never delivered) */
  domain?: string;
  /** Adds a `reference` column (`<prefix>-000001`). */
  referencePrefix?: string;
}

function orderable(entry: CatalogIndexEntry): boolean {
  return (
    entry.is_orderable &&
    entry.state === "LIVE" &&
    entry.denominations !== null &&
    entry.payout_type === "gift_card"
  );
}

/** A face value the product accepts: a fixed denomination, or the open range's minimum. */
function faceValueFor(entry: CatalogIndexEntry, i: number): string {
  const d = entry.denominations!;
  if (d.type === "fixed") return d.list[i % d.list.length]!;
  return d.min;
}

/**
 * Picks orderable gift cards of one currency, open and fixed denominations both where the
 * catalog has them, so a sample campaign exercises both kinds.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function pickSampleProducts(
  index: CatalogIndex,
  count = 4,
  currency?: string,
): CatalogIndexEntry[] {
  const candidates = Object.values(index.entries)
    .filter(orderable)
    .sort((a, b) => (a.code < b.code ? -1 : 1));
  const byCurrency = new Map<string, number>();
  for (const c of candidates) byCurrency.set(c.currency, (byCurrency.get(c.currency) ?? 0) + 1);
  const chosen = currency ?? [...byCurrency.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const pool = candidates.filter((c) => c.currency === chosen);
  const open = pool.filter((c) => c.denominations?.type === "open");
  const fixed = pool.filter((c) => c.denominations?.type === "fixed");
  const picked: CatalogIndexEntry[] = [];
  for (let i = 0; picked.length < count && (i < open.length || i < fixed.length); i++) {
    if (open[i]) picked.push(open[i]!);
    if (fixed[i] && picked.length < count) picked.push(fixed[i]!);
  }
  return picked;
}

/**
 * CSV text of `rows` valid order rows built from the snapshot's index.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function sampleCsv(index: CatalogIndex, options: SampleOptions): string {
  const products = pickSampleProducts(index, options.products ?? 4, options.currency);
  if (products.length === 0)
    throw new Error("the catalog snapshot has no orderable LIVE gift card to build a sample from");
  const domain = options.domain ?? "example.com";
  const header = options.referencePrefix
    ? "email,product_code,face_value,reference"
    : "email,product_code,face_value";
  const lines = [header];
  for (let i = 0; i < options.rows; i++) {
    const product = products[i % products.length]!;
    const cells = [
      `recipient-${String(i + 1).padStart(6, "0")}@${domain}`,
      product.code,
      faceValueFor(product, i),
    ];
    if (options.referencePrefix)
      cells.push(`${options.referencePrefix}-${String(i + 1).padStart(6, "0")}`);
    lines.push(cells.join(","));
  }
  return `${lines.join("\n")}\n`;
}

export async function writeSampleCsv(
  path: string,
  index: CatalogIndex,
  options: SampleOptions,
): Promise<void> {
  await writeFile(path, sampleCsv(index, options), "utf8");
}
