import { Readable } from "node:stream";
import {
  type CsvItem,
  type ReadOrderRowsOptions,
  readOrderRows,
} from "../../src/orders/csv-rows.js";
import type { OrderRow } from "../../src/orders/order-row.js";

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
