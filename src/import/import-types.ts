import type { ApiClient } from "../api/client.js";
import type { CatalogIndex } from "../catalog/index-entry.js";
import type { Ledger } from "../ledger/ledger.js";
import type { StoredState } from "../ledger/types.js";
import type { Logger } from "../log.js";
import type { CurrencyTotal } from "../orders/totals.js";
import type { Stores } from "../stores/stores.js";
import type { DailyLimitNote } from "./daily-limit-note.js";
import type { PricedBy, Pricing } from "./pricing.js";
import type { RepeatGroup } from "./repeats.js";
import type { RowError } from "./validation/row-error.js";

/** Where an import is: for a progress bar. */
export interface ImportProgress {
  phase: "validate" | "enqueue";
  /** Rows read so far. */
  rows: number;
  /** Bytes of the file parsed so far (validate: the bar's position in the file). */
  bytes: number;
  /** Rows recorded so far (enqueue). */
  enqueued: number;
  /** Rows there are to record (enqueue: the bar's total). */
  toEnqueue: number;
}

export interface ImportDeps {
  ledger: Ledger;
  /** The current catalog snapshot's index; undefined with --no-catalog-check. */
  catalog: CatalogIndex | undefined;
  /** For the service's prices and the balance check; none skips both. */
  client?: ApiClient;
  log: Logger;
  /**
   * Where the campaign's order journal and paid memory are kept and the product overrides read
   * (src/stores/stores.ts: files under the data dir, or PostgreSQL): every import reads the
   * journal, so that a re-import after a lost ledger packs rows into the orders, and keys, they
   * had (docs/architecture/keys-and-exactly-once.md, "Lost ledger").
   */
  stores: Stores;
  /** Not a place: the stores say where (openStores). A raw one here would be a second choice. */
  dataDir?: never;
  /** Not a place: the stores say where (openStores). A raw one here would be a second choice. */
  database?: never;
}

/** What an import is about to record and spend, for `confirm`. */
export interface SpendPlan {
  campaign: string;
  /** New rows to record (released changed rows included). */
  rows: number;
  /** The new rows' face value and price per currency. */
  totals: Record<string, CurrencyTotal>;
  /** Who priced them: the service, or giftjobs and why (docs/architecture/import.md, "Prices"). */
  pricing?: Pricing;
  /** The campaign before this import; undefined when it is new. */
  existing?: { state: StoredState; rows: number };
  /** The campaign will be held after the import (nothing sent until approved). */
  held: boolean;
  /** With --allow-repeats: the rows that pay again what other campaigns paid. */
  repeats?: RepeatGroup[];
  /** Currencies whose new rows alone pass what is left of today's daily limit. */
  dailyLimit?: DailyLimitNote[];
}

/** `orders import --json`. */
export interface ImportResult {
  campaign: string;
  rows: number;
  valid: number;
  invalid: number;
  enqueued: number;
  already_known: number;
  orders: number;
  totals: Record<string, CurrencyTotal>;
  /**
   * Who priced `totals` (docs/architecture/import.md, "Prices"); absent when the import was
   * refused before its prices were settled (invalid rows, the campaign's checks).
   */
  priced_by?: PricedBy;
  /** Why not the service, when it did not price them. */
  pricing_note?: string;
  errors: RowError[];
  /** Errors beyond the first 100 listed. */
  more_errors: number;
  /**
   * The problems of the invalid rows, when some row has more than one (`invalid` counts rows;
   * docs/order-files.md, "Every problem of a row").
   */
  problems?: number;
  /**
   * With --from-report: the report's rows left out (not failed_final or cancelled), by status;
   * absent otherwise.
   */
  left_out?: Record<string, number>;
  error_file?: string;
  dry_run: boolean;
  /**
   * The campaign's state after the import (on a dry run: what it would be); undefined when the
   * import was refused before any state was known.
   */
  state?: StoredState;
  /** Stored budgets this import replaced (amounts at the currency's scale). */
  budgets_replaced?: { currency: string; from: string; to: string }[];
  /** Rows that repeat rows of other campaigns, one group per earlier campaign (repeats.ts). */
  repeats?: RepeatGroup[];
  /** Currencies whose new rows alone pass what is left of today's daily limit. */
  daily_limit?: DailyLimitNote[];
  /**
   * The price that passed GIFTJOBS_APPROVAL_THRESHOLD (`USD 1500.00 over 1000.00`): the
   * campaign is held, and whoever imported it cannot approve it.
   */
  four_eyes?: string;
}
