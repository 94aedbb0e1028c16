import type { JobType, Queue } from "bullmq";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { OrderEndName, OrderOutcomeName } from "../../jobs/orders/attempt.js";
import type { ResponseInfo } from "../api/client.js";
import { type CampaignStatus, statusOf } from "../campaigns/status.js";
import { moneyOf } from "../campaigns/summary.js";
import type { WorkerBeats } from "../campaigns/worker-beats.js";
import type { Ledger } from "../ledger/ledger.js";
import { ROW_STATUSES } from "../ledger/row-status.js";
import type { Logger } from "../log.js";
import { silentLogger } from "../log.js";
import { isRedisAway } from "../redis/outage-reporter.js";
import type { WorkerHooks } from "../worker/worker-options.js";
import { routeLabel } from "./route-label.js";

/** Every attempt outcome, so each series exists (at 0) from the first scrape. */
const ORDER_OUTCOMES: readonly OrderOutcomeName[] = [
  "completed",
  "submitted",
  "retry_same_key",
  "systemic",
  "final",
  "key_conflict",
];

/** Every end of an order (giftjobs_orders_total), each series there from the first scrape. */
const ORDER_ENDS: readonly OrderEndName[] = [
  "completed",
  "failed_final",
  "failed_uncertain",
  "cancelled",
];

/** Job states reported as queue depth. */
const QUEUE_STATES: JobType[] = [
  "waiting",
  "active",
  "delayed",
  "prioritized",
  "waiting-children",
  "failed",
  "completed",
];

/** Seconds; from a fast sandbox answer to the client's default 30 s timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export interface WorkerMetricsOptions {
  /** Queues whose job counts are read on each scrape. @defaultValue [] */
  queues?: Queue[];
  /** The ledger whose follow set is read on each scrape. @defaultValue none (no such gauges) */
  ledger?: Ledger;
  /**
   * The workers alive, read with the campaigns: a running campaign no order worker serves is
   * giftjobs_campaign_stalled{reason="no_worker"}. @defaultValue none (only workers' marks)
   */
  workers?: WorkerBeats;
  /** Where a failed queue-depth read is reported. @defaultValue silentLogger */
  log?: Logger;
  /** PING of the metrics' Redis connection: giftjobs_redis_up. @defaultValue none (no gauge) */
  ping?: () => Promise<unknown>;
  /**
   * prom-client's default process and Node.js metrics (`process_cpu_seconds_total`,
   * `nodejs_heap_size_used_bytes`, ..., under their usual names). @defaultValue true
   */
  defaultMetrics?: boolean;
}

