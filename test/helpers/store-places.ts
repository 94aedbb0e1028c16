import type { Stores } from "../../src/stores/types.js";

/** One store of openStores (src/stores/stores.ts): where it lives with each setting, and what it holds. */
export interface StorePlace {
  /** The store's name, as docs/architecture/overview.md's "Where state lives" names it. */
  name: string;
  /** Where it lives with files (GIFTJOBS_DATABASE_URL unset). */
  files: string;
  /** Where it lives with PostgreSQL (GIFTJOBS_DATABASE_URL set). */
  postgresql: string;
  /** What it holds. */
  holds: string;
}

/** The stores of Stores (src/stores/stores.ts), each of which has a place below: one missing is a type error. */
type StoreName = Exclude<keyof Stores, "kind" | "dataDir" | "close">;

const PLACES: Record<StoreName, StorePlace> = {
  catalog: {
    name: "catalog",
    files: "`catalog/` under the data dir",
    postgresql: "`catalog_snapshots`, `catalog_products`, `catalog_current`",
    holds: "the catalog snapshots and which one is current",
  },
  journal: {
    name: "order journal",
    files: "`campaigns/NAME/orders.ndjson` and `order-tags`",
    postgresql: "`order_journal`, `order_tags_marker`",
    holds: "each campaign's orders and keys, for a re-import after a lost ledger",
  },
  paidMemory: {
    name: "paid memory",
    files: "`campaigns/NAME/paid.ndjson` and `imports.ndjson`",
    postgresql: "`paid_rows`, `imported_files`",
    holds: "the rows paid and the files imported, for the repeats check",
  },
  audit: {
    name: "audit trail",
    files: "`audit.ndjson` and `audit.head` under the data dir",
    postgresql: "`audit_entries`",
    holds: "who did what, each entry chained to the one before",
  },
  productOverrides: {
    name: "product overrides",
    files: "Redis, `<prefix>:product-overrides`",
    postgresql: "`product_overrides`",
    holds: "the product states `product.update` pushed since the sync",
  },
  users: {
    name: "dashboard users",
    files: "the users file (`--users`, `GIFTJOBS_USERS_FILE`)",
    postgresql: "the users file (`--users`, `GIFTJOBS_USERS_FILE`)",
    holds: "who may sign in to the dashboard, their roles and token hashes",
  },
};

/**
 * Every store openStores opens, in the order of docs/architecture/overview.md's table ("Where
 * state lives"), which a test holds to this list: a store added here and not there fails it.
 */
export const STORE_PLACES: readonly StorePlace[] = Object.values(PLACES);
