import type { Order } from "../api/schemas.js";
import type { RowStatus } from "../ledger/row-status.js";
import type { LedgerOrder, LedgerRow } from "../ledger/types.js";
import { canonicalDecimal } from "../money.js";

/**
 * An item as both sides can tell it: face value and e-mail address (products are left out: the
 * service shows a choice of products or a template in shapes of its own).
 */
function itemSignature(faceValue: unknown, email: unknown): string {
  let face = String(faceValue ?? "");
  try {
    face = canonicalDecimal(face);
  } catch {
    // Not a decimal: compared as it is.
  }
  return `${face}|${String(email ?? "").toLowerCase()}`;
}

function sortedSignatures(signatures: string[]): string {
  return JSON.stringify([...signatures].sort());
}

function sameRecord(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => String(a[k]) === String(b[k]));
}

/** What the body of a ledger order was: the parts an order on the service shows. */
export interface SentBody {
  currency: string | undefined;
  description: string | null;
  metadata: Record<string, string>;
  items: string;
}

/** The body `order` was sent with, as far as a service order can be compared with it. */
export function sentBody(order: LedgerOrder, rows: readonly (LedgerRow | undefined)[]): SentBody {
  return {
    currency: order.currency,
    description: order.description ?? null,
    metadata: order.metadata ?? {},
    items: sortedSignatures(rows.map((row) => itemSignature(row?.face_value, row?.email))),
  };
}

/**
 * Whether `order` on the service could have been made from `body`: same currency,
 * description, metadata and items (face values and e-mail addresses, in any order). A service
 * order that differs in any of them was not made under that body's key (a key replays only its
 * own body), which is what lets `orders reconcile` call a failed_uncertain order absent.
 */
export function couldBe(body: SentBody, order: Order): boolean {
  const currency = order.currency ?? order.payment_method?.currency ?? undefined;
  if (body.currency !== undefined && currency && currency !== body.currency) return false;
  if ((order.description ?? null) !== body.description) return false;
  if (!sameRecord(body.metadata, order.metadata ?? {})) return false;
  const items = order.items.map((item) =>
    itemSignature(item.face_value, item.distribution_method?.email_address),
  );
  return sortedSignatures(items) === body.items;
}

/**
 * What a ledger status says beside the service's status of the same order id: `ok`, `behind`
 * (the ledger has not yet recorded an end the service reached: a follower will), or `disagree`.
 */
export function compareStatus(ledger: RowStatus, service: string): "ok" | "behind" | "disagree" {
  if (ledger === "completed") return service === "COMPLETED" ? "ok" : "disagree";
  if (ledger === "failed_final") return service === "FAILED" ? "ok" : "disagree";
  if (ledger === "submitted" || ledger === "queued" || ledger === "in_flight")
    return service === "PROCESSING" ? "ok" : "behind";
  if (ledger === "cancelled") return service === "COMPLETED" ? "disagree" : "ok";
  // failed_uncertain with an order id: settled by reconcile, not compared.
  return "ok";
}
