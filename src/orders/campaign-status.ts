import type { CampaignCounts, Ledger } from "./ledger.js";

/** `orders status --json`: exactly these keys. */
export interface CampaignStatus {
  campaign: string;
  total: number;
  queued: number;
  in_flight: number;
  submitted: number;
  completed: number;
  failed_final: number;
  failed_uncertain: number;
  /** null while running; the reason (and since when) while paused. */
  paused: { reason: string; since: string | null } | null;
}

export async function campaignStatus(ledger: Ledger, campaign: string): Promise<CampaignStatus> {
  const [counts, meta] = await Promise.all([ledger.counts(campaign), ledger.meta(campaign)]);
  return {
    campaign,
    ...pick(counts),
    paused: meta.paused_reason
      ? { reason: meta.paused_reason, since: meta.paused_at ?? null }
      : null,
  };
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
  };
}

/** Rows with work ahead of them. */
export function pendingRows(status: CampaignStatus): number {
  return status.queued + status.in_flight + status.submitted;
}

export function anyFailed(status: CampaignStatus): boolean {
  return status.failed_final + status.failed_uncertain > 0;
}
