import type { JobsOptions, Queue } from "bullmq";
import { enqueueEach, enqueueOrders } from "../../jobs/orders/enqueue.js";
import { ORDER_JOB_OPTIONS, type OrderJobData, orderJobId } from "../../jobs/orders/job.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";
import type { OutageReporter } from "../redis/outage-reporter.js";

/** Job states of an order in a window whose job will not run again (see repair). */
const OVER = new Set(["unknown", "completed", "failed"]);

export interface DispatcherOptions {
  ledger: Ledger;
  queue: Queue<OrderJobData>;
  log: Logger;
  /** Told of failures: Redis being away is its line, not a warning per pass. */
  outage?: Pick<OutageReporter, "failed">;
  /** Jobs in BullMQ that the running campaigns share (see dispatchWindow). */
  window: number;
  /** How often the running campaigns are looked at, when nothing wakes the dispatcher. @defaultValue 200 */
  tickMs?: number;
  /** How often the windows are checked for jobs lost in a crash. @defaultValue 10000 */
  repairMs?: number;
  /**
   * Least time from one pass to the next when woken: the jobs that end meanwhile share a pass
   * instead of a script each (a window holds about a second of work, so it is refilled in time).
   * @defaultValue 20
   */
  minGapMs?: number;
}

/**
 * Feeds BullMQ from the ledger (docs/architecture/campaigns.md, "Campaigns and the dispatcher").
 *
 * Import records every order on its campaign's pending list; nothing goes to BullMQ then. The
 * dispatcher moves orders of *running* campaigns from pending to per-campaign windows that share
 * `window` jobs (an equal part each), in one script, and adds their jobs in turn. So a held,
 * paused or cancelled campaign has no job in the queue (it takes no slot of the rate limit and
 * no worker time), running campaigns alternate in the FIFO queue (a 1-row campaign waits
 * behind about `window` jobs of the others, not behind all their rows), and the jobs in Redis
 * stay about `window`, whatever the campaigns' sizes.
 *
 * Every worker process runs one; they may run at once (the script hands each order out once).
 * A process that dies between the script and adding the jobs leaves orders in a window without
 * a job: `repair` adds them again (a job id is its order's, so a repeat is harmless).
 */
