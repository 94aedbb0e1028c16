import type { Redis } from "ioredis";
import { ProductOverrides } from "../catalog/product-overrides.js";
import { LedgerArchive } from "./archive.js";
import { LedgerCampaigns } from "./campaigns.js";
import { DailySpend } from "./daily-limit.js";
import { LedgerDispatch } from "./dispatch.js";
import { LedgerFollows } from "./follow.js";
import { ImportedToday } from "./imported-today.js";
import { LedgerOrders } from "./orders.js";
import { type CampaignKeys, LedgerStore } from "./store.js";

export type { CampaignShape } from "./archive.js";
export type { LedgerOrder, LedgerRow } from "./types.js";

/** Campaign names are part of Redis keys and file names: keep them plain. */
export const CAMPAIGN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The campaign ledger in Redis (docs/architecture/ledger.md): per campaign a `rows` hash, an
 * `orders` hash, a `counts` hash and a `meta` hash, read and changed through its parts, which
 * share one connection and the Lua scripts. Every change of status goes through a script so
 * counts are exact under concurrency.
 */
export class Ledger {
  readonly campaigns: LedgerCampaigns;
  readonly orders: LedgerOrders;
  readonly follows: LedgerFollows;
  readonly dispatch: LedgerDispatch;
  readonly archive: LedgerArchive;
  /** The day's spend per currency and the daily limit's pause (daily-limit.ts). */
  readonly dailySpend: DailySpend;
  /** What each person imported each day, for the four-eyes rule (imported-today.ts). */
  readonly importedToday: ImportedToday;
  private readonly store: LedgerStore;

  constructor(redis: Redis, prefix: string) {
    this.store = new LedgerStore(redis, prefix);
    this.campaigns = new LedgerCampaigns(this.store);
    this.orders = new LedgerOrders(this.store);
    this.follows = new LedgerFollows(this.store, this.orders);
    this.dispatch = new LedgerDispatch(this.store);
    this.archive = new LedgerArchive(this.store);
    const store = this.store;
    this.dailySpend = new DailySpend(redis, prefix, (c) => store.keys(c), store.runningKey());
    this.importedToday = new ImportedToday(redis, prefix);
  }

  /** The names of a campaign's Redis keys. */
  keys(campaign: string): CampaignKeys {
    return this.store.keys(campaign);
  }

  /**
   * The product states the service pushed (`product.update`), kept under this prefix on this
   * connection (src/catalog/product-overrides.ts): an import lays them over its catalog index.
   */
  productOverrides(): ProductOverrides {
    return new ProductOverrides(this.store.redis, this.store.prefix);
  }
}
