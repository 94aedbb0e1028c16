import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import type { CsvItem, ReadOrderRowsOptions } from "../../src/import/readers/csv-rows.js";
import { pickSampleProducts, sampleCsv } from "../../src/import/sample-csv.js";
import type { OrderRow } from "../../src/orders/order-row.js";
import type { CampaignEnv } from "./campaign-env.js";
import { readOrderRows } from "./read-items.js";

/** Feeds text in chunks of `chunk` bytes, so records straddle chunk boundaries. */
export function streamOf(text: string, chunk = 7): Readable {
  const bytes = Buffer.from(text, "utf8");
  const parts: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += chunk) parts.push(bytes.subarray(at, at + chunk));
  return Readable.from(parts);
}

export async function readAll(
  text: string,
  options: ReadOrderRowsOptions = {},
  chunk = 7,
): Promise<CsvItem[]> {
  const items: CsvItem[] = [];
  for await (const item of readOrderRows(streamOf(text, chunk), options)) items.push(item);
  return items;
}

/** A parsed order row; `overrides` replace its fields. */
export function row(overrides: Partial<OrderRow> = {}): OrderRow {
  return {
    line: 2,
    email: "jane@example.com",
    product_code: "AMZ-US",
    face_value: "25",
    template_source: "none",
    metadata: {},
    ...overrides,
  };
}

/** Writes `text` to `name` in the test's data dir; returns the path. */
export async function csvFile(env: CampaignEnv, name: string, text: string): Promise<string> {
  const path = join(env.dataDir, name);
  await writeFile(path, text, "utf8");
  return path;
}

/**
 * A valid CSV of `rows` rows, and the currency its products are sold in. With a reference
 * prefix, the rows have references and their recipients a domain of their own
 * (`PREFIX.example.com`): files of two prefixes pay different people, so one is no repeat of the
 * other (docs/architecture/repeats.md).
 */
export function validCsv(
  index: CatalogIndex,
  rows: number,
  referencePrefix?: string,
): { text: string; currency: string } {
  const currency = pickSampleProducts(index)[0]!.currency;
  const domain = referencePrefix
    ? `${referencePrefix.replace(/[^a-z0-9]/gi, "") || "ref"}.example.com`
    : undefined;
  return { text: sampleCsv(index, { rows, referencePrefix, currency, domain }), currency };
}

/** Moves each line after the header to a new place (a fixed shuffle, so runs are repeatable). */
export function shuffleLines(text: string): string {
  const [header, ...lines] = text.trimEnd().split("\n");
  const shuffled = lines
    .map((line, i) => ({ line, rank: (i * 7919) % lines.length }))
    .sort((a, b) => a.rank - b.rank)
    .map((x) => x.line);
  return `${[header, ...shuffled].join("\n")}\n`;
}

/** One row of a large generated file: the same rows whatever the file's kind. */
export interface LargeRow {
  email: string;
  code: string;
  /** The face value as the catalog writes it ("25.00"). */
  face: string;
  reference: string;
}

/**
 * `rows` valid rows (distinct e-mails and references) built from `products` of the snapshot's
 * products, one at a time: the CSV and .xlsx of the benches hold the same rows.
 */
export function* largeRows(
  index: CatalogIndex,
  rows: number,
  { products: count = 8, referencePrefix = "r-" } = {},
): Generator<LargeRow> {
  const products = pickSampleProducts(index, count);
  for (let j = 0; j < rows; j++) {
    const p = products[j % products.length]!;
    const d = p.denominations!;
    const face = d.type === "fixed" ? d.list[j % d.list.length]! : d.min;
    yield {
      email: `user-${j}@example.com`,
      code: p.code,
      face,
      reference: `${referencePrefix}${j}`,
    };
  }
}

/** Streams largeRows to `path` as CSV; the text never exists whole. */
export async function writeLargeCsv(
  index: CatalogIndex,
  path: string,
  rows: number,
  options: { products?: number; referencePrefix?: string } = {},
): Promise<void> {
  const out = createWriteStream(path);
  out.write("email,product_code,face_value,reference\n");
  let lines: string[] = [];
  for (const r of largeRows(index, rows, options)) {
    lines.push(`${r.email},${r.code},${r.face},${r.reference}`);
    if (lines.length < 1000) continue;
    if (!out.write(`${lines.join("\n")}\n`)) await once(out, "drain");
    lines = [];
  }
  if (lines.length > 0) out.write(`${lines.join("\n")}\n`);
  out.end();
  await once(out, "finish");
}

/** The currencies of orderable LIVE gift cards in the snapshot, most common first. */
function currenciesOf(index: CatalogIndex): string[] {
  const count = new Map<string, number>();
  for (const e of Object.values(index.entries)) {
    if (!e.is_orderable || e.state !== "LIVE" || !e.denominations) continue;
    if (e.payout_type !== "gift_card") continue;
    count.set(e.currency, (count.get(e.currency) ?? 0) + 1);
  }
  return [...count.entries()].sort((a, b) => b[1] - a[1]).map(([c]) => c);
}

/** A CSV of `rows` rows in each of two currencies, and those currencies. */
export function twoCurrencyCsv(
  index: CatalogIndex,
  rows: number,
): { text: string; currencies: [string, string] } {
  const [a, b] = currenciesOf(index);
  if (!a || !b) throw new Error("the test catalog has fewer than two currencies");
  const first = sampleCsv(index, { rows, currency: a, domain: "a.example.com" });
  const second = sampleCsv(index, { rows, currency: b, domain: "b.example.com" });
  const body = second.trimEnd().split("\n").slice(1).join("\n");
  return { text: `${first}${body}\n`, currencies: [a, b] };
}
