import type { Job, Queue } from "bullmq";
import type { Ledger } from "./ledger.js";
import type { OrderJobData } from "./order-job.js";

/** Pauses a campaign: its jobs wait (rows stay queued) until resumed. */
export async function pauseCampaign(
  ledger: Ledger,
  campaign: string,
  reason = "paused by operator",
): Promise<boolean> {
  return ledger.pause(campaign, reason);
}

/**
 * Resumes a campaign: clears the pause and promotes its delayed jobs, so they run now rather
 * than when their wait runs out. Returns the number of jobs promoted.
 */
export async function resumeCampaign(
  ledger: Ledger,
  queue: Queue<OrderJobData>,
  campaign: string,
): Promise<number> {
  await ledger.resume(campaign);
  // Collect first, promote after: promoting while paging would shift the pages.
  const mine: Job<OrderJobData>[] = [];
  const pageSize = 1000;
  for (let start = 0; ; start += pageSize) {
    const jobs = await queue.getDelayed(start, start + pageSize - 1);
    for (const job of jobs) if (job?.data?.campaign === campaign) mine.push(job);
    if (jobs.length < pageSize) break;
  }
  let promoted = 0;
  for (const job of mine) {
    try {
      await job.promote();
      promoted += 1;
    } catch {
      // Already moved on (picked up, or promoted by another resume): nothing to do.
    }
  }
  return promoted;
}
