import type { OrderItem } from "../api/schemas.js";
import type { Ledger } from "../ledger/ledger.js";
import type { LedgerRow, RepeatOf } from "../ledger/types.js";
import { maskEmails } from "../log.js";
import { productLabel } from "../orders/order-row.js";
import { type PayeeRow, paidFingerprint } from "../orders/paid-fingerprint.js";

/**
 * Statuses of a row that has its own order on the service, or may have: a payment another order
 * of the same person, card and amount would repeat. A row queued, failed_final or cancelled paid
 * nothing (yet).
 */
const PAID_OR_MAYBE = new Set(["completed", "submitted", "in_flight", "failed_uncertain"]);

/** How an item is shown: as `orders report` shows a row's product, the e-mail masked. */
export interface ItemShown {
  product: string;
  face_value: string;
  /** EMAIL, PAYOUT_LINK or RECIPIENT. */
  distribution: string;
  email?: string;
}

/** An item of an order not the campaign's: who it pays what (the paid fingerprint), as shown. */
export interface PaidItem {
  /** paidFingerprint; undefined when the item names nobody (a link) or is of a shape unknown. */
  payment: string | undefined;
  shown: ItemShown;
  /**
   * Read from another campaign's ledger: the repeat marks of the row it was made from (null:
   * none). Absent on an item read from the service, whose row is not known.
   */
  ledgerMarks?: RepeatOf | null;
}

/** A row of the campaign an item pays again, with its order's status. */
export interface RowPaid {
  line: number;
  status: string;
}

const ROW_DISTRIBUTIONS = { email: "EMAIL", link: "PAYOUT_LINK", recipient: "RECIPIENT" } as const;

/** Who a ledger row pays what; undefined when it names nobody. */
export function rowPayment(row: LedgerRow): string | undefined {
  try {
    return paidFingerprint(row, row.currency);
  } catch {
    // A face value that is no decimal: it pays nothing another order could repeat.
    return undefined;
  }
}

/** A row of another campaign's ledger as an item of its order. */
export function rowItem(row: LedgerRow): PaidItem {
  return {
    payment: rowPayment(row),
    shown: {
      product: productLabel(row),
      face_value: row.face_value,
      distribution: ROW_DISTRIBUTIONS[row.distribution ?? "email"],
      ...(row.email ? { email: maskEmails(row.email.toLowerCase()) } : {}),
    },
    ledgerMarks: row.repeat_of ?? null,
  };
}

type ProductFields = Pick<PayeeRow, "product_code" | "product_codes" | "selection_template_id">;

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

/**
 * An item the service shows, as a row it could have been made from: its e-mail address, else
 * its recipient reference (a payout link names nobody on the service: no payment).
 */
export function serviceItem(item: OrderItem, currency: string | undefined): PaidItem {
  const fields = productFields(item.products);
  const method = item.distribution_method;
  const email = method?.email_address ?? "";
  const recipient = method?.recipient_reference;
  const shown: ItemShown = {
    product: fields ? productLabel(fields) : String(item.products?.type ?? ""),
    face_value: String(item.face_value ?? ""),
    distribution: method?.type ?? "",
    ...(email ? { email: maskEmails(email.toLowerCase()) } : {}),
  };
  if (!fields || !currency) return { payment: undefined, shown };
  const row: PayeeRow = {
    ...fields,
    email,
    face_value: String(item.face_value ?? ""),
    ...(typeof recipient === "string" && !email ? { recipient_reference: recipient } : {}),
  };
  try {
    return { payment: paidFingerprint(row, currency), shown };
  } catch {
    return { payment: undefined, shown };
  }
}

/** Whether `marks` name a row of `campaign`. */
export function marksName(marks: RepeatOf | undefined, campaign: string): boolean {
  return marks?.rows.some((row) => row.campaign === campaign) ?? false;
}

interface CampaignRow {
  line: number;
  order: number;
  marks: RepeatOf | undefined;
}

/**
 * The campaign's rows by who they pay what (docs/architecture/keys-and-exactly-once.md,
 * "Reconciling with the service"), read in one pass over its rows and orders when first needed.
 * `planned`: the statuses reconcile is about to settle orders to, over those read.
 */
export class CampaignPayments {
  private readonly byPayment = new Map<string, CampaignRow[]>();
  private readonly statuses = new Map<number, string>();

  private constructor(readonly campaign: string) {}

  static async read(
    ledger: Ledger,
    campaign: string,
    planned: ReadonlyMap<number, string> = new Map(),
  ): Promise<CampaignPayments> {
    const payments = new CampaignPayments(campaign);
    for await (const [number, order] of ledger.orders.all(campaign))
      payments.statuses.set(number, planned.get(number) ?? order.status);
    for await (const [, row] of ledger.orders.rows(campaign)) {
      const payment = rowPayment(row);
      if (payment === undefined) continue;
      const list = payments.byPayment.get(payment) ?? [];
      list.push({ line: row.line, order: row.order, marks: row.repeat_of });
      payments.byPayment.set(payment, list);
    }
    for (const list of payments.byPayment.values()) list.sort((a, b) => a.line - b.line);
    return payments;
  }

  /** The rows paying `payment`: all of them, or only those with their own order. */
  rows(payment: string | undefined, ownOrder: boolean): (CampaignRow & RowPaid)[] {
    const rows = payment === undefined ? [] : (this.byPayment.get(payment) ?? []);
    return rows
      .map((row) => ({ ...row, status: this.statuses.get(row.order) ?? "unknown" }))
      .filter((row) => !ownOrder || PAID_OR_MAYBE.has(row.status));
  }
}