/**
 * The worker's Prometheus metrics in a registry of their own (not prom-client's global one, so
 * two workers in one process, or a test, never collide). `hooks` plugs into `startWorkers`.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  readonly hooks: Required<WorkerHooks>;
  private readonly orders: Counter<"outcome">;
  private readonly attempts: Counter<"outcome">;
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly latency: Histogram<"method" | "route">;
  private readonly pauses: Counter;
  private readonly window: Gauge;

  constructor(options: WorkerMetricsOptions = {}) {
    const registers = [this.registry];
    // Default names (process_*, nodejs_*), so the usual Node.js dashboards and alerts work.
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    const ledger = options.ledger;
    const log = options.log ?? silentLogger;
    this.orders = new Counter({
      name: "giftjobs_orders_total",
      help: "Orders that reached an end, by outcome, each counted once across processes",
      labelNames: ["outcome"],
      registers,
      // Orders end in workers, in the webhook receiver (often a process of its own), in the cancel
      // command and the dashboard: the ledger's scripts count each move in Redis and one endpoint
      // claims each (ledger.orders.claimEnded), so no process counts what another moved.
      async collect() {
        if (!ledger) return;
        // Counted when the claim answers, even after the scrape's deadline (the next one shows it).
        const claimed = ledger.orders.claimEnded().then((ended) => {
          for (const outcome of ORDER_ENDS)
            if ((ended[outcome] ?? 0) > 0) this.inc({ outcome }, ended[outcome]);
        });
        try {
          await inTime(claimed);
        } catch (error) {
          unreadable(log, error, "ended orders");
        }
      },
    });
    for (const outcome of ORDER_ENDS) this.orders.inc({ outcome }, 0);
    this.attempts = new Counter({
      name: "giftjobs_order_attempts_total",
      help: "Order attempts (POST /v2/order) by outcome; 429s are not attempts",
      labelNames: ["outcome"],
      registers,
    });
    for (const outcome of ORDER_OUTCOMES) this.attempts.inc({ outcome }, 0);
    this.requests = new Counter({
      name: "giftjobs_http_requests_total",
      help: 'Requests to the service by method, route and status ("none": no response); 429s are status="429"',
      labelNames: ["method", "route", "status"],
      registers,
    });
    this.window = new Gauge({
      name: "giftjobs_dispatch_window",
      help: "Jobs of one campaign the dispatcher keeps in BullMQ at once",
      registers,
    });
    this.latency = new Histogram({
      name: "giftjobs_http_request_duration_seconds",
      help: "Time from sending a request to the end of its response body",
      labelNames: ["method", "route"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.pauses = new Counter({
      name: "giftjobs_campaign_pauses_total",
      help: "Campaigns paused by this worker (401/403, insufficient funds, ordering restricted)",
      registers,
    });
    queueDepthGauge(registers, options.queues ?? [], options.log ?? silentLogger);
    if (options.ping) redisUpGauge(registers, options.ping);
    if (options.ledger) {
      followSetGauges(registers, options.ledger, options.log ?? silentLogger);
      campaignGauges(registers, options.ledger, options.log ?? silentLogger, options.workers);
    }
    this.hooks = {
      onOutcome: (outcome) => this.attempts.inc({ outcome }),
      // Counted by the ledger (see giftjobs_orders_total): counting here too would count twice.
      onOrderEnded: () => undefined,
      onCampaignPaused: () => this.pauses.inc(),
      onResponse: (info) => this.observe(info),
      onDispatchWindow: (size) => this.window.set(size),
    };
  }

  private observe(info: ResponseInfo): void {
    const route = routeLabel(info.path);
    const status = info.status === 0 ? "none" : String(info.status);
    this.requests.inc({ method: info.method, route, status });
    this.latency.observe({ method: info.method, route }, info.durationMs / 1000);
  }
}

/**
 * A gauge Redis could not give is left out of the scrape. A warning says why, unless Redis is
 * away or did not answer in time: giftjobs_redis_up says so, and the process's outage line
 * (OutageReporter) too, so a scrape every 15 s adds no line per gauge.
 */
function unreadable(log: Logger, error: unknown, what: string): void {
  if (error instanceof NoAnswerInTime || isRedisAway(error)) return;
  log.warn({ err: error }, `metrics: ${what} could not be read`);
}

/**
 * How long a scrape waits for each of its Redis reads. A connection that is up but gets no
 * answer (a frozen or overloaded Redis, a Cluster whose commands wait in ioredis's offline
 * queue) would otherwise hold the scrape past Prometheus's timeout (10 s by default), and the
 * endpoint would look down instead of saying giftjobs_redis_up 0.
 */
const READ_TIMEOUT_MS = 3000;

class NoAnswerInTime extends Error {}

