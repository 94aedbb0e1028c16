import type { Ledger } from "../ledger/ledger.js";
import type { CampaignMeta } from "../ledger/types.js";
import { currencyDecimals, fromUnits } from "../money.js";
import { type CampaignStatus, pendingRows, statusOf } from "./status.js";
import type { WorkerBeats } from "./worker-beats.js";

/** Money of one currency of a campaign: what was recorded, what completed orders cost. */
export interface CurrencyMoney {
  rows: number;
  face_value: string;
  price: string;
  spent: string;
  /**
   * Price of the failed_uncertain orders: an order may exist for each, so this may have been
   * spent too (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist").
   */
  uncertain: string;
  /** The campaign's budget in this currency, if it has one. */
  budget?: string;
}

/**
 * One line of `orders list`: the status, plus money, times, Redis memory and the rows done;
 * `stalled` (of the status) comes last in its JSON, after the fields it had before it existed.
 */
export interface CampaignSummary extends CampaignStatus {
  created_at: string | null;
  approved_at: string | null;
  finished_at: string | null;
  cancelled_at: string | null;
  archived_at: string | null;
  money: Record<string, CurrencyMoney>;
  redis_bytes: number;
  /**
   * Rows at an end: completed + failed_final + failed_uncertain + cancelled (docs/concepts.md,
   * "Done"); its parts are the status's own fields, shown apart (rowProgress, progressCells).
   */
  done: number;
}

/**
 * The campaign's summary. `orderWorkers`: the order workers alive, read once for a whole list
 * (see campaignStatus); a WorkerBeats to read them for this campaign alone.
 */
export async function campaignSummary(
  ledger: Ledger,
  campaign: string,
  workers?: WorkerBeats | number,
): Promise<CampaignSummary> {
  const [counts, meta, redisBytes, nextSendAt, orderWorkers] = await Promise.all([
    ledger.campaigns.counts(campaign),
    ledger.campaigns.meta(campaign),
    ledger.campaigns.memoryUsage(campaign),
    ledger.dispatch.nextSendAt(campaign),
    typeof workers === "number" ? workers : workers?.orderWorkers(),
  ]);
  const { stalled, ...status } = statusOf(campaign, meta, counts, nextSendAt, orderWorkers);
  return {
    ...status,
    created_at: meta.created_at ?? null,
    approved_at: meta.approved_at ?? null,
    finished_at: meta.finished_at ?? null,
    cancelled_at: meta.cancelled_at ?? null,
    archived_at: meta.archived_at ?? null,
    money: moneyOf(meta),
    redis_bytes: redisBytes,
    done: status.total - pendingRows({ ...status, stalled }),
    stalled,
  };
}

/** Every campaign, oldest first; with `workers`, a running one no worker serves is stalled. */
export async function listCampaigns(
  ledger: Ledger,
  workers?: WorkerBeats,
): Promise<CampaignSummary[]> {
  const [names, orderWorkers] = await Promise.all([
    ledger.campaigns.names(),
    workers?.orderWorkers(),
  ]);
  const all = await Promise.all(names.map((name) => campaignSummary(ledger, name, orderWorkers)));
  return all.sort((a, b) => (a.created_at ?? "").localeCompare(b.created_at ?? ""));
}

/** Per currency: planned rows, face value and price, spend (and what may be spent), budget (from the campaign's meta). */
export function moneyOf(meta: CampaignMeta): Record<string, CurrencyMoney> {
  const currencies = new Set<string>();
  for (const field of Object.keys(meta)) {
    const match =
      /^(?:planned_rows|planned_face|planned_price|spent|uncertain|budget):([A-Z]{3})$/.exec(field);
    if (match) currencies.add(match[1]!);
  }
  const money: Record<string, CurrencyMoney> = {};
  for (const currency of [...currencies].sort()) {
    const scale = currencyDecimals(currency);
    const raw = (field: string) =>
      (meta as Record<string, string | undefined>)[`${field}:${currency}`];
    const units = (field: string) => fromUnits(BigInt(raw(field) ?? "0"), scale);
    money[currency] = {
      rows: Number(meta[`planned_rows:${currency}`] ?? 0),
      face_value: units("planned_face"),
      price: units("planned_price"),
      spent: units("spent"),
      uncertain: units("uncertain"),
      ...(raw("budget") !== undefined ? { budget: units("budget") } : {}),
    };
  }
  return money;
}
