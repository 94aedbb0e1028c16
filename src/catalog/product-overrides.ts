import { join } from "node:path";
import type { Redis } from "ioredis";
import { type ProductUpdateState, ProductUpdateStateSchema } from "../api/product-update-schema.js";
import type { ProductUpdate } from "../api/schemas.js";
import { redisKey } from "../redis/redis-key.js";
import { replyWord } from "../redis/replies.js";
import { runScript } from "../redis/scripts.js";
import type { CatalogIndex, CatalogIndexEntry } from "./index-entry.js";
import { readDenominations } from "./product-denominations.js";
import { catalogDir } from "./snapshot-layout.js";

/** The newest state the service pushed for a product (`product.update`), as Redis holds it. */
export interface ProductOverride {
  /** The message's `timestamp`, ms since the epoch: what messages and snapshots are ordered by. */
  at: number;
  /** The message's `timestamp` as the service wrote it. */
  timestamp: string;
  /** The message's `new_state`: `price_multiplier`, `is_orderable`, `denominations` if sent. */
  state: ProductUpdateState;
  /** When a receiver recorded it. */
  received_at: string;
}

/** The overrides by product code. */
export type ProductOverrideMap = Record<string, ProductOverride>;

/** What recording a pushed state did: `stale` when a state as new or newer is held. */
export type StateRecordResult = "applied" | "stale";

/**
 * Where pushed product states are kept: Redis (ProductOverrides), or PostgreSQL when
 * GIFTJOBS_DATABASE_URL is set (PgProductOverrides). Either records a state only when it is
 * newer than the one held, in one step, and is read by every receiver, import and worker.
 */
export interface ProductOverrideStore {
  /**
   * Records `update.new_state` as the product's newest state, unless a state of a message as new
   * or newer is recorded already (messages may arrive out of order): then `stale`, and nothing
   * changes. `update.timestamp` must parse (ProductUpdateSchema checks it).
   */
  record(update: ProductUpdate, receivedAt?: Date): Promise<StateRecordResult>;
  /** Every override recorded. */
  read(): Promise<ProductOverrideMap>;
  /** `index` with the overrides newer than it laid over (see applyProductOverrides). */
  applyTo(index: CatalogIndex): Promise<CatalogIndex>;
}

/** The override an update records (its time parsed: a timestamp that does not is refused). */
export function overrideOf(update: ProductUpdate, receivedAt: Date): ProductOverride {
  const at = Date.parse(update.timestamp);
  if (!Number.isFinite(at)) throw new RangeError(`not a timestamp: ${update.timestamp}`);
  const { price_multiplier, is_orderable, denominations } = update.new_state;
  return {
    at,
    timestamp: update.timestamp,
    state: { price_multiplier, is_orderable, ...(denominations ? { denominations } : {}) },
    received_at: receivedAt.toISOString(),
  };
}

/**
 * The product states the service pushed (`product.update`), kept in Redis under the prefix
 * (`<prefix>:product-overrides`, a hash by product code whose values are ProductOverride JSON),
 * so that every receiver, import and worker sharing the Redis sees the same ones whatever its
 * data dir. The catalog snapshots are never changed: an override is laid over a snapshot's index
 * when it is newer than the snapshot (applyProductOverrides). See
 * docs/architecture/webhooks.md, "Webhooks".
 */
