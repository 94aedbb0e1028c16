import type { LedgerStore } from "./store.js";

/**
 * The ledger's dispatch: each campaign's pending list (and scheduled set) of orders not yet
 * handed to BullMQ, and its window of those handed out whose job is not over.
 */
export class LedgerDispatch {
  constructor(private readonly store: LedgerStore) {}

  /**
   * Hands orders of running campaigns to the dispatcher: the campaigns with work share
   * `budget` jobs in BullMQ, an equal window each of at least `least` (see DISPATCH). Returns
   * the orders now handed out, in the order their jobs are to be added.
   */
  async handOut(budget: number, least = 4): Promise<{ campaign: string; number: number }[]> {
    // Read first so that the script is given every key it touches (see DISPATCH).
    const running = await this.store.redis.smembers(this.store.runningKey());
    if (running.length === 0) return [];
    const keys = [this.store.runningKey()];
    for (const campaign of running) {
      const k = this.store.keys(campaign);
      keys.push(k.meta, k.pending, k.window, k.scheduled, k.orders, k.counts);
    }
    const fields = { budget, least, now: String(Date.now()), campaigns: running };
    const flat = (await this.store.run("giftjobsLedgerDispatch", keys, [
      JSON.stringify(fields),
    ])) as (string | number)[];
    const out: { campaign: string; number: number }[] = [];
    for (let i = 0; i < flat.length; i += 2)
      out.push({ campaign: String(flat[i]), number: Number(flat[i + 1]) });
    return out;
  }

  /** Numbers of the orders in the campaign's dispatch window (handed to BullMQ, job not over). */
  async windowOrders(campaign: string): Promise<number[]> {
    return (await this.store.redis.smembers(this.store.keys(campaign).window)).map(Number);
  }

  /** Takes an order out of the window when it is past queued/in_flight (a lost job). */
  async leaveWindow(campaign: string, number: number): Promise<void> {
    await this.store.redis.srem(this.store.keys(campaign).window, String(number));
  }

  /** Orders waiting to be dispatched, now or when their send_at comes. */
  async pendingCount(campaign: string): Promise<number> {
    const k = this.store.keys(campaign);
    const [pending, scheduled] = await Promise.all([
      this.store.redis.llen(k.pending),
      this.store.redis.zcard(k.scheduled),
    ]);
    return pending + scheduled;
  }

  /** When the campaign's next scheduled order is due (ms), or undefined when none is. */
  async nextSendAt(campaign: string): Promise<number | undefined> {
    const [, score] = await this.store.redis.zrange(
      this.store.keys(campaign).scheduled,
      "0",
      "0",
      "WITHSCORES",
    );
    return score === undefined ? undefined : Number(score);
  }

  /**
   * Cancels the pending orders of a cancelled campaign, `batch` at a time, then the queued ones
   * in its window. Returns the number of pending orders taken.
   */
  async cancelPending(campaign: string, batch = 500): Promise<number> {
    const k = this.store.keys(campaign);
    let taken = 0;
    for (;;) {
      const n = Number(
        await this.store.run(
          "giftjobsLedgerCancelPending",
          [
            k.orders,
            k.rows,
            k.counts,
            k.pending,
            k.window,
            k.meta,
            k.scheduled,
            this.store.endedKey(),
          ],
          [JSON.stringify({ batch, now: new Date().toISOString() })],
        ),
      );
      taken += n;
      if (n === 0) return taken;
    }
  }
}
