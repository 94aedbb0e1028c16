import { setMaxListeners } from "node:events";
import type { ApiClient, OrderLookup } from "../api/client.js";
import { ApiError, nothingSent } from "../api/errors/index.js";
import type { Ledger } from "../ledger/ledger.js";
import type { FollowedOrder } from "../ledger/types.js";
import type { Logger } from "../log.js";
import type { OutageReporter } from "../redis/outage-reporter.js";
import type { OrderIndex } from "../webhooks/order-index.js";
import { applyRemoteOrderEnd, type RemoteOrderEnd } from "../webhooks/remote-order-state.js";
import { WORKER_DEFAULTS } from "../worker-defaults.js";

export interface OrderFollowerOptions {
  client: ApiClient;
  ledger: Ledger;
  log: Logger;
  /** Told of failures: Redis being away is its line, not an error per claim. */
  outage?: Pick<OutageReporter, "failed">;
  /** Status requests in flight at once. @defaultValue 10 */
  concurrency?: number;
  storePayoutUrls?: boolean;
  /** First delay between polls; it grows by half each poll. @defaultValue 1000 */
  pollDelayMs?: number;
  /** @defaultValue 30000 */
  maxPollDelayMs?: number;
  /** After this many polls without an end the rows become failed_uncertain. @defaultValue 500 */
  maxPolls?: number;
  /** Told once per order this follower moved to an end (giftjobs_orders_total is the ledger's). */
  onOrderEnded?: (outcome: "completed" | "failed_final" | "failed_uncertain") => void;
  /** How often the follow set is looked at. @defaultValue 100 */
  tickMs?: number;
  /**
   * How long a taken order is kept from other followers. A second look at the same order is
   * harmless (the ledger moves it on once), so this only has to outlast most polls. @defaultValue 30000
   */
  leaseMs?: number;
  /** With webhooks on: where an ended order's id is forgotten (see applyRemoteOrderEnd). */
  orderIndex?: OrderIndex;
  /** Told how each status request ended: `error` undefined when the service answered. */
  onRequestEnded?: (campaign: string, error?: unknown) => void;
}

/**
 * Follows async orders (202 PROCESSING) to COMPLETED or FAILED with GET /v2/order/{id}; a
 * status it does not know ends them `failed_uncertain` (docs/architecture/following-orders.md,
 * "Following async orders").
 *
 * The orders to follow are a Redis sorted set scored by when to look next; the ledger puts an
 * order in it in the same script that makes it `submitted`, and takes it out in the one that
 * ends it. Every worker process runs a follower; each takes due orders under a lease, so a
 * follower that dies only delays its orders by the lease. This replaces one BullMQ job per poll:
 * a poll is now one GET and one ledger script, about half the work (bench: orders (a)).
 */