export class ProductOverrides implements ProductOverrideStore {
  /** The hash's key. */
  readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = redisKey(prefix, "product-overrides");
  }

  /** See ProductOverrideStore.record: lua/record-product-state.lua checks and writes. */
  async record(update: ProductUpdate, receivedAt = new Date()): Promise<StateRecordResult> {
    const value = overrideOf(update, receivedAt);
    const args = { code: update.product_code, at: value.at, value: JSON.stringify(value) };
    const reply = await runScript(
      this.redis,
      "giftjobsRecordProductState",
      [this.key],
      [JSON.stringify(args)],
    );
    const kind = replyWord(reply, "RECORD_PRODUCT_STATE");
    if (kind === "product_recorded") return "applied";
    if (kind === "stale") return kind;
    throw new Error(`RECORD_PRODUCT_STATE answered ${kind}, which it never does`);
  }

  /** Every override recorded; a value that cannot be read is left out. */
  async read(): Promise<ProductOverrideMap> {
    const values = await this.redis.hgetall(this.key);
    const out: ProductOverrideMap = {};
    for (const [code, text] of Object.entries(values)) {
      const override = parseOverride(text);
      if (override) out[code] = override;
    }
    return out;
  }

  /** `index` with the overrides newer than it laid over (see applyProductOverrides). */
  async applyTo(index: CatalogIndex): Promise<CatalogIndex> {
    return applyProductOverrides(index, await this.read());
  }
}

function parseOverride(text: string): ProductOverride | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const record = value as Partial<ProductOverride> | null;
  if (typeof record?.at !== "number" || typeof record.timestamp !== "string") return undefined;
  const state = ProductUpdateStateSchema.safeParse(record.state);
  if (!state.success) return undefined;
  return {
    at: record.at,
    timestamp: record.timestamp,
    state: state.data,
    received_at: String(record.received_at ?? ""),
  };
}

/**
 * Whether `override` says something the snapshot fetched at `fetchedAt` may not know: it is of a
 * change made after the sync started (a sync's products are read from its start on, so one of an
 * earlier change is in the snapshot). A snapshot time that does not parse: every override is.
 */
export function isNewerThan(override: ProductOverride, fetchedAt: string | undefined): boolean {
  const since = fetchedAt === undefined ? Number.NaN : Date.parse(fetchedAt);
  return !(override.at <= since);
}

/**
 * `index` with the pushed states newer than it laid over, its own entries untouched (a new index
 * object when anything changes): a product's `is_orderable`, its `discount_multiplier` (the
 * message's `price_multiplier`: the same field, OpenAPI ProductDiscountMultiplier) and, when the
 * message carries them, its denominations. A subscription's plans take their product's
 * `is_orderable` and multiplier; a plan's denomination stays its price. `state` (LIVE, ...) is
 * not part of the message and stays the snapshot's. Each changed entry names the message's
 * timestamp in `pushed_at`, so that a refusal can say where it comes from.
 */
export function applyProductOverrides(
  index: CatalogIndex,
  overrides: ProductOverrideMap,
): CatalogIndex {
  const fresh = Object.entries(overrides).filter(([, o]) => isNewerThan(o, index.fetched_at));
  if (fresh.length === 0) return index;
  const newer = new Map(fresh);
  let entries: Record<string, CatalogIndexEntry> | undefined;
  for (const [code, entry] of Object.entries(index.entries)) {
    const override = newer.get(entry.plan_of ?? entry.code) ?? newer.get(entry.code);
    if (!override) continue;
    entries ??= { ...index.entries };
    entries[code] = overriddenEntry(entry, override);
  }
  return entries ? { ...index, entries } : index;
}

function overriddenEntry(entry: CatalogIndexEntry, override: ProductOverride): CatalogIndexEntry {
  const { state } = override;
  const out: CatalogIndexEntry = {
    ...entry,
    is_orderable: state.is_orderable,
    discount_multiplier: state.price_multiplier,
    pushed_at: override.timestamp,
  };
  // An entry with problems keeps its null denominations (refused for them); a plan its price.
  if (state.denominations && !entry.plan_of && !entry.problems)
    out.denominations = readDenominations(state.denominations);
  return out;
}

/**
 * Where the receiver kept product states before they moved to Redis (`catalog/overrides.json`
 * beside the snapshots). It is no longer read: the receiver warns when it finds one.
 */
export function legacyOverridesPath(dataDir: string): string {
  return join(catalogDir(dataDir), "overrides.json");
}
