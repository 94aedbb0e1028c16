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

/** Failed rows by status, then by the error type of their order. */
export type FailureCounts = Record<"failed_final" | "failed_uncertain", Record<string, number>>;

/** Error types named in the line before "and N more". */
const TYPES_NAMED = 3;

/**
 * Why `orders status --wait` exits 1, in one line (docs/commands.md, "Why a wait fails"): the
 * failed rows by status and error type, and the commands that show and resend them. Reads every
 * order of the campaign once (HSCAN): it is said once, at the end of a wait.
 */
export async function whyFailed(
  ledger: Ledger,
  campaign: string,
): Promise<{ line: string; failures: FailureCounts }> {
  const failures: FailureCounts = { failed_final: {}, failed_uncertain: {} };
  for await (const [, order] of ledger.orders.all(campaign)) {
    if (order.status !== "failed_final" && order.status !== "failed_uncertain") continue;
    const byType = failures[order.status];
    const type = order.error_type || "unknown";
    // A failed order holds only its own rows (rows moved on to a later order left it).
    byType[type] = (byType[type] ?? 0) + order.identities.length;
  }
  return { line: failureLine(campaign, failures), failures };
}

/**
 * The line of whyFailed (exported for its tests).
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function failureLine(campaign: string, failures: FailureCounts): string {
  const parts = (["failed_final", "failed_uncertain"] as const).flatMap((status) => {
    const entries = Object.entries(failures[status]).sort((a, b) => b[1] - a[1]);
    if (entries.length === 0) return [];
    const rows = entries.reduce((sum, [, n]) => sum + n, 0);
    const named = entries
      .slice(0, TYPES_NAMED)
      .map(([type, n]) => `${type.replaceAll("_", " ")}: ${n}`);
    const more = entries.length > TYPES_NAMED ? `, and ${entries.length - TYPES_NAMED} more` : "";
    return [`${rows} ${rows === 1 ? "row" : "rows"} ${status} (${named.join(", ")}${more})`];
  });
  const final = Object.keys(failures.failed_final).length > 0;
  const uncertain = Object.keys(failures.failed_uncertain).length > 0;
  const retry = `giftjobs orders retry --campaign ${campaign}`;
  const again =
    final && uncertain
      ? `${retry} (failed_uncertain, same keys), ${retry} --new-key (failed_final, once fixed)`
      : final
        ? `${retry} --new-key (once fixed: nothing was made for them)`
        : `${retry} (same keys: an order may exist)`;
  const what = parts.length ? parts.join(" and ") : "rows failed";
  return `campaign ${campaign}: ${what}; each row's error: giftjobs orders report --campaign ${campaign}; to send them again: ${again}`;
}

/**
 * What holds a campaign back, for the line of a wait that timed out: `; it is PAUSED: REASON`
 * or `; it is STALLED (REASON): MESSAGE`, else "".
 */
export function heldBack(status: CampaignStatus): string {
  if (status.paused) return `; it is PAUSED: ${status.paused.reason}`;
  if (status.stalled)
    return `; it is STALLED (${status.stalled.reason}): ${status.stalled.message}`;
  return "";
}

/**
 * For a wait: the line to tell when the campaign is paused (once per pause, again if its reason
 * changes), else undefined. A paused campaign sends nothing until resumed: a wait in a script
 * would otherwise say nothing until its timeout, or forever.
 */
export function pauseTeller(campaign: string): (status: CampaignStatus) => string | undefined {
  let told: string | undefined;
  return (status) => {
    const reason = status.paused?.reason;
    if (reason === told) return undefined;
    told = reason;
    if (reason === undefined) return undefined;
    const since = status.paused?.since ? ` since ${status.paused.since}` : "";
    return `giftjobs: campaign ${campaign} is PAUSED${since}: ${reason}\n`;
  };
}
