import { createWriteStream } from "node:fs";
import { mkdir, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { pipeline } from "node:stream/promises";
import { stringify } from "csv-stringify";
import { fsyncPath } from "../catalog/durable-files.js";
import { itemIdOf } from "../ledger/codec.js";
import type { Ledger, LedgerOrder, LedgerRow } from "../ledger/ledger.js";
import type { RepeatOf } from "../ledger/types.js";
import { shownMoney } from "../money.js";
import { productLabel } from "../orders/order-row.js";
import { plural } from "../plural.js";
import { rowPayout } from "./payout-cells.js";

export const REPORT_COLUMNS = [
  "line",
  "reference",
  "email",
  "product_code",
  "face_value",
  "currency",
  "status",
  "order_id",
  "item_id",
  "idempotency_key",
  "error_type",
  "error_message",
  "replayed",
  // Appended: the columns before keep their places. See `orders payouts`.
  "payout_status",
  "expires_at",
  // Appended too: see repeatOfText.
  "repeat_of",
] as const;

/**
 * A cell a spreadsheet would run as a formula (= + - @, or tab/CR that some apps strip first)
 * gets a leading apostrophe: the report is data, never code.
 */
export function neutralise(cell: string): string {
  return /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/** One report line per row, in file-line order. */
export async function* reportRecords(ledger: Ledger, campaign: string): AsyncGenerator<string[]> {
  const rows: [string, LedgerRow][] = [];
  for await (const entry of ledger.orders.rows(campaign)) rows.push(entry);
  // Rows of different files can share a line: the identity settles their order, so the same
  // ledger gives the same report however its hash is laid out (a restored archive, say).
  rows.sort((a, b) => a[1].line - b[1].line || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const orderCache = new Map<number, LedgerOrder | undefined>();
  for (let i = 0; i < rows.length; i += 500) {
    const batch = rows.slice(i, i + 500);
    const missing = [...new Set(batch.map(([, r]) => r.order).filter((n) => !orderCache.has(n)))];
    const orders = await ledger.orders.getOrders(campaign, missing);
    for (const [j, n] of missing.entries()) orderCache.set(n, orders[j]);
    for (const [identity, row] of batch) yield recordOf(identity, row, orderCache.get(row.order));
    if (orderCache.size > 20_000) orderCache.clear();
  }
}

function recordOf(identity: string, row: LedgerRow, order: LedgerOrder | undefined): string[] {
  const cells = [
    String(row.line),
    row.reference ?? "",
    row.email,
    // A choice shows its codes (A|B) or its template; the code of a row of one product.
    productLabel(row),
    // Money as money: the same amount reads the same from every file (docs/order-files.md).
    shownMoney(row.face_value, row.currency),
    row.currency,
    order?.status ?? "unknown",
    order?.order_id ?? "",
    (order && itemIdOf(order, identity)) ?? "",
    order?.key ?? "",
    order?.error_type ?? "",
    order?.error_message ?? "",
    // The service answered with an order made before this campaign existed (see isReplay).
    order?.replayed ? "yes" : "",
  ];
  const payout = rowPayout(order, identity);
  cells.push(payout.status, payout.expires_at, repeatOfText(row.repeat_of));
  return cells.map(neutralise);
}

/**
 * The `repeat_of` cell (docs/commands.md, "Importing"): the rows of other campaigns a row
 * recorded with --allow-repeats pays again, oldest first, a campaign's consecutive rows together:
 * `gifts line 12`, `gifts lines 12, 13; q3 line 4`, `...; and 3 older rows` past the ones kept.
 * Campaign names hold no space or `;` (CAMPAIGN_NAME), so the cell reads back one way. Empty for
 * a row that repeats none.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function repeatOfText(repeat: RepeatOf | undefined): string {
  if (!repeat) return "";
  const groups: { campaign: string; lines: number[] }[] = [];
  for (const { campaign, line } of repeat.rows) {
    const last = groups.at(-1);
    if (last?.campaign === campaign) last.lines.push(line);
    else groups.push({ campaign, lines: [line] });
  }
  const parts = groups.map(
    (g) => `${g.campaign} ${g.lines.length === 1 ? "line" : "lines"} ${g.lines.join(", ")}`,
  );
  if (repeat.more) parts.push(`and ${repeat.more} older ${plural(repeat.more, "row")}`);
  return parts.join("; ");
}

/**
 * Writes the report CSV atomically (temporary file, then rename). Returns the row count. With
 * `durable` (an archive's copy) the file is flushed before the rename and its folder after.
 */
export async function writeReport(
  ledger: Ledger,
  campaign: string,
  path: string,
  options: { durable?: boolean } = {},
): Promise<number> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}`;
  let count = 0;
  async function* counted() {
    for await (const record of reportRecords(ledger, campaign)) {
      count += 1;
      yield record;
    }
  }
  await pipeline(
    counted(),
    stringify({ header: true, columns: [...REPORT_COLUMNS] }),
    createWriteStream(temporary),
  );
  if (options.durable) await fsyncPath(temporary);
  await rename(temporary, path);
  if (options.durable) await fsyncPath(dirname(path));
  return count;
}
