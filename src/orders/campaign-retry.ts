import { UserError } from "../errors/user-error.js";
import { storedState } from "./campaign-state.js";
import { orderKey } from "./keys.js";
import type { Ledger } from "./ledger.js";

export interface RetryOptions {
  /** Move failed_final rows to the next generation (a new key). */
  newKey?: boolean;
  /** With newKey: also failed_uncertain rows. That could pay twice. */
  force?: boolean;
}

export interface RetryResult {
  orders: number;
  rows: number;
  mode: "same-key" | "new-key";
}

/**
 * `orders retry`: without newKey, failed_uncertain orders go again under their SAME key (the
 * service replays an order that was made, so nothing is paid twice). With newKey, failed_final
 * orders (nothing was made) go under the next generation's key; failed_uncertain ones only
 * with force, since an order may exist under the old key. Either way the orders go on the
 * campaign's pending list, and the dispatcher sends them while the campaign runs.
 */
export async function retryCampaign(
  ledger: Ledger,
  campaign: string,
  options: RetryOptions,
): Promise<RetryResult> {
  const state = storedState(await ledger.meta(campaign));
  if (state === "cancelled" || state === "archived")
    throw new UserError(
      `campaign ${campaign} is ${state}: its rows cannot be retried${state === "archived" ? " (orders restore first)" : ""}`,
    );
  const statuses = options.newKey
    ? options.force
      ? ["failed_final", "failed_uncertain"]
      : ["failed_final"]
    : ["failed_uncertain"];
  let orders = 0;
  let rows = 0;
  for await (const [number, order] of ledger.orders(campaign)) {
    if (!statuses.includes(order.status)) continue;
    if (options.newKey) {
      const generation = order.generation + 1;
      const done = await ledger.rekey(campaign, {
        number,
        key: orderKey(campaign, generation, order.identities),
        identities: order.identities,
        generation,
        from: statuses as ("failed_final" | "failed_uncertain")[],
      });
      if (!done.done) continue;
    } else {
      const moved = await ledger.transition(
        campaign,
        number,
        ["failed_uncertain"],
        "queued",
        { error_type: null, error_message: null },
        "pending",
      );
      if (!moved.moved) continue;
    }
    orders += 1;
    rows += order.identities.length;
  }
  return { orders, rows, mode: options.newKey ? "new-key" : "same-key" };
}
