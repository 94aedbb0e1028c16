import type { Ledger, LedgerOrder } from "../ledger/ledger.js";
import { maskEmails } from "../log.js";
import { productLabel } from "../orders/order-row.js";

/** The row statuses the campaign page lists: the rows an operator has to look at. */
export const FAILURE_STATUSES = ["failed_final", "failed_uncertain", "cancelled"] as const;
export type FailureStatus = (typeof FAILURE_STATUSES)[number];

const PAGE_SIZE = 100;

/** One listed row, e-mail masked. */
interface FailureRow {
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

/** Rows of one status that failed for one reason (error type and masked message). */
export interface FailureGroup {
  status: FailureStatus;
  error_type: string;
  error_message: string;
  rows: number;
  /** The first few file lines of the group, in order. */
  lines: number[];
}

/** File lines a group names before "and N more". */
const GROUP_LINES = 5;

export interface FailurePage {
  rows: FailureRow[];
  /** Every row of the listed statuses grouped by reason, the largest group first. */
  groups: FailureGroup[];
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
  for await (const [number, order] of ledger.orders.all(campaign)) {
    if (!wanted.has(order.status)) continue;
    orders.set(number, order);
    identities.push(...order.identities);
  }
  const lines: ListedLine[] = [];
  for (let i = 0; i < identities.length; i += BATCH) {
    const batch = identities.slice(i, i + BATCH);
    const rows = await ledger.orders.getRows(campaign, batch);
    for (const [j, row] of rows.entries()) {
      // A row moved on to a later generation's order is listed under that one, if at all.
      if (row && orders.has(row.order))
        lines.push({ line: row.line, identity: batch[j]!, order: row.order });
    }
  }
  lines.sort((a, b) => a.line - b.line);
  const groups = groupsOf(lines, orders);
  const pages = Math.max(1, Math.ceil(lines.length / PAGE_SIZE));
  const current = Math.min(Math.max(1, page), pages);
  const slice = lines.slice((current - 1) * PAGE_SIZE, current * PAGE_SIZE);
  const rows = await ledger.orders.getRows(
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
  return { rows: listed, groups, total: lines.length, page: current, pages };
}

interface ListedLine {
  line: number;
  identity: string;
  order: number;
}

/**
 * The rows grouped by status, error type and message (e-mails masked), so 25 rows refused for
 * one reason read as one line with its count (docs/architecture/operators.md, "The dashboard").
 * `lines` must be in file-line order.
 */
function groupsOf(lines: ListedLine[], orders: Map<number, LedgerOrder>): FailureGroup[] {
  const groups = new Map<string, FailureGroup>();
  for (const { line, order: number } of lines) {
    const order = orders.get(number)!;
    const status = order.status as FailureStatus;
    const error_type = order.error_type ?? "";
    const error_message = maskEmails(order.error_message ?? "");
    const key = JSON.stringify([status, error_type, error_message]);
    const group = groups.get(key) ?? { status, error_type, error_message, rows: 0, lines: [] };
    group.rows += 1;
    if (group.lines.length < GROUP_LINES) group.lines.push(line);
    groups.set(key, group);
  }
  return [...groups.values()].sort((a, b) => b.rows - a.rows || a.lines[0]! - b.lines[0]!);
}
