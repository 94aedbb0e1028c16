import type { ListedOrder } from "../api/order-list.js";
import type { Order, OrderItem } from "../api/schemas.js";
import type { Ledger } from "../ledger/ledger.js";
import type { LedgerRow } from "../ledger/types.js";
import { maskEmails } from "../log.js";
import {
  canonicalDecimal,
  currencyDecimals,
  decimalPlaces,
  fromUnits,
  isPlainDecimal,
  toUnits,
} from "../money.js";
import { productLabel } from "../orders/order-row.js";
import { tagsOf } from "../orders/order-tags.js";

/** Rows shown per look-alike item; `rows_count` says how many the item looks like. */
const ROWS_SHOWN = 20;

/** A row of the campaign a look-alike item looks like. */
export interface LookalikeRow {
  line: number;
  /** Its order's status in the ledger. */
  status: string;
  /** The item goes to the row's own e-mail address (compared, never shown). */
  same_email: boolean;
}

/** An item of a look-alike order that looks like rows of the campaign. */
export interface LookalikeItem {
  /** As the report shows a row's: the code, the codes of a choice (A|B), `template ID`. */
  product: string;
  face_value: string;
  /** EMAIL, PAYOUT_LINK or RECIPIENT. */
  distribution: string;
  /** Its e-mail address, masked (j***@example.com). */
  email?: string;
  rows_count: number;
  /** The first rows it looks like: same e-mail first, then by line. */
  rows: LookalikeRow[];
}

/** An order of the window not in the ledger, with items like the campaign's rows. */
export interface LookalikeEntry {
  order_id: string;
  status: string;
  created_at: string | null;
  currency: string | null;
  total_price: string | null;
  /** The giftjobs campaign its metadata names, when another campaign made it. */
  tagged_campaign?: string;
  items: LookalikeItem[];
}

/** The window's other orders of the account: how many, how many FAILED, what the rest cost. */
export interface OtherOrders {
  count: number;
  failed: number;
  /** Per currency, the total_price of those not FAILED (decimal strings). */
  totals: Record<string, string>;
}

/** What an item is, as both the service and the ledger can tell it. */
interface ItemLook {
  /** Currency, distribution type, products and face value: equal for a look-alike. */
  look: string;
  product: string;
  face_value: string;
  distribution: string;
  /** Lower case, to compare with rows' addresses; only its masked form is ever shown. */
  email?: string;
}

/** A service order the campaign does not own, as far as look-alikes need it. */
export interface Outsider {
  summary: Omit<LookalikeEntry, "items">;
  items: ItemLook[];
}

type ProductFields = Pick<LedgerRow, "product_code" | "product_codes" | "selection_template_id">;

const ROW_DISTRIBUTIONS = { email: "EMAIL", link: "PAYOUT_LINK", recipient: "RECIPIENT" } as const;

/** The codes of a choice are compared in any order: another tool may list them otherwise. */
function productKey(fields: ProductFields): string {
  if (fields.product_codes) return `MULTIPLE ${[...fields.product_codes].sort().join("|")}`;
  if (fields.selection_template_id !== undefined) return `TEMPLATE ${fields.selection_template_id}`;
  return `SINGLE ${fields.product_code}`;
}

function canonicalFace(value: unknown): string {
  const text = String(value ?? "");
  return isPlainDecimal(text) ? canonicalDecimal(text) : text;
}

function lookOf(currency: string, distribution: string, fields: ProductFields, face: unknown) {
  return JSON.stringify([currency, distribution, productKey(fields), canonicalFace(face)]);
}

/** A row's look (see ItemLook). */
export function rowLook(row: LedgerRow): string {
  const distribution = ROW_DISTRIBUTIONS[row.distribution ?? "email"];
  return lookOf(row.currency, distribution, row, row.face_value);
}

/** The service's `products` of an item as a row holds them; undefined for a shape unknown. */
function productFields(products: OrderItem["products"]): ProductFields | undefined {
  if (products?.type === "SINGLE" && typeof products.value === "string")
    return { product_code: products.value };
  if (products?.type === "MULTIPLE" && Array.isArray(products.values))
    return { product_code: "", product_codes: products.values.map(String) };
  if (products?.type === "TEMPLATE" && typeof products.template_id === "string")
    return { product_code: "", selection_template_id: products.template_id };
  return undefined;
}

function itemLook(item: OrderItem, orderCurrency: string | undefined): ItemLook | undefined {
  const fields = productFields(item.products);
  const currency = orderCurrency ?? item.currency ?? undefined;
  if (!fields || !currency) return undefined;
  const distribution = item.distribution_method?.type ?? "";
  const email = item.distribution_method?.email_address ?? undefined;
  return {
    look: lookOf(currency, distribution, fields, item.face_value),
    product: productLabel(fields),
    face_value: String(item.face_value ?? ""),
    distribution,
    ...(email ? { email: email.toLowerCase() } : {}),
  };
}

/** An order of the window read from the service and not the campaign's. */
export function outsiderOf(order: Order): Outsider {
  const currency = order.currency ?? order.payment_method?.currency ?? undefined;
  const tagged = tagsOf(order.metadata)?.campaign;
  return {
    summary: {
      order_id: order.id,
      status: order.status,
      created_at: order.created_at ?? null,
      currency: currency ?? null,
      total_price: order.total_price ?? null,
      ...(tagged !== undefined ? { tagged_campaign: tagged } : {}),
    },
    items: order.items.flatMap((item) => itemLook(item, currency) ?? []),
  };
}