/** `read`, or NoAnswerInTime after `ms` (the read goes on, its answer unused). */
async function inTime<T>(read: Promise<T>, ms = READ_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerInTime(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** How long a scrape waits for Redis to answer PING before giftjobs_redis_up says 0. */
const PING_TIMEOUT_MS = 1000;

/** 1 when Redis answers PING within a second at scrape time, 0 when it does not. */
function redisUpGauge(registers: Registry[], ping: () => Promise<unknown>): void {
  new Gauge({
    name: "giftjobs_redis_up",
    help: "1 when Redis answered PING at scrape time (within 1 s), 0 when it did not",
    registers,
    async collect() {
      try {
        await inTime(ping(), PING_TIMEOUT_MS);
        this.set(1);
      } catch {
        this.set(0);
      }
    },
  });
}

/** Job counts per queue and state, read from Redis when Prometheus scrapes. */
function queueDepthGauge(registers: Registry[], queues: Queue[], log: Logger): void {
  new Gauge({
    name: "giftjobs_queue_jobs",
    help: "Jobs per queue and state, read at scrape time",
    labelNames: ["queue", "state"],
    registers,
    async collect() {
      // Old values would look current; with Redis unreachable the series go away instead.
      this.reset();
      try {
        const all = await inTime(Promise.all(queues.map((q) => q.getJobCounts(...QUEUE_STATES))));
        for (const [i, counts] of all.entries()) {
          const queue = queues[i]?.name ?? "";
          for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state] ?? 0);
        }
      } catch (error) {
        unreadable(log, error, "queue depths");
      }
    },
  });
}

/**
 * A gauge of one number read from Redis at scrape time. When the read fails the series is left
 * out of the scrape, not shown as 0 (a label-less prom-client gauge is 0 once reset): old or
 * zero values would look current, and "0 overdue" would hide a follower that is behind.
 */
class ReadGauge extends Gauge {
  private unread = false;

  constructor(options: {
    name: string;
    help: string;
    registers: Registry[];
    read: () => Promise<number>;
    log: Logger;
  }) {
    const { read, log, ...config } = options;
    super({
      ...config,
      collect: async () => {
        try {
          this.set(await inTime(read()));
          this.unread = false;
        } catch (error) {
          this.unread = true;
          unreadable(log, error, config.name);
        }
      },
    });
  }

  override async get() {
    const metric = await super.get();
    return this.unread ? { ...metric, values: [] } : metric;
  }
}

/** A poll this late is a follower that has fallen behind, or no worker serving orders. */
const OVERDUE_MS = 60_000;

/**
 * Async orders waiting for their final status (the follow set, see OrderFollower), and how many
 * of them are over a minute past their poll: a number that keeps growing means no follower is
 * keeping up. Both are read from Redis at scrape time.
 */
function followSetGauges(registers: Registry[], ledger: Ledger, log: Logger): void {
  const gauge = (name: string, help: string, read: () => Promise<number>) =>
    new ReadGauge({ name, help, registers, read, log });
  gauge(
    "giftjobs_followed_orders",
    "Async orders accepted by the service and waiting for their final status",
    () => ledger.follows.count(),
  );
  gauge(
    "giftjobs_followed_orders_overdue",
    `Followed orders whose status poll is more than ${OVERDUE_MS / 1000} s late`,
    () => ledger.follows.dueCount(Date.now() - OVERDUE_MS),
  );
}

/**
 * Campaigns by state, and the rows of each campaign not archived by status (cancelled and
 * replayed included), read from the ledger at scrape time. Archived campaigns are left out of
 * the per-campaign series so that their number stays that of the campaigns in use.
 */
