import { DelayedError, type Job } from "bullmq";
import type { ApiClient } from "../api/client.js";
import { ApiError } from "../api/errors/index.js";
import type { Logger } from "../log.js";
import type { Ledger } from "./ledger.js";
import type { StatusJobData } from "./order-job.js";
import { completedPatch } from "./order-outcome.js";

export interface FollowOrderDeps {
  client: ApiClient;
  ledger: Ledger;
  log: Logger;
  storePayoutUrls?: boolean;
  /** First delay between polls; it grows by half each poll. @defaultValue 1000 */
  pollDelayMs?: number;
  /** @defaultValue 30000 */
  maxPollDelayMs?: number;
  /** After this many polls still PROCESSING the rows become failed_uncertain. @defaultValue 500 */
  maxPolls?: number;
}

/**
 * Processes one `order-status` job: GET /v2/order/{id} until COMPLETED or FAILED. Polls while
 * PROCESSING are delays (not failed attempts), so only real errors use up attempts.
 */
export async function processFollowOrder(
  job: Job<StatusJobData>,
  token: string | undefined,
  signal: AbortSignal | undefined,
  deps: FollowOrderDeps,
): Promise<{ status: string }> {
  const { campaign, key, orderId } = job.data;
  const log = deps.log.child({ campaign, key, order_id: orderId });
  const ledgerOrder = await deps.ledger.getOrder(campaign, key);
  if (ledgerOrder?.status !== "submitted") return { status: ledgerOrder?.status ?? "unknown" };

  let lookup: Awaited<ReturnType<ApiClient["getOrder"]>>;
  try {
    lookup = await deps.client.getOrder(orderId, signal);
  } catch (error) {
    if (error instanceof ApiError && error.outcome === "final") {
      // The service does not know an order it accepted: the outcome is unknown.
      await deps.ledger.transition(campaign, key, ["submitted"], "failed_uncertain", {
        error_type: error.type,
        error_message: `status lookup failed: ${error.message}`,
      });
      return { status: "failed_uncertain" };
    }
    throw error;
  }

  if (lookup.kind === "processing" || lookup.order.status === "PROCESSING") {
    return pollAgain(job, token, deps, log);
  }
  if (lookup.order.status === "COMPLETED") {
    const patch = completedPatch(
      lookup.order,
      ledgerOrder.identities,
      deps.storePayoutUrls ?? false,
    );
    await deps.ledger.transition(campaign, key, ["submitted"], "completed", patch);
    log.info("async order completed");
    return { status: "completed" };
  }
  // FAILED (or a status we do not know): the service says the order did not go through.
  await deps.ledger.transition(campaign, key, ["submitted"], "failed_final", {
    order_id: orderId,
    error_type: "order_failed",
    error_message: `the service reports order status ${lookup.order.status}`,
  });
  log.warn({ status: lookup.order.status }, "async order did not complete");
  return { status: "failed_final" };
}

async function pollAgain(
  job: Job<StatusJobData>,
  token: string | undefined,
  deps: FollowOrderDeps,
  log: Logger,
): Promise<never | { status: string }> {
  const polls = (job.data.polls ?? 0) + 1;
  if (polls > (deps.maxPolls ?? 500)) {
    await deps.ledger.transition(
      job.data.campaign,
      job.data.key,
      ["submitted"],
      "failed_uncertain",
      {
        error_type: "still_processing",
        error_message: `order ${job.data.orderId} still PROCESSING after ${polls - 1} status checks`,
      },
    );
    log.warn("order still processing after the last status check: rows failed_uncertain");
    return { status: "failed_uncertain" };
  }
  const delay = Math.min(
    (deps.pollDelayMs ?? 1000) * 1.5 ** (polls - 1),
    deps.maxPollDelayMs ?? 30_000,
  );
  await job.updateData({ ...job.data, polls });
  await job.moveToDelayed(Date.now() + Math.round(delay), token);
  throw new DelayedError();
}