export class OrderFollower {
  private readonly concurrency: number;
  private inFlight = 0;
  private stopped = false;
  private wake: (() => void) | undefined;
  private stopWaiting: (() => void) | undefined;
  private readonly polls = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly options: OrderFollowerOptions) {
    this.concurrency = options.concurrency ?? WORKER_DEFAULTS.concurrency;
    // Every poll in flight listens to this one signal.
    setMaxListeners(0, this.abort.signal);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops taking orders and lets the polls in flight end (their orders stay followed). */
  async close(): Promise<void> {
    this.stopped = true;
    this.stopWaiting?.();
    await this.loop;
    await Promise.allSettled([...this.polls]);
  }

  /** Ends at once: polls in flight are cancelled; their orders fall due again after the lease. */
  async kill(): Promise<void> {
    this.abort.abort();
    await this.close();
  }

  private async run(): Promise<void> {
    const { ledger, log } = this.options;
    while (!this.stopped) {
      const free = this.concurrency - this.inFlight;
      let taken: FollowedOrder[] = [];
      if (free > 0) {
        taken = await ledger.follows
          .claim(Date.now(), free, this.options.leaseMs ?? 30_000)
          .catch((error: unknown) => {
            if (!this.options.outage?.failed(error))
              log.error({ err: error }, "could not read the orders to follow");
            return [];
          });
      }
      for (const entry of taken) this.track(this.poll(entry));
      const tick = this.options.tickMs ?? 100;
      if (this.inFlight >= this.concurrency) await this.sleep(tick, true);
      else if (taken.length < free) await this.sleep(tick, false);
      // else a full batch was due: more may be, look again at once.
    }
  }

  private track(poll: Promise<void>): void {
    this.inFlight += 1;
    this.polls.add(poll);
    void poll.finally(() => {
      this.inFlight -= 1;
      this.polls.delete(poll);
      // Woken by a quarter of the slots, not each one: claims then come in batches.
      if (this.concurrency - this.inFlight >= Math.ceil(this.concurrency / 4)) this.wake?.();
    });
  }

  /** Waits `ms`, or less when `forSlots` and enough slots free up (or on close). */
  private sleep(ms: number, forSlots: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.stopWaiting = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.stopWaiting = done;
      if (forSlots) this.wake = done;
    });
  }

  private async poll(entry: FollowedOrder): Promise<void> {
    const { campaign, number, order } = entry;
    const { ledger } = this.options;
    if (order?.status !== "submitted" || !order.order_id) {
      await ledger.follows.remove(campaign, number).catch(() => undefined);
      return;
    }
    const log = this.options.log.child({ campaign, key: order.key, order_id: order.order_id });
    let lookup: OrderLookup;
    try {
      lookup = await this.options.client.getOrder(order.order_id, this.abort.signal);
      this.options.onRequestEnded?.(campaign);
    } catch (error) {
      if (!this.abort.signal.aborted) this.options.onRequestEnded?.(campaign, error);
      await this.failedPoll(entry, error, log);
      return;
    }
    try {
      await this.settle(entry, order.order_id, order.identities.length, lookup, log);
    } catch (error) {
      await this.failedPoll(entry, error, log);
    }
  }

  /** A poll that failed (the request, or recording its answer) is looked at again later. */
  private async failedPoll(entry: FollowedOrder, error: unknown, log: Logger): Promise<void> {
    if (this.abort.signal.aborted) return;
    await this.onError(entry, error, log).catch((e: unknown) => {
      // Redis away: the order stays followed and is polled again after its lease.
      if (!this.options.outage?.failed(e)) log.error({ err: e }, "could not record a status check");
    });
  }

  private async settle(
    entry: FollowedOrder,
    orderId: string,
    rows: number,
    lookup: OrderLookup,
    log: Logger,
  ): Promise<void> {
    const { campaign, number } = entry;
    const { ledger } = this.options;
    const { status, id } = lookup.order;
    if (status === "PROCESSING") {
      await this.again(entry, "still processing", log);
      return;
    }
    // Answers that cannot be recorded are malformed ones: looked at again, as after a 5xx.
    if (id !== orderId) {
      await this.again(entry, `the status lookup answered about order ${id}`, log);
      return;
    }
    if (status === "COMPLETED" && lookup.kind !== "order") {
      await this.again(entry, "COMPLETED without the order's items", log);
      return;
    }
    // COMPLETED, FAILED, or a status we do not know (failed_uncertain): see applyRemoteOrderEnd.
    const end: RemoteOrderEnd =
      lookup.kind === "order" && status === "COMPLETED"
        ? { status: "COMPLETED", order: lookup.order }
        : { status, id: orderId };
    await applyRemoteOrderEnd(
      {
        ledger,
        log,
        storePayoutUrls: this.options.storePayoutUrls,
        onOrderEnded: this.options.onOrderEnded,
        orderIndex: this.options.orderIndex,
      },
      { campaign, number, orderId, rows },
      end,
    );
  }

  private async onError(entry: FollowedOrder, error: unknown, log: Logger): Promise<void> {
    if (error instanceof ApiError && error.outcome === "final") {
      // The service does not know an order it accepted: the outcome is unknown.
      const moved = await this.options.ledger.orders.transition({
        campaign: entry.campaign,
        number: entry.number,
        from: ["submitted"],
        to: "failed_uncertain",
        patch: { error_type: error.type, error_message: `status lookup failed: ${error.message}` },
        follow: "unfollow",
      });
      if (moved.moved) this.options.onOrderEnded?.("failed_uncertain");
      log.warn(
        { type: error.type },
        "the service does not know an accepted order: rows failed_uncertain",
      );
      return;
    }
    // Nothing sent (refused, host not found): the service is away, the order is as it was.
    // Looked at again after the longest delay, not counted against maxPolls: an outage of hours
    // does not end it failed_uncertain (docs/architecture/sending-orders.md, "Service outages").
    if (nothingSent(error)) {
      await this.later(entry, this.options.maxPollDelayMs ?? 30_000);
      return;
    }
    // Transient (5xx, network, timeout, 429): look again later, like a PROCESSING answer.
    await this.again(entry, error instanceof Error ? error.message : String(error), log);
  }

  /** Looks again after `delayMs`, its polls as they were. */
  private async later(entry: FollowedOrder, delayMs: number): Promise<void> {
    const { campaign, number } = entry;
    await this.options.ledger.orders.transition({
      campaign,
      number,
      from: ["submitted"],
      to: "submitted",
      patch: {},
      follow: { at: Date.now() + delayMs },
    });
  }

  /** Looks again after a growing delay; past maxPolls the rows become failed_uncertain. */
  private async again(entry: FollowedOrder, why: string, log: Logger): Promise<void> {
    const { campaign, number, order } = entry;
    const polls = (order?.polls ?? 0) + 1;
    const maxPolls = this.options.maxPolls ?? 500;
    if (polls >= maxPolls) {
      const moved = await this.options.ledger.orders.transition({
        campaign,
        number,
        from: ["submitted"],
        to: "failed_uncertain",
        patch: {
          error_type: "still_processing",
          error_message: `order ${order?.order_id} has no outcome after ${polls} status checks (${why})`,
        },
        follow: "unfollow",
      });
      if (moved.moved) this.options.onOrderEnded?.("failed_uncertain");
      log.warn("no outcome after the last status check: rows failed_uncertain");
      return;
    }
    const delay = Math.min(
      (this.options.pollDelayMs ?? 1000) * 1.5 ** (polls - 1),
      this.options.maxPollDelayMs ?? 30_000,
    );
    await this.options.ledger.orders.transition({
      campaign,
      number,
      from: ["submitted"],
      to: "submitted",
      patch: { polls },
      follow: {
        at: Date.now() + Math.round(delay),
      },
    });
  }
}

/**
 * `order-status`: follows async orders (202 PROCESSING) until COMPLETED or FAILED. It is not one
 * BullMQ job per poll: see OrderFollower above, and docs/architecture/following-orders.md,
 * "Following async orders".
 */
export function startOrderStatusFollower(options: OrderFollowerOptions): OrderFollower {
  const follower = new OrderFollower(options);
  follower.start();
  return follower;
}