function campaignGauges(
  registers: Registry[],
  ledger: Ledger,
  log: Logger,
  workers: WorkerBeats | undefined,
): void {
  // One read of the campaigns serves every gauge of a scrape (the registry collects at once).
  let read: { at: number; campaigns: Promise<CampaignRead[]> } | undefined;
  const campaigns = () => {
    if (!read || Date.now() - read.at > 1000) {
      const all = Promise.all([ledger.campaigns.names(), workers?.orderWorkers()]).then(
        ([names, orderWorkers]) =>
          Promise.all(
            names.map(async (name): Promise<CampaignRead> => {
              const [counts, meta] = await Promise.all([
                ledger.campaigns.counts(name),
                ledger.campaigns.meta(name),
              ]);
              // Decimal strings from minor units (exact), never sums of floats.
              const spent = Object.entries(moneyOf(meta)).map(
                ([currency, money]) => [currency, money.spent] as const,
              );
              return { status: statusOf(name, meta, counts, undefined, orderWorkers), spent };
            }),
          ),
      );
      all.catch(() => {});
      read = { at: Date.now(), campaigns: all };
    }
    return inTime(read.campaigns);
  };
  const statuses = async () => (await campaigns()).map((c) => c.status);
  new Gauge({
    name: "giftjobs_campaigns",
    help: "Campaigns per state (held, running, paused, cancelled, done, archived)",
    labelNames: ["state"],
    registers,
    async collect() {
      this.reset();
      try {
        const counts = new Map<string, number>();
        for (const s of await statuses()) counts.set(s.state, (counts.get(s.state) ?? 0) + 1);
        for (const [state, n] of counts) this.set({ state }, n);
      } catch (error) {
        unreadable(log, error, "campaigns");
      }
    },
  });
  new Gauge({
    name: "giftjobs_campaign_rows",
    help: "Rows of each campaign (not archived) per status, read at scrape time",
    labelNames: ["campaign", "status"],
    registers,
    async collect() {
      // Old values would look current; with Redis unreachable the series go away instead.
      this.reset();
      try {
        for (const status of await statuses()) {
          if (status.state === "archived") continue;
          for (const field of [...ROW_STATUSES, "replayed"] as const)
            this.set({ campaign: status.campaign, status: field }, status[field]);
        }
      } catch (error) {
        unreadable(log, error, "campaign rows");
      }
    },
  });
  campaignDetailGauges(registers, campaigns, log);
}

/** One campaign as the gauges read it: its status, and its spend per currency (major units). */
interface CampaignRead {
  status: CampaignStatus;
  spent: (readonly [string, string])[];
}

/**
 * Per campaign not archived: its state (1 for the current one), and the money its completed
 * orders cost per currency in major units. The ledger keeps the spend in minor units as an
 * integer string; it becomes a decimal string exactly (moneyOf) and a number only at the end.
 */
function campaignDetailGauges(
  registers: Registry[],
  campaigns: () => Promise<CampaignRead[]>,
  log: Logger,
): void {
  new Gauge({
    name: "giftjobs_campaign_state",
    help: "1 for the state each campaign (not archived) is in: held, running, paused, cancelled, done",
    labelNames: ["campaign", "state"],
    registers,
    async collect() {
      this.reset();
      try {
        for (const { status } of await campaigns())
          if (status.state !== "archived")
            this.set({ campaign: status.campaign, state: status.state }, 1);
      } catch (error) {
        unreadable(log, error, "campaign states");
      }
    },
  });
  new Gauge({
    name: "giftjobs_campaign_stalled",
    help:
      "1 for each running campaign with rows to send that does not move, by reason: no_worker " +
      "(no order worker alive), service_unreachable (its workers cannot reach the service)",
    labelNames: ["campaign", "reason"],
    registers,
    async collect() {
      this.reset();
      try {
        for (const { status } of await campaigns())
          if (status.stalled)
            this.set({ campaign: status.campaign, reason: status.stalled.reason }, 1);
      } catch (error) {
        unreadable(log, error, "campaign stalls");
      }
    },
  });
  new Gauge({
    name: "giftjobs_campaign_spent",
    help: "What the completed orders of each campaign (not archived) cost, per currency, in major units",
    labelNames: ["campaign", "currency"],
    registers,
    async collect() {
      this.reset();
      try {
        for (const { status, spent } of await campaigns()) {
          if (status.state === "archived") continue;
          for (const [currency, amount] of spent)
            this.set({ campaign: status.campaign, currency }, Number(amount));
        }
      } catch (error) {
        unreadable(log, error, "campaign spend");
      }
    },
  });
}