/** A listed order not read (another currency than the campaign's): it cannot look alike. */
export function unreadOutsider(order: ListedOrder): Outsider {
  return {
    summary: {
      order_id: order.id,
      status: order.status,
      created_at: order.created_at ?? null,
      currency: order.currency ?? null,
      total_price: order.total_price ?? null,
    },
    items: [],
  };
}

interface RowSeen {
  line: number;
  order: number;
}

/** The campaign's rows of one look: by line, and by e-mail address (lower case). */
interface LookRows {
  byLine: RowSeen[];
  byEmail: Map<string, RowSeen[]>;
}

function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The campaign's rows of the looks asked for, read in one pass over its rows. */
async function rowsByLook(
  ledger: Ledger,
  campaign: string,
  looks: Set<string>,
): Promise<Map<string, LookRows>> {
  const found = new Map<string, LookRows>();
  if (looks.size === 0) return found;
  for await (const [, row] of ledger.orders.rows(campaign)) {
    const look = rowLook(row);
    if (!looks.has(look)) continue;
    let rows = found.get(look);
    if (!rows) {
      rows = { byLine: [], byEmail: new Map() };
      found.set(look, rows);
    }
    const seen = { line: row.line, order: row.order };
    rows.byLine.push(seen);
    if (row.email) pushTo(rows.byEmail, row.email.toLowerCase(), seen);
  }
  const byLine = (a: RowSeen, b: RowSeen) => a.line - b.line;
  for (const rows of found.values()) {
    rows.byLine.sort(byLine);
    for (const list of rows.byEmail.values()) list.sort(byLine);
  }
  return found;
}

/** The rows shown for an item: those of its e-mail address first, then by line (see ROWS_SHOWN). */
function shownRows(item: ItemLook, rows: LookRows): { row: RowSeen; same: boolean }[] {
  const same = (item.email && rows.byEmail.get(item.email)) || [];
  const shown = same.slice(0, ROWS_SHOWN).map((row) => ({ row, same: true }));
  const taken = new Set(same);
  for (const row of rows.byLine) {
    if (shown.length >= ROWS_SHOWN) break;
    if (!taken.has(row)) shown.push({ row, same: false });
  }
  return shown;
}

/** The status of each order of `numbers`, read now: reconcile may have just settled some. */
async function statusesOf(
  ledger: Ledger,
  campaign: string,
  numbers: number[],
): Promise<Map<number, string>> {
  const unique = [...new Set(numbers)];
  const statuses = new Map<number, string>();
  for (let i = 0; i < unique.length; i += 500) {
    const batch = unique.slice(i, i + 500);
    const orders = await ledger.orders.getOrders(campaign, batch);
    for (const [j, number] of batch.entries()) statuses.set(number, orders[j]?.status ?? "unknown");
  }
  return statuses;
}

/** The look-alike items of each look-alike order, with the rows they look like. */
async function lookalikeItems(
  ledger: Ledger,
  campaign: string,
  alike: { outsider: Outsider; items: ItemLook[] }[],
  rowsOf: Map<string, LookRows>,
): Promise<LookalikeEntry[]> {
  const picked = alike.map(({ outsider, items }) => ({
    outsider,
    items: items.map((item) => {
      const rows = rowsOf.get(item.look) as LookRows;
      return { item, count: rows.byLine.length, shown: shownRows(item, rows) };
    }),
  }));
  const orders = picked.flatMap((p) => p.items.flatMap((i) => i.shown.map((s) => s.row.order)));
  const statuses = await statusesOf(ledger, campaign, orders);
  return picked.map(({ outsider, items }) => ({
    ...outsider.summary,
    items: items.map(({ item, count, shown }) => ({
      product: item.product,
      face_value: item.face_value,
      distribution: item.distribution,
      ...(item.email !== undefined ? { email: maskEmails(item.email) } : {}),
      rows_count: count,
      rows: shown.map(({ row, same }) => ({
        line: row.line,
        status: statuses.get(row.order) ?? "unknown",
        same_email: same,
      })),
    })),
  }));
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

/**
 * The window's orders the campaign does not own, sorted: look-alikes, possible duplicates of
 * its rows (docs/commands.md, "Reconcile"), and the other orders, counted. A FAILED order paid
 * nothing: it never looks alike, and its price is not in the totals.
 */
export async function sortOutsiders(
  ledger: Ledger,
  campaign: string,
  outsiders: Outsider[],
): Promise<{ lookalikes: LookalikeEntry[]; other_orders: OtherOrders }> {
  const paid = outsiders.filter((o) => o.summary.status !== "FAILED");
  const looks = new Set(paid.flatMap((o) => o.items.map((item) => item.look)));
  const rowsOf = await rowsByLook(ledger, campaign, looks);
  const alike: { outsider: Outsider; items: ItemLook[] }[] = [];
  const other: OtherOrders = { count: 0, failed: 0, totals: {} };
  const totals = new Totals();
  for (const outsider of outsiders) {
    const { summary } = outsider;
    const failed = summary.status === "FAILED";
    const items = failed ? [] : outsider.items.filter((item) => rowsOf.has(item.look));
    if (items.length > 0) {
      alike.push({ outsider, items });
      continue;
    }
    other.count += 1;
    if (failed) other.failed += 1;
    else totals.add(summary.currency, summary.total_price);
  }
  other.totals = totals.result();
  const lookalikes = await lookalikeItems(ledger, campaign, alike, rowsOf);
  lookalikes.sort(
    (a, b) =>
      (a.created_at ?? "").localeCompare(b.created_at ?? "") ||
      a.order_id.localeCompare(b.order_id),
  );
  return { lookalikes, other_orders: other };
}
