import type { ListedOrder } from "../api/order-list.js";
import type { Order } from "../api/schemas.js";
import { currencyDecimals, decimalPlaces, fromUnits, isPlainDecimal, toUnits } from "../money.js";
import { type CampaignPayments, type PaidItem, serviceItem } from "./reconcile-payments.js";
import type { OrderSummary, PaidAgainItem } from "./reconcile-siblings.js";

/** Rows shown per look-alike item; `rows_count` says how many it pays again. */
const ROWS_SHOWN = 20;

/**
 * An order of the window no giftjobs campaign made (no tags) that pays one of the campaign's
 * recipients the same product and face value as a row: a possible duplicate.
 */
export interface LookalikeEntry extends OrderSummary {
  items: PaidAgainItem[];
}

/** The window's other orders of the account: how many, how many FAILED, what the rest cost. */
export interface OtherOrders {
  count: number;
  failed: number;
  /** Per currency, the total_price of those not FAILED (decimal strings). */
  totals: Record<string, string>;
}

/** A service order no giftjobs campaign claims, as far as look-alikes need it. */
export interface Outsider {
  summary: OrderSummary;
  items: PaidItem[];
}

function paymentCurrency(order: ListedOrder | Order): string | null | undefined {
  return "payment_method" in order ? (order as Order).payment_method?.currency : undefined;
}

export function summaryOf(order: ListedOrder | Order): OrderSummary {
  return {
    order_id: order.id,
    status: order.status,
    created_at: order.created_at ?? null,
    currency: order.currency ?? paymentCurrency(order) ?? null,
    total_price: order.total_price ?? null,
  };
}

/** An order of the window read from the service, untagged and not the campaign's. */
export function outsiderOf(order: Order): Outsider {
  const summary = summaryOf(order);
  const currency = summary.currency ?? undefined;
  return { summary, items: order.items.map((item) => serviceItem(item, currency)) };
}

/** A listed order not read (another currency than the campaign's): it cannot look alike. */
export function unreadOutsider(order: ListedOrder): Outsider {
  return { summary: summaryOf(order), items: [] };
}

/** Sums prices per currency exactly, in integer units: never floats (src/money.ts). */
class Totals {
  private readonly amounts = new Map<string, string[]>();

  add(currency: string | null, price: string | null): void {
    if (!currency || !price || !isPlainDecimal(price)) return;
    const list = this.amounts.get(currency);
    if (list) list.push(price);
    else this.amounts.set(currency, [price]);
  }

  /** Each currency at its minor unit, or at more digits if a price has more. */
  result(): Record<string, string> {
    const totals: Record<string, string> = {};
    for (const [currency, prices] of [...this.amounts].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const scale = Math.max(currencyDecimals(currency), ...prices.map(decimalPlaces));
      const units = prices.reduce((sum, p) => sum + toUnits(p, scale), 0n);
      totals[currency] = fromUnits(units, scale);
    }
    return totals;
  }
}

/** The items of `outsider` that pay one of the campaign's rows' recipients the same card. */
function lookalikeItems(outsider: Outsider, payments: CampaignPayments): PaidAgainItem[] {
  return outsider.items.flatMap((item) => {
    const rows = payments.rows(item.payment, false);
    if (rows.length === 0) return [];
    const shown = rows.slice(0, ROWS_SHOWN).map(({ line, status }) => ({ line, status }));
    return [{ ...item.shown, rows_count: rows.length, rows: shown }];
  });
}

/**
 * The window's untagged orders the campaign does not own, sorted: look-alikes, possible
 * duplicates of its rows (same payee, product, face value and currency: docs/commands.md,
 * "Reconcile"), and the other orders, counted. A FAILED order paid nothing: it never looks
 * alike, and its price is not in the totals.
 */
export function sortOutsiders(
  outsiders: Outsider[],
  payments: CampaignPayments | undefined,
): { lookalikes: LookalikeEntry[]; other_orders: OtherOrders } {
  const lookalikes: LookalikeEntry[] = [];
  const other: OtherOrders = { count: 0, failed: 0, totals: {} };
  const totals = new Totals();
  for (const outsider of outsiders) {
    const { summary } = outsider;
    const failed = summary.status === "FAILED";
    const items = failed || !payments ? [] : lookalikeItems(outsider, payments);
    if (items.length > 0) {
      lookalikes.push({ ...summary, items });
      continue;
    }
    other.count += 1;
    if (failed) other.failed += 1;
    else totals.add(summary.currency, summary.total_price);
  }
  other.totals = totals.result();
  lookalikes.sort(
    (a, b) =>
      (a.created_at ?? "").localeCompare(b.created_at ?? "") ||
      a.order_id.localeCompare(b.order_id),
  );
  return { lookalikes, other_orders: other };
}
