import { replyWord } from "../redis/replies.js";
import { encodeOrder, encodeRow } from "./codec.js";
import type { LedgerStore } from "./store.js";
import type { LedgerOrder, LedgerRow, StoredState } from "./types.js";

/**
 * What an archive must find unchanged before the campaign's data is removed: its meta and
 * counts hashes as stored, and how many rows and orders it holds.
 */
export interface CampaignShape {
  meta: Record<string, string>;
  counts: Record<string, string>;
  rows: number;
  orders: number;
}

/**
 * The ledger's side of `orders archive` and `orders restore` (docs/architecture/campaigns.md,
 * "Archive"): the campaign's shape, the removal of its data, and its return.
 */
export class LedgerArchive {
  constructor(private readonly store: LedgerStore) {}

  /** The campaign as an archive sees it (see removeCampaignData). */
  async shape(campaign: string): Promise<CampaignShape> {
    const k = this.store.keys(campaign);
    // One transaction: the four answers describe one moment.
    const replies = await this.store.redis
      .multi()
      .hgetall(k.meta)
      .hgetall(k.counts)
      .hlen(k.rows)
      .hlen(k.orders)
      .exec();
    const values = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const [meta, counts, rows, orders] = values as [
      Record<string, string>,
      Record<string, string>,
      number,
      number,
    ];
    return { meta, counts, rows, orders };
  }

  /**
   * Removes every key of an archived campaign but its tombstone (meta: state archived,
   * `archived_at`, `archive_path`; and counts), and takes it out of the running set, in one
   * script, provided it still has the shape `expected` (its archive was written from it). The
   * campaigns set keeps it. On a campaign archived already, removes data keys left behind.
   */
  async removeCampaignData(
    campaign: string,
    expected: CampaignShape,
    tombstone: { archivedAt: string; archivePath: string },
  ): Promise<{ outcome: "removed" | "already" } | { outcome: "changed"; why: string }> {
    const k = this.store.keys(campaign);
    const reply = await this.store.run(
      "giftjobsLedgerArchive",
      [
        k.meta,
        k.counts,
        k.rows,
        k.orders,
        k.pending,
        k.window,
        this.store.runningKey(),
        k.scheduled,
        k.minutes,
      ],
      [
        JSON.stringify({
          campaign,
          meta: expected.meta,
          counts: expected.counts,
          rows: expected.rows,
          orders: expected.orders,
          archived_at: tombstone.archivedAt,
          archive_path: tombstone.archivePath,
        }),
      ],
    );
    return decodeArchive(reply);
  }

  /** Empties the data keys of an archived campaign, for a restore. False when not archived. */
  async clearArchivedData(campaign: string): Promise<boolean> {
    const k = this.store.keys(campaign);
    const reply = await this.store.run(
      "giftjobsLedgerClearArchived",
      [k.meta, k.rows, k.orders, k.pending, k.window, k.scheduled],
      [],
    );
    const kind = replyWord(reply, "CLEAR_ARCHIVED");
    if (kind === "cleared" || kind === "not_allowed") return kind === "cleared";
    throw new Error(`CLEAR_ARCHIVED answered ${kind}, which it never does`);
  }

  /**
   * Writes back rows and orders read from an archive. Only for a campaign being restored: its
   * tombstone keeps it archived until finishRestore.
   */
  async restoreEntries(
    campaign: string,
    entries: { rows: [string, LedgerRow][]; orders: [number, LedgerOrder][] },
  ): Promise<void> {
    const k = this.store.keys(campaign);
    const tx = this.store.redis.multi();
    if (entries.rows.length)
      tx.hset(k.rows, Object.fromEntries(entries.rows.map(([id, row]) => [id, encodeRow(row)])));
    if (entries.orders.length)
      tx.hset(
        k.orders,
        Object.fromEntries(
          entries.orders.map(([n, order]) => [String(n), encodeOrder(order, { campaign })]),
        ),
      );
    await tx.exec();
  }

  /**
   * Ends a restore: meta and counts become `meta` and `counts` (as archived), and a running
   * campaign rejoins the running set, provided the tombstone is still the one of the archive
   * archived at `archivedAt` and the data keys hold what was `written` (nothing removed them
   * meanwhile).
   */
  async finishRestore({
    campaign,
    archivedAt,
    meta,
    counts,
    written,
  }: {
    campaign: string;
    archivedAt: string;
    meta: Record<string, string>;
    counts: Record<string, string>;
    written: { rows: number; orders: number };
  }): Promise<{ restored: true; state: StoredState } | { restored: false; why: string }> {
    const k = this.store.keys(campaign);
    const reply = await this.store.run(
      "giftjobsLedgerFinishRestore",
      [k.meta, k.counts, this.store.runningKey(), k.rows, k.orders],
      [
        JSON.stringify({
          campaign,
          archived_at: archivedAt,
          meta,
          counts,
          rows: written.rows,
          orders: written.orders,
        }),
      ],
    );
    return decodeFinishRestore(reply);
  }
}

/** What ARCHIVE answers (lua/archive.lua), read. */
function decodeArchive(
  reply: unknown,
): { outcome: "removed" | "already" } | { outcome: "changed"; why: string } {
  const kind = replyWord(reply, "ARCHIVE");
  if (kind === "archived") return { outcome: "removed" };
  if (kind === "already_archived") return { outcome: "already" };
  if (kind === "campaign_changed")
    return { outcome: "changed", why: String((reply as unknown[])[1]) };
  throw new Error(`ARCHIVE answered ${kind}, which it never does`);
}

/** What FINISH_RESTORE answers (lua/finish-restore.lua), read. */
function decodeFinishRestore(
  reply: unknown,
): { restored: true; state: StoredState } | { restored: false; why: string } {
  const kind = replyWord(reply, "FINISH_RESTORE");
  const value = String((reply as unknown[])[1]);
  if (kind === "restored") return { restored: true, state: value as StoredState };
  if (kind === "not_allowed") return { restored: false, why: `it is ${value}, not archived` };
  if (kind === "campaign_changed") return { restored: false, why: value };
  throw new Error(`FINISH_RESTORE answered ${kind}, which it never does`);
}
