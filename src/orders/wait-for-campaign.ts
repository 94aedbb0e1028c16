import { type CampaignStatus, campaignStatus, pendingRows } from "./campaign-status.js";
import type { Ledger } from "./ledger.js";

export interface WaitOptions {
  /** Give up after this long. @defaultValue no limit */
  timeoutMs?: number;
  /** @defaultValue 500 */
  pollMs?: number;
  /** Told of each status read (progress); may throw to stop waiting. */
  onStatus?: (status: CampaignStatus) => void;
}

/** Polls the campaign's counts until nothing is queued, in flight or submitted, or the timeout. */
export async function waitForCampaign(
  ledger: Ledger,
  campaign: string,
  options: WaitOptions = {},
): Promise<{ status: CampaignStatus; timedOut: boolean }> {
  const deadline = Date.now() + (options.timeoutMs ?? Number.POSITIVE_INFINITY);
  for (;;) {
    const status = await campaignStatus(ledger, campaign);
    options.onStatus?.(status);
    if (pendingRows(status) === 0) return { status, timedOut: false };
    if (Date.now() >= deadline) return { status, timedOut: true };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
  }
}
