// How the soak test's workers run, in-process and in the child it SIGKILLs: short timings so
// a sequence takes seconds (docs/architecture/campaigns.md, "The dispatcher" for the repair pass).
import type { StartWorkersOptions } from "../../src/worker/worker-options.js";

/** A job's lock: a SIGKILLed worker's job is taken over this long after the kill. */
const LOCK_MS = 1000;

export const SOAK_WORKERS: Pick<StartWorkersOptions, "concurrency" | "lockDurationMs" | "timings"> =
  {
    // Few slots: a campaign of a few orders is sent over a few latencies, between the events.
    concurrency: 2,
    lockDurationMs: LOCK_MS,
    timings: {
      firstPollDelayMs: 50,
      pollDelayMs: 50,
      rateLimitBaseMs: 200,
      dispatchTickMs: 50,
      // A window order whose job was lost (a kill, a lost ledger) is sent again soon.
      dispatchRepairMs: 300,
    },
  };

/** The client's timeout while timeouts are off, and while they are on (below the latency). */
export const NORMAL_TIMEOUT_MS = 2000;
export const SHORT_TIMEOUT_MS = 100;
/** The sandbox's latency while timeouts are on: every attempt outlives the short timeout. */
export const SLOW_LATENCY_MS = 200;
