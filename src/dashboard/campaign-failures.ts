import type { Ledger, LedgerOrder } from "../ledger/ledger.js";
import { maskEmails } from "../log.js";
import { productLabel } from "../orders/order-row.js";

/** The row statuses the campaign page lists: the rows an operator has to look at. */
export const FAILURE_STATUSES = ["failed_final", "failed_uncertain", "cancelled"] as const;
export type FailureStatus = (typeof FAILURE_STATUSES)[number];

export const PAGE_SIZE = 100;

/** One listed row, e-mail masked. */
export interface FailureRow {
  line: number;
  reference: string;
  email: string;
  product_code: string;
  face_value: string;
  currency: string;
  status: FailureStatus;
  error_type: string;
  error_message: string;
}

export interface FailurePage {
  rows: FailureRow[];
  /** Rows of the listed statuses in the whole campaign. */
  total: number;
  /** 1-based; clamped to the pages there are. */
  page: number;
  pages: number;
}

const BATCH = 500;

/**
 * The campaign's rows in `statuses`, in file-line order, one page of `PAGE_SIZE`. Reads every
 * order (HSCAN), then the lines of the failing rows only (HMGET in batches), then the whole
 * rows of the page.
 */
export async function failurePage(
  ledger: Ledger,
  campaign: string,
  statuses: readonly FailureStatus[],
  page: number,
): Promise<FailurePage> {
  const wanted = new Set<string>(statuses);
  const orders = new Map<number, LedgerOrder>();
  const identities: string[] = [];
  for await (const [number, order] of ledger.orders(campaign)) {
    if (!wanted.has(order.status)) continue;
    orders.set(number, order);
    identities.push(...order.identities);
  }
  const lines: { line: number; identity: string }[] = [];
  for (let i = 0; i < identities.length; i += BATCH) {
    const batch = identities.slice(i, i + BATCH);
    const rows = await ledger.getRows(campaign, batch);
    for (const [j, row] of rows.entries()) {
      // A row moved on to a later generation's order is listed under that one, if at all.
      if (row && orders.has(row.order)) lines.push({ line: row.line, identity: batch[j]! });
    }
  }
  lines.sort((a, b) => a.line - b.line);
  const pages = Math.max(1, Math.ceil(lines.length / PAGE_SIZE));
  const current = Math.min(Math.max(1, page), pages);
  const slice = lines.slice((current - 1) * PAGE_SIZE, current * PAGE_SIZE);
  const rows = await ledger.getRows(
    campaign,
    slice.map((l) => l.identity),
  );
  const listed: FailureRow[] = [];
  for (const row of rows) {
    if (!row) continue;
    const order = orders.get(row.order)!;
    listed.push({
      line: row.line,
      reference: maskEmails(row.reference ?? ""),
      email: maskEmails(row.email),
      product_code: productLabel(row),
      face_value: row.face_value,
      currency: row.currency,
      status: order.status as FailureStatus,
      error_type: order.error_type ?? "",
      error_message: maskEmails(order.error_message ?? ""),
    });
  }
  return { rows: listed, total: lines.length, page: current, pages };
}
