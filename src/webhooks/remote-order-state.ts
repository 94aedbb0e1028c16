import type { Order } from "../api/schemas.js";
import type { Logger } from "../log.js";
import type { Ledger } from "../orders/ledger.js";
import { completedPatch, warnReplayed } from "../orders/order-outcome.js";
import type { OrderIndex } from "./order-index.js";

/** An order's end as the service reports it: the full order (COMPLETED) or its id and status. */
export type RemoteOrderEnd =
  | { status: "COMPLETED"; order: Order }
  | { status: string; id: string; order?: undefined };

/** What applying the service's state to the ledger needs. */
export interface ApplyRemoteOrderDeps {
  ledger: Ledger;
  log: Logger;
  storePayoutUrls?: boolean;
  /** When the campaign was first imported (to tell a replayed order). */
  campaignCreatedAt: (campaign: string) => Promise<string | undefined>;
  /** Told when this call moved the order to its end. */
  onOrderEnded?: (outcome: "completed" | "failed_final") => void;
  /** Where the order id is forgotten once the order has ended (webhooks on). */
  orderIndex?: OrderIndex;
}

/**
 * Applies an order's end, as the service reports it, to a `submitted` order of the ledger:
 * COMPLETED gives `completed` with its ids; FAILED (or a status we do not know) gives
 * `failed_final`; both unfollow it in the same script. The status follower (a poll) and the
 * webhook receiver both call this, so when a poll and a webhook race, the first moves the order
 * and the second finds it past `submitted` and changes nothing: one end, counted once.
 * Returns whether this call moved it.
 */
export async function applyRemoteOrderEnd(
  deps: ApplyRemoteOrderDeps,
  target: { campaign: string; number: number; orderId: string; identities: string[] },
  end: RemoteOrderEnd,
): Promise<boolean> {
  const { campaign, number, orderId } = target;
  const { ledger, log } = deps;
  let moved: boolean;
  if (end.status === "COMPLETED" && end.order) {
    const createdAt = await deps.campaignCreatedAt(campaign);
    const store = deps.storePayoutUrls ?? false;
    const patch = completedPatch(end.order, target.identities, store, createdAt);
    const result = await endAndForget(
      deps,
      orderId,
      ledger.transition(campaign, number, ["submitted"], "completed", patch, "unfollow"),
    );
    moved = result.moved;
    if (moved) deps.onOrderEnded?.("completed");
    if (patch.replayed) warnReplayed(log, campaign, end.order.created_at);
    else log.debug("async order completed");
  } else {
    // FAILED (or a status we do not know): the service says the order did not go through.
    const result = await endAndForget(
      deps,
      orderId,
      ledger.transition(
        campaign,
        number,
        ["submitted"],
        "failed_final",
        {
          order_id: orderId,
          error_type: "order_failed",
          error_message: `the service reports order status ${end.status}`,
        },
        "unfollow",
      ),
    );
    moved = result.moved;
    if (moved) deps.onOrderEnded?.("failed_final");
    // One per order: counted in the tracker's progress lines and `orders report`.
    log.debug({ status: end.status }, "async order did not complete");
  }
  return moved;
}

/**
 * The order's end and, with webhooks on, forgetting its id: sent in the same turn, so one write
 * and no round trip between (on one connection Redis runs them in this order). Once the order
 * has left `submitted`, by this or by an earlier end, no message needs its id.
 */
async function endAndForget<T>(
  deps: ApplyRemoteOrderDeps,
  orderId: string,
  ending: Promise<T>,
): Promise<T> {
  const forgotten = deps.orderIndex?.forget(orderId);
  const [result] = await Promise.all([ending, forgotten]);
  return result;
}