export class Dispatcher {
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private loop: Promise<void> | undefined;
  private lastRepair = Date.now();
  private lastPass = 0;
  /** Job options per campaign (recorded at import), read once. */
  private readonly jobOptions = new Map<string, JobsOptions>();

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** Looks at the campaigns now (a job ended: its window has room). */
  wake(): void {
    // Kept when it comes mid-pass, so the next sleep does not wait its whole tick.
    this.woken = true;
    this.wakeUp?.();
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        this.lastPass = Date.now();
        const moved = await this.dispatchOnce();
        if (Date.now() - this.lastRepair >= (this.options.repairMs ?? 10_000)) {
          this.lastRepair = Date.now();
          await this.repair();
        }
        if (moved > 0) continue;
      } catch (error) {
        if (this.stopped) return;
        // Redis away: the reporter says so; the next tick tries again.
        if (!this.options.outage?.failed(error))
          this.options.log.warn({ err: error }, "dispatcher: could not hand orders to the queue");
      }
      await this.sleep(this.options.tickMs ?? 200);
      await this.spaced();
    }
  }

  /** Waits out the rest of minGapMs since the last pass (a wake-up can come right after one). */
  private async spaced(): Promise<void> {
    const rest = this.lastPass + (this.options.minGapMs ?? 20) - Date.now();
    if (rest > 0 && !this.stopped) await new Promise((resolve) => setTimeout(resolve, rest));
  }

  /** One pass: orders from pending to the windows, and their jobs into BullMQ. Returns orders moved. */
  async dispatchOnce(): Promise<number> {
    const handed = await this.options.ledger.dispatch.handOut(this.options.window);
    // In the script's order: the campaigns' jobs alternate in the queue.
    const jobs = [];
    for (const { campaign, number } of handed)
      jobs.push({ data: { campaign, order: number }, options: await this.optionsOf(campaign) });
    await enqueueEach(this.options.queue, jobs);
    return handed.length;
  }

  /**
   * Orders in a window with no job (a dispatcher died between its script and addBulk) get their
   * job again while they still wait; orders past that leave the window.
   */
  async repair(): Promise<number> {
    const { ledger, queue } = this.options;
    let repaired = 0;
    for (const campaign of await ledger.campaigns.names()) {
      // A campaign recorded before the running set existed joins it here.
      if ((await ledger.dispatch.pendingCount(campaign)) > 0)
        await ledger.campaigns.ensureDispatched(campaign);
      const numbers = await ledger.dispatch.windowOrders(campaign);
      if (numbers.length === 0) continue;
      const states = await Promise.all(
        numbers.map((n) => queue.getJobState(orderJobId(campaign, n))),
      );
      // No job, or one that is over (a failed job kept for inspection, say, whose order was
      // then retried under the same key: BullMQ would ignore a new job of that id). "unknown"
      // is also a job whose hash outlived its place in the queue (keys lost one by one: an
      // eviction, a flush while workers run): removed too, or its id would hide the new job.
      const lost = numbers.filter((_, i) => OVER.has(states[i]!));
      if (lost.length === 0) continue;
      const orders = await ledger.orders.getOrders(campaign, lost);
      const again: OrderJobData[] = [];
      for (const [i, number] of lost.entries()) {
        const status = orders[i]?.status;
        if (status !== "queued" && status !== "in_flight") {
          await ledger.dispatch.leaveWindow(campaign, number);
          continue;
        }
        // BullMQ keeps a job a worker holds (locked), whatever its lists say: that worker's run
        // is its job, and a new one of its id would be ignored. Once its lock lapses, the next
        // repair takes it.
        if ((await queue.remove(orderJobId(campaign, number))) === 0) continue;
        again.push({ campaign, order: number });
      }
      await enqueueOrders(queue, again, await this.optionsOf(campaign));
      repaired += again.length;
    }
    if (repaired > 0)
      this.options.log.warn({ jobs: repaired }, "dispatcher: lost jobs added again");
    return repaired;
  }

  private async optionsOf(campaign: string): Promise<JobsOptions> {
    let options = this.jobOptions.get(campaign);
    if (!options) {
      const recorded = (await this.options.ledger.campaigns.meta(campaign)).job_options;
      const { attempts, backoff } = recorded ? (JSON.parse(recorded) as JobsOptions) : {};
      // Only the retry policy is the campaign's: a job must go when it ends (see repair).
      options = {
        ...ORDER_JOB_OPTIONS,
        ...(attempts ? { attempts } : {}),
        ...(backoff ? { backoff } : {}),
      };
      this.jobOptions.set(campaign, options);
    }
    return options;
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        this.woken = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }
}

/**
 * How many times its own job slots one worker process keeps in the window at most: enough for
 * that many such processes to find work, and for a window refilled every pass (20 ms or more
 * apart) to stay ahead of them.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const WINDOW_SLOTS_FACTOR = 10;

/**
 * Jobs in BullMQ that the running campaigns share, from the service's rate: about a second of
 * sending (at least 4). Each running campaign with work gets an equal part of it (at least 4
 * jobs), so a campaign that starts waits behind about a second of the others' jobs however many
 * run, and a campaign alone still has a second of work queued ahead of the workers, refilled as
 * each job ends. With `jobSlots` (the process's order jobs at once) the window is at most
 * WINDOW_SLOTS_FACTOR times that: under a very high or no rate limit, a second of sending would
 * be every pending order, all added to BullMQ at once ahead of the first request, and a campaign
 * that starts would wait behind all of them.
 */
export function dispatchWindow(perMinute: number, jobSlots = Infinity): number {
  return Math.max(4, Math.min(Math.ceil(perMinute / 60), WINDOW_SLOTS_FACTOR * jobSlots));
}
