import type { Ledger } from "../ledger/ledger.js";
import type { OutageReporter } from "../redis/outage-reporter.js";
import { type CampaignStatus, campaignStatus, pendingRows } from "./status.js";
import type { WorkerBeats } from "./worker-beats.js";

export interface WaitOptions {
  /** Give up after this long. @defaultValue no limit */
  timeoutMs?: number;
  /** @defaultValue 500 */
  pollMs?: number;
  /** Told of each status read (progress); may throw to stop waiting. */
  onStatus?: (status: CampaignStatus) => void;
  /** Told of failed reads: while Redis is away the wait goes on (it says so), not fails. */
  outage?: Pick<OutageReporter, "failed" | "answered">;
  /** The workers alive: each status says whether the campaign is stalled (campaignStatus). */
  workers?: WorkerBeats;
}

/** Polls the campaign's counts until nothing is queued, in flight or submitted, or the timeout. */
export async function waitForCampaign(
  ledger: Ledger,
  campaign: string,
  options: WaitOptions = {},
): Promise<{ status: CampaignStatus; timedOut: boolean }> {
  const deadline = Date.now() + (options.timeoutMs ?? Number.POSITIVE_INFINITY);
  let last: CampaignStatus | undefined;
  for (;;) {
    const status = await statusUnlessAway(ledger, campaign, options);
    if (status) {
      last = status;
      options.onStatus?.(status);
      if (pendingRows(status) === 0) return { status, timedOut: false };
    }
    if (Date.now() >= deadline) {
      last ??= await campaignStatus(ledger, campaign, options.workers);
      return { status: last, timedOut: true };
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
  }
}

/** The campaign's counts, or undefined while Redis is away (the reporter has said so). */
async function statusUnlessAway(
  ledger: Ledger,
  campaign: string,
  { outage, workers }: WaitOptions,
): Promise<CampaignStatus | undefined> {
  try {
    const status = await campaignStatus(ledger, campaign, workers);
    outage?.answered();
    return status;
  } catch (error) {
    if (outage?.failed(error)) return undefined;
    throw error;
  }
}
