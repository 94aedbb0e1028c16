import type { CompletedOrder } from "../api/schemas.js";
import type { Ledger } from "../ledger/ledger.js";
import type { ReportedEnd } from "../ledger/types.js";
import type { Logger } from "../log.js";
import { completedPatch, madeAtOf, warnReplayed } from "../orders/outcome.js";
import type { OrderIndex } from "./order-index.js";

/**
 * An order's end as the service reports it: the order (COMPLETED: a poll's full order, or the
 * webhook's basic details without items) or its id and status.
 */
export type RemoteOrderEnd =
  | { status: "COMPLETED"; order: CompletedOrder }
  | { status: string; id: string; order?: undefined };

/** How an order applyRemoteOrderEnd moved ended. */
export type RemoteOrderOutcome = "completed" | "failed_final" | "failed_uncertain";

/** What applying the service's state to the ledger needs. */
export interface ApplyRemoteOrderDeps {
  ledger: Ledger;
  log: Logger;
  storePayoutUrls?: boolean;
  /** Told when this call moved the order to its end. */
  onOrderEnded?: (outcome: RemoteOrderOutcome) => void;
  /** Where the order id is forgotten once the order has ended (webhooks on). */
  orderIndex?: OrderIndex;
}

/**
 * The order statuses of the service's OpenAPI (OrderStatusEnum). Only these are read: any other
 * status is one giftjobs does not know, and says nothing of whether an order was made.
 */
const KNOWN_ORDER_STATUSES = ["COMPLETED", "FAILED", "PROCESSING"] as const;

/** A status as an error message quotes it: JSON, at most 100 characters. */
function quotedStatus(status: string): string {
  return JSON.stringify(status.length > 100 ? `${status.slice(0, 100)}...` : status);
}

/**
 * Applies an order's end, as the service reports it, to a `submitted` order of the ledger
 * (docs/architecture/following-orders.md, "Following async orders"): COMPLETED gives `completed`
 * with its ids; FAILED, and only FAILED, gives `failed_final` (the service made nothing); a status
 * we do not know gives `failed_uncertain` (an order may exist: retried under the same key, the
 * service replays it), its error naming the status. One script (ledger.orders.endReported)
 * checks that the order holds `orderId`, ends it, unfollows it and, with webhooks on, forgets the
 * id once the order is past `submitted`. PROCESSING, and COMPLETED without the order, are no end this can
 * record: nothing is changed (the callers look again). The status follower (a poll) and the
 * webhook receiver both call this, so when a poll and a webhook race, the first moves the order
 * and the second finds it past `submitted` and changes nothing: one end, counted once.
 * Returns what the ledger found (undefined when nothing could be recorded).
 */
export async function applyRemoteOrderEnd(
  deps: ApplyRemoteOrderDeps,
  target: { campaign: string; number: number; orderId: string; rows?: number },
  end: RemoteOrderEnd,
): Promise<ReportedEnd | undefined> {
  const { campaign, number, orderId } = target;
  const { ledger, log } = deps;
  if (end.status === "PROCESSING") return undefined;
  const indexKey = deps.orderIndex?.key;
  if (end.status === "COMPLETED") {
    if (!end.order) return undefined;
    const store = deps.storePayoutUrls ?? false;
    const patch = completedPatch(end.order, target.rows, store);
    // Replayed or not is told by the script, from the campaign's created_at as Redis holds it
    // now: a lost ledger's re-import changes it (docs/architecture/keys-and-exactly-once.md).
    const result = await ledger.orders.endReported({
      campaign,
      number,
      to: "completed",
      patch,
      orderId,
      indexKey,
      madeAt: madeAtOf(end.order),
    });
    if (result.kind === "moved") {
      deps.onOrderEnded?.("completed");
      if (result.replayed) warnReplayed(log, campaign, end.order.created_at);
      else log.debug("async order completed");
    }
    return result;
  }
  if (end.status === "FAILED") {
    // The service says the order did not go through: nothing was made.
    const result = await ledger.orders.endReported({
      campaign,
      number,
      to: "failed_final",
      patch: {
        error_type: "order_failed",
        error_message: "the service reports order status FAILED",
      },
      orderId,
      indexKey,
    });
    if (result.kind === "moved") {
      deps.onOrderEnded?.("failed_final");
      // One per order: counted in the tracker's progress lines and `orders report`.
      log.debug({ status: end.status }, "async order did not complete");
    }
    return result;
  }
  // A status we do not know: it does not say whether an order was made, so its rows may be paid.
  // failed_uncertain: retried under the same key (the service replays), never under a new one.
  const status = quotedStatus(end.status);
  const result = await ledger.orders.endReported({
    campaign,
    number,
    to: "failed_uncertain",
    patch: {
      error_type: "unknown_order_status",
      error_message: `the service reports order status ${status}, which giftjobs does not know (it knows ${KNOWN_ORDER_STATUSES.join(", ")}): an order may exist`,
      unclear: "unknown_order_status",
    },
    orderId,
    indexKey,
  });
  if (result.kind === "moved") {
    deps.onOrderEnded?.("failed_uncertain");
    log.warn(
      { status: end.status },
      `the service reports order status ${status}, which giftjobs does not know: rows failed_uncertain (an order may exist; retry them under the same key)`,
    );
  }
  return result;
}
