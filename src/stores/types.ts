import type { AuditTrail } from "../audit/trail.js";
import type { CatalogStore } from "../catalog/catalog-store.js";
import type { ProductOverrideStore } from "../catalog/product-overrides.js";
import type { Config } from "../config.js";
import type { Ledger } from "../ledger/ledger.js";
import type { OrderJournal } from "../orders/journal-store.js";
import type { PaidMemory } from "../orders/paid-memory.js";

/** What decides where the stores are: the data dir, and PostgreSQL when its URL is set. */
export type StoreSettings = Pick<Config, "dataDir" | "databaseUrl" | "databaseSchema">;

/**
 * The dashboard's users as a store: their lines (`NAME:ROLES:ID:HASH`, docs/operations.md,
 * "Dashboard users"), which the dashboard reads and checks when it starts (usersOf,
 * src/dashboard/users-file.ts).
 */
export interface UserStore {
  /** Where the users are, in words, for messages: a mistake names its line there. */
  readonly where: string;
  /** The users' lines, as one text. */
  text(): Promise<string>;
}

/**
 * Every store giftjobs keeps, chosen once from the settings: files under GIFTJOBS_DATA_DIR, or
 * PostgreSQL when GIFTJOBS_DATABASE_URL is set (docs/architecture/overview.md, "Where state
 * lives"). Commands, the worker, the receiver, the dashboard and doctor open them once
 * (openStores) and pass them down: no other module decides where a store is.
 */
export interface Stores {
  /** `files` or `postgresql`: said by doctor and in messages, never branched on elsewhere. */
  readonly kind: "files" | "postgresql";
  /** `GIFTJOBS_DATA_DIR`: what is only ever local (spools, the error files, the sync's lock). */
  readonly dataDir: string;
  /** The catalog's snapshots (docs/architecture/catalog.md, "Two stores, one sync"). */
  readonly catalog: CatalogStore;
  /** The campaigns' order journals (docs/architecture/keys-and-exactly-once.md, "Lost ledger"). */
  readonly journal: OrderJournal;
  /** The rows paid, for the repeats check (docs/architecture/repeats.md). */
  readonly paidMemory: PaidMemory;
  /** The audit trail (docs/architecture/audit.md). */
  readonly audit: AuditTrail;
  /**
   * The product states the service pushed (`product.update`): with files, Redis's hash under the
   * ledger's prefix (on its connection); with PostgreSQL, the table.
   */
  productOverrides(ledger: Ledger): ProductOverrideStore;
  /** The dashboard's users: the file `file` names (`--users`, GIFTJOBS_USERS_FILE). */
  users(file: UsersFile): UserStore;
  /** Closes what the stores opened (PostgreSQL's pool); nothing for files. */
  close(): Promise<void>;
}

/** The users file as the settings name it: its path, and the setting that gave it. */
export interface UsersFile {
  path: string;
  /** `--users` (the dashboard) or `GIFTJOBS_USERS_FILE` (a command's token). */
  setting: string;
}

/** How to open PostgreSQL's pool: a command that only appends an entry needs one connection. */
export interface OpenStoresOptions {
  /** Connections at most. @defaultValue 4 */
  max?: number;
}
