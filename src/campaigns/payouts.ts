import type { ApiClient } from "../api/client.js";
import { ApiError } from "../api/errors/index.js";
import type { Order } from "../api/schemas.js";
import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";
import type { LedgerOrder } from "../ledger/types.js";
import { type LookupPace, Lookups } from "./lookups.js";
import { payoutCell, payoutSummary } from "./payout-cells.js";
import { REPORT_COLUMNS, reportRecords } from "./report.js";
import { lookUpOrder } from "./service-orders.js";
import { storedState } from "./state.js";

export interface PayoutsOptions {
  pace?: LookupPace;
  onProgress?: (done: number, total: number) => void;
}

export interface PayoutsResult {
  campaign: string;
  /** Completed orders whose payouts were read and recorded. */
  orders: number;
  rows: number;
  /** Rows by payout status, as just read. */
  by_status: Record<string, number>;
  /** Completed orders that could not be read (the service does not know them, or failed). */
  failed: { ledger_order: number; order_id: string; error: string }[];
  /** Requests made to the service, retries included. */
  requests: number;
}

/**
 * `orders payouts`: reads each completed order of the campaign again (GET /v2/order/{id}, one per
 * order, within the read budget: a campaign of 20,000 rows in orders of 100 is 200 requests) and
 * records its rows' payout status and expiry in the ledger (LedgerOrder.payouts, never a URL),
 * for `orders report` and `--unclaimed`.
 */
export async function refreshPayouts(
  ledger: Ledger,
  client: ApiClient,
  campaign: string,
  options: PayoutsOptions = {},
): Promise<PayoutsResult> {
  if (storedState(await ledger.campaigns.meta(campaign)) === "archived")
    throw new UserError(`campaign ${campaign} is archived: orders restore it first`);
  const completed: [number, string][] = [];
  for await (const [number, order] of ledger.orders.all(campaign))
    if (order.status === "completed" && order.order_id) completed.push([number, order.order_id]);
  const lookups = new Lookups(options.pace);
  const result: PayoutsResult = {
    campaign,
    orders: 0,
    rows: 0,
    by_status: {},
    failed: [],
    requests: 0,
  };
  let done = 0;
  options.onProgress?.(0, completed.length);
  await lookups.forEach(completed, async ([number, id]) => {
    try {
      const lookup = await lookUpOrder(client, lookups, id);
      if (lookup?.kind !== "order") throw new Error(lookup ? "still processing" : "not found");
      const cells = await recordPayouts(ledger, campaign, number, lookup.order);
      if (cells) count(result, cells);
    } catch (error) {
      // A refused key, say: every other order would fail the same way.
      if (error instanceof ApiError && error.outcome === "systemic") throw error;
      const message = error instanceof Error ? error.message : String(error);
      result.failed.push({ ledger_order: number, order_id: id, error: message });
    }
    done += 1;
    options.onProgress?.(done, completed.length);
  });
  result.failed.sort((a, b) => a.ledger_order - b.ledger_order);
  result.requests = lookups.started;
  return result;
}

function count(result: PayoutsResult, cells: string[]): void {
  result.orders += 1;
  result.rows += cells.length;
  for (const cell of cells) {
    const status = cell.split("|")[0] || "unknown";
    result.by_status[status] = (result.by_status[status] ?? 0) + 1;
  }
}

/** The cells of the order's rows, each found by its item id (by position when ids are missing). */
function cellsOf(record: LedgerOrder, order: Order): string[] {
  const byId = new Map(order.items.map((item) => [item.id, item]));
  return record.identities.map((_, i) => {
    const id = record.item_ids?.[i];
    const item = (id !== undefined ? byId.get(id) : undefined) ?? order.items[i];
    return payoutCell(item?.payout);
  });
}

/** Records the payouts of a completed order; undefined when it is no longer completed. */
async function recordPayouts(
  ledger: Ledger,
  campaign: string,
  number: number,
  order: Order,
): Promise<string[] | undefined> {
  const record = await ledger.orders.getOrder(campaign, number);
  if (!record || record.order_id !== order.id) return undefined;
  const cells = cellsOf(record, order);
  const moved = await ledger.orders.transition({
    campaign,
    number,
    from: ["completed"],
    to: "completed",
    patch: {
      payouts: cells,
      payouts_at: new Date().toISOString(),
      payout_status: payoutSummary(cells) ?? null,
    },
  });
  return moved.moved ? cells : undefined;
}

/** The columns of `--unclaimed`: the report's, but for the status, error and key columns. */
export const UNCLAIMED_COLUMNS = [
  "line",
  "reference",
  "email",
  "product_code",
  "face_value",
  "currency",
  "order_id",
  "item_id",
  "payout_status",
  "expires_at",
] as const;

/**
 * The rows to remind: completed, their payout link ACTIVE (not claimed, cancelled or expired) as
 * last read, soonest expiry first; cells as the report writes them (neutralised), no URL.
 */
export async function unclaimedRows(ledger: Ledger, campaign: string): Promise<string[][]> {
  const at = (name: (typeof REPORT_COLUMNS)[number]) => REPORT_COLUMNS.indexOf(name);
  const rows: string[][] = [];
  for await (const cells of reportRecords(ledger, campaign)) {
    if (cells[at("status")] !== "completed" || cells[at("payout_status")] !== "ACTIVE") continue;
    rows.push(UNCLAIMED_COLUMNS.map((name) => cells[at(name)] ?? ""));
  }
  const expiry = UNCLAIMED_COLUMNS.indexOf("expires_at");
  // Soonest first; links without an expiry last. ISO times sort as text.
  const key = (row: string[]) => row[expiry] || "~";
  return rows.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
