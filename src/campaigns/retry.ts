import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";
import { appendJournalLines, journalPath } from "../orders/journal.js";
import { orderKey } from "../orders/keys.js";
import { storedState } from "./state.js";

export interface RetryOptions {
  /** Move failed_final rows to the next generation (a new key). */
  newKey?: boolean;
  /**
   * With newKey: also failed_uncertain rows. That could pay twice. Without: send failed_uncertain
   * rows under their same key even when their unclear attempt was made with another API key.
   */
  force?: boolean;
  /** Where the campaign's order journal is (GIFTJOBS_DATA_DIR): needed with newKey. */
  dataDir?: string;
  /** Fingerprint of the API key the new keys are to be sent with (see apiKeyFingerprint). */
  apiKey?: string;
}

export interface RetryResult {
  orders: number;
  rows: number;
  mode: "same-key" | "new-key";
  /** Orders --new-key left alone: an attempt under their key ended unclear (an order may exist). */
  unclear: number;
}

/**
 * `orders retry`: without newKey, failed_uncertain orders go again under their SAME key (the
 * service replays an order that was made, so nothing is paid twice). With newKey, failed_final
 * orders (nothing was made) go under the next generation's key; failed_uncertain ones only
 * with force, since an order may exist under the old key. Either way the orders go on the
 * campaign's pending list, and the dispatcher sends them while the campaign runs. A new key is
 * journaled (flushed) before the ledger holds it (docs/architecture/keys-and-exactly-once.md, "One
 * key while an order may exist"), and the ledger refuses one, without force, for an order whose
 * key's last attempt ended unclear.
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
  if (options.newKey && options.dataDir === undefined)
    throw new Error("retry --new-key needs the data dir of the campaign's journal");
  const statuses = options.newKey
    ? options.force
      ? ["failed_final", "failed_uncertain"]
      : ["failed_final"]
    : ["failed_uncertain"];
  const result: RetryResult = {
    orders: 0,
    rows: 0,
    mode: options.newKey ? "new-key" : "same-key",
    unclear: 0,
  };
  for await (const [number, order] of ledger.orders(campaign)) {
    if (!statuses.includes(order.status)) continue;
    const moved = options.newKey
      ? await underNewKey(ledger, campaign, number, order, options)
      : await underSameKey(ledger, campaign, number, options.force);
    if (moved === "unclear") result.unclear += 1;
    if (moved !== true) continue;
    result.orders += 1;
    result.rows += order.identities.length;
  }
  return result;
}

async function underSameKey(
  ledger: Ledger,
  campaign: string,
  number: number,
  force: boolean | undefined,
): Promise<boolean> {
  const moved = await ledger.transition(
    campaign,
    number,
    ["failed_uncertain"],
    "queued",
    { error_type: null, error_message: null },
    "pending",
    force ? "force" : undefined,
  );
  return moved.moved;
}

async function underNewKey(
  ledger: Ledger,
  campaign: string,
  number: number,
  order: { generation: number; identities: string[] },
  options: RetryOptions,
): Promise<boolean | "unclear"> {
  const generation = order.generation + 1;
  const key = orderKey(campaign, generation, order.identities);
  const line = { g: generation, k: key, i: [...order.identities].sort() };
  await appendJournalLines(journalPath(options.dataDir!, campaign), [
    options.apiKey ? { ...line, a: options.apiKey } : line,
  ]);
  const done = await ledger.rekey(campaign, {
    number,
    key,
    identities: order.identities,
    generation,
    from: options.force ? ["failed_final", "failed_uncertain"] : ["failed_final"],
    word: options.force ? "force" : undefined,
  });
  if (done.done) return true;
  return done.why === "unclear" ? "unclear" : false;
}
