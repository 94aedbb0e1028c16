import type { Ledger } from "../ledger/ledger.js";
import type { CampaignCounts, CampaignMeta } from "../ledger/types.js";
import { forgottenAt } from "./forget-records.js";
import { type CampaignStall, stallOf } from "./stall.js";
import { type CampaignState, campaignState } from "./state.js";
import type { WorkerBeats } from "./worker-beats.js";

/** `orders status --json`: exactly these keys. */
export interface CampaignStatus {
  campaign: string;
  state: CampaignState;
  total: number;
  queued: number;
  in_flight: number;
  submitted: number;
  completed: number;
  failed_final: number;
  failed_uncertain: number;
  /** Rows of a cancelled campaign that were never sent. */
  cancelled: number;
  /** Rows whose order the service replayed from before this campaign was imported. */
  replayed: number;
  /** Queued rows whose send_at is still ahead (not sent before it). */
  scheduled: number;
  /** When the next scheduled rows are sent (ISO), or null. */
  next_send_at: string | null;
  /** null while running; the reason (and since when) while paused. */
  paused: { reason: string; since: string | null } | null;
  /**
   * Why a running campaign with rows to send does not move (no worker alive, or its workers
   * cannot reach the service), with the fix; null when it is not stalled.
   */
  stalled: CampaignStall | null;
  /**
   * Rows imported with --allow-repeats, per earlier campaign whose rows they pay again
   * (docs/architecture/repeats.md); absent when there are none.
   */
  repeats?: Record<string, number>;
  /**
   * When its people's e-mails, references and names were removed (`orders forget`,
   * docs/architecture/forgetting.md); absent when they were not.
   */
  forgotten_at?: string;
}

/**
 * The campaign's status. With `workers`, a running campaign with rows to send and no live order
 * worker is stalled (`no_worker`); without, only a worker's mark can say it is.
 */
export async function campaignStatus(
  ledger: Ledger,
  campaign: string,
  workers?: WorkerBeats,
): Promise<CampaignStatus> {
  const [counts, meta, next, orderWorkers] = await Promise.all([
    ledger.campaigns.counts(campaign),
    ledger.campaigns.meta(campaign),
    ledger.dispatch.nextSendAt(campaign),
    workers?.orderWorkers(),
  ]);
  return statusOf(campaign, meta, counts, next, orderWorkers);
}

/** `orderWorkers`: the order workers alive (WorkerBeats), when known. */
export function statusOf(
  campaign: string,
  meta: CampaignMeta,
  counts: CampaignCounts,
  nextSendAt?: number,
  orderWorkers?: number,
): CampaignStatus {
  const state = campaignState(meta, counts);
  const pending = counts.queued + counts.in_flight + counts.submitted;
  return {
    campaign,
    state,
    ...pick(counts),
    next_send_at:
      counts.scheduled > 0 && nextSendAt !== undefined ? new Date(nextSendAt).toISOString() : null,
    paused: meta.paused_reason
      ? { reason: meta.paused_reason, since: meta.paused_at ?? null }
      : null,
    stalled: stallOf(state, pending, meta, orderWorkers),
    ...repeatsField(meta),
    ...forgottenField(meta),
  };
}

/**
 * `repeats` of a campaign that records rows paid again knowingly (meta `repeats`), else
 * nothing: `orders status --json` and `orders report --json` carry it alike.
 */
export function repeatsField(meta: CampaignMeta): { repeats?: Record<string, number> } {
  return meta.repeats ? { repeats: JSON.parse(meta.repeats) as Record<string, number> } : {};
}

/**
 * The meta `repeats` with `added` rows paid again knowingly counted in, per earlier campaign:
 * what an import with --allow-repeats and `orders retry --new-key --allow-repeats` record.
 */
export function addedRepeats(
  stored: string | undefined,
  added: Readonly<Record<string, number>>,
): string {
  const counts: Record<string, number> = stored ? JSON.parse(stored) : {};
  for (const [campaign, rows] of Object.entries(added))
    counts[campaign] = (counts[campaign] ?? 0) + rows;
  return JSON.stringify(counts);
}

/** `forgotten_at` of a forgotten campaign's status (see forgottenAt), else nothing. */
function forgottenField(meta: CampaignMeta): { forgotten_at?: string } {
  const at = forgottenAt(meta);
  return at ? { forgotten_at: at } : {};
}

/** What status and list say of a forgotten campaign. */
export function forgottenText(at: string): string {
  return `forgotten ${at}: e-mails, references and names removed; money, counts, ids and statuses kept`;
}

/** `repeats: 12 of gifts, 3 of q3`, or undefined when the campaign repeats no other's rows. */
export function repeatsText(repeats: Record<string, number> | undefined): string | undefined {
  if (!repeats) return undefined;
  const parts = Object.entries(repeats).map(([campaign, rows]) => `${rows} of ${campaign}`);
  return parts.length > 0 ? `repeats: ${parts.join(", ")}` : undefined;
}

function pick(c: CampaignCounts) {
  return {
    total: c.total,
    queued: c.queued,
    in_flight: c.in_flight,
    submitted: c.submitted,
    completed: c.completed,
    failed_final: c.failed_final,
    failed_uncertain: c.failed_uncertain,
    cancelled: c.cancelled,
    replayed: c.replayed,
    scheduled: c.scheduled,
  };
}

/** Rows with work ahead of them. */
export function pendingRows(status: CampaignStatus): number {
  return status.queued + status.in_flight + status.submitted;
}

export function anyFailed(status: CampaignStatus): boolean {
  return status.failed_final + status.failed_uncertain > 0;
}
