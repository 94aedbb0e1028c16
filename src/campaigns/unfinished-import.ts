import { DatabaseDownError } from "../db/database-error.js";
import type { Ledger } from "../ledger/ledger.js";
import { isRedisAway } from "../redis/outage-reporter.js";

/** Meta field of a campaign whose last import was cut short (Redis went away, say). */
const FIELD = "import_unfinished";

/**
 * Runs `record` (pass 2 of an import) with the campaign marked unfinished until it ends: an
 * import cut short mid-way (Redis, or PostgreSQL holding the journal, gone) leaves the mark, and the same import run again records the rest
 * without `--append` (docs/architecture/redis.md, "Redis outages"). The rows already recorded are
 * known to the ledger and not recorded twice either way.
 */
export async function recordingMarked<T>(
  ledger: Ledger,
  campaign: string,
  record: () => Promise<T>,
): Promise<T> {
  await ledger.campaigns.setMeta(campaign, { [FIELD]: new Date().toISOString() });
  try {
    const result = await record();
    await ledger.campaigns.clearMeta(campaign, FIELD);
    return result;
  } catch (error) {
    // Only Redis or PostgreSQL (the journal's) going away leaves the mark: a refusal (a budget,
    // a cancel) is an import that ended, and must not let another file in without --append.
    if (!isRedisAway(error) && !(error instanceof DatabaseDownError))
      await ledger.campaigns.clearMeta(campaign, FIELD);
    throw error;
  }
}

/** True when the campaign's last import did not finish recording its rows. */
export async function importWasCutShort(ledger: Ledger, campaign: string): Promise<boolean> {
  const meta = (await ledger.campaigns.meta(campaign)) as Record<string, string | undefined>;
  return Boolean(meta[FIELD]);
}
