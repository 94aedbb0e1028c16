import { ENV_NAMES } from "../config.js";
import type { CampaignMeta } from "../ledger/types.js";
import type { CampaignState } from "./state.js";

/** Why a running campaign with rows to send does not move. */
type StallReason = "no_worker" | "service_unreachable";

/**
 * A running campaign with rows queued, in flight or submitted that nothing moves: `orders status`
 * and `orders list` (`stalled`, null when not), the dashboard and giftjobs_campaign_stalled
 * (docs/architecture/operators.md, "Stalled campaigns").
 */
export interface CampaignStall {
  reason: StallReason;
  /** Since when (ISO), as the worker that marked it saw it; null for no_worker. */
  since: string | null;
  /** What is wrong and the one thing that fixes it, in plain words. */
  message: string;
}

/** The meta fields of a worker's mark: `service_unreachable: URL: ERROR`, and since when. */
export const STALL_FIELDS = ["stalled_reason", "stalled_at"] as const;

/** The mark a worker sets on a campaign whose orders cannot reach the service at `url`. */
export function serviceStallMark(url: string, error: string): string {
  return `service_unreachable: ${url}: ${error}`;
}

const NO_WORKER_MESSAGE = "no worker is running: start one with `giftjobs worker`";

/**
 * The campaign's stall, or null. Only a running campaign with rows to send can stall. No live
 * order worker comes first (`orderWorkers` 0; undefined: not known, as in a worker, which is one):
 * a mark a worker left is then old news. Otherwise a worker's mark (STALL_FIELDS) says its orders
 * cannot reach the service; the mark goes once an order of it reaches the service.
 */
export function stallOf(
  state: CampaignState,
  pending: number,
  meta: CampaignMeta,
  orderWorkers?: number,
): CampaignStall | null {
  if (state !== "running" || pending === 0) return null;
  if (orderWorkers === 0) return { reason: "no_worker", since: null, message: NO_WORKER_MESSAGE };
  const mark = meta.stalled_reason;
  if (!mark?.startsWith("service_unreachable: ")) return null;
  const what = mark.slice("service_unreachable: ".length);
  return {
    reason: "service_unreachable",
    since: meta.stalled_at ?? null,
    message:
      `the workers cannot reach the service (${what}): check that it is up and that ` +
      `${ENV_NAMES.apiUrl} is right (\`giftjobs doctor\` tries it)`,
  };
}
