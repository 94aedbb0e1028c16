import type { JobsOptions } from "bullmq";
import type { ApiClient } from "../api/client.js";
import type { ExecutionMode } from "../api/order-request.js";
import type { CatalogIndex } from "../catalog/index-entry.js";
import type { DailyLimit } from "../daily-limit.js";
import type { Ledger } from "../ledger/ledger.js";
import type { StoredState } from "../ledger/types.js";
import type { Logger } from "../log.js";
import type { Budget } from "../orders/budget.js";
import type { Distribution } from "../orders/order-row.js";
import type { CurrencyTotal } from "../orders/totals.js";
import type { Stores } from "../stores/stores.js";
import type { DailyLimitNote } from "./daily-limit-note.js";
import type { PricedBy, Pricing } from "./pricing.js";
import type { ReadOrderRowsOptions } from "./readers/csv-rows.js";
import type { RepeatGroup, RepeatsChoice } from "./repeats.js";
import type { RowError } from "./validation/row-error.js";

/** Options of `orders import`. */
export interface ImportOptions {
  /**
   * GIFTJOBS_DAILY_LIMIT: new rows that alone pass what is left of today's limit are said so
   * before the question (src/import/daily-limit-note.ts). None: no limit.
   */
  dailyLimit?: DailyLimit;
  file: string;
  campaign: string;
  /**
   * face_value uses ',' as its decimal mark. Unset: for a ';'-separated file (as spreadsheets
   * export them where ',' is the decimal mark) a ',' value is read as one, and
   * `onDecimalComma` says so; a '.' value still reads as it always did.
   */
  decimalComma?: boolean;
  /** Told once, at the first face_value read with a decimal comma, whether that was assumed. */
  onDecimalComma?: (assumed: boolean) => void;
  /** Everything but the ledger and the queue. @defaultValue false */
  dryRun?: boolean;
  /** Enqueue the valid rows; write the invalid ones to `errorFile`. @defaultValue false */
  skipInvalid?: boolean;
  /** Where invalid rows go with --skip-invalid. */
  errorFile?: string;
  /**
   * At most one per currency; a budget without a currency only alone, for a file of one
   * currency. Stored on the campaign (`budget:CUR`), replacing its budget in that currency;
   * with none, the campaign's stored budgets apply. Checked against what the campaign has
   * recorded plus the new rows, in pass 1 and again atomically as each batch is recorded.
   */
  budgets?: readonly Budget[];
  /** @defaultValue "async" */
  executionMode?: ExecutionMode;
  /** @defaultValue 1 */
  itemsPerOrder?: number;
  defaultTemplateId?: string;
  /**
   * How rows without a distribution cell are sent (`--distribution`): by e-mail, as a link the
   * operator hands out, or to a known recipient. @defaultValue "email"
   */
  distribution?: Distribution;
  map?: Record<string, string>;
  /** `strictColumns`, `headerRow`, `onHeader` and `onTotalsRow` of the file readers. */
  header?: Pick<ReadOrderRowsOptions, "strictColumns" | "onHeader" | "headerRow" | "onTotalsRow">;
  delimiter?: string;
  /** The sheet of an .xlsx workbook. @defaultValue its first sheet */
  sheet?: string;
  /**
   * The most an .xlsx workbook's entries may unpack to, together (`--max-unzipped-mb`); given,
   * their ratio to their packed size is not checked. @defaultValue 200 MB, and that ratio
   * (docs/architecture/import.md, "Spreadsheets")
   */
  maxUnzippedBytes?: number;
  /**
   * Payment currency: checked against each row's products; the currency when there is no
   * catalog check, and of template rows without a currency cell.
   */
  currency?: string;
  /**
   * `--allow-example`: import the template's example row (recipient@example.com) like any
   * other; without it a file holding it is refused (docs/order-files.md, "Files that are
   * refused"). @defaultValue false
   */
  allowExample?: boolean;
  /**
   * `--from-report`: the file is a giftjobs report; its failed_final and cancelled rows are
   * imported as new orders (their order columns only), the others left out and counted. Without
   * it a report is refused. @defaultValue false
   */
  fromReport?: boolean;
  /** Refuse a campaign over the account balance where the service tells it. @defaultValue true */
  balanceCheck?: boolean;
  /**
   * Attempts and backoff of the order jobs, recorded on a new campaign for the dispatcher.
   * @defaultValue ORDER_JOB_OPTIONS
   */
  jobOptions?: Pick<JobsOptions, "attempts" | "backoff">;
  /**
   * Record the campaign as held: nothing is sent until `orders approve`. A running or paused
   * campaign that gets new rows becomes held. @defaultValue false
   */
  hold?: boolean;
  /**
   * Allow new rows into a campaign that exists; without it such an import is refused. Rows
   * already known (a re-run) and changed rows released from a final failure need no append.
   * @defaultValue false
   */
  append?: boolean;
  /**
   * Asked after pass 1 (every check passed) and before anything is recorded, when there are new
   * rows to record (not on a dry run). False: nothing is recorded, ImportDeclined is thrown.
   */
  confirm?: (plan: SpendPlan) => Promise<boolean>;
  /**
   * Told what is about to be recorded, after `confirm` and before the campaign or any row is:
   * the audit entry is written here, so no row a worker can send is without its entry
   * (docs/architecture/audit.md, "An entry before its effect"). An error stops the import with
   * nothing recorded. Not called on a dry run, nor when an earlier check refused.
   */
  beforeRecording?: (planned: ImportResult) => Promise<void>;
  /**
   * Rows whose fingerprint matches a row another campaign recorded and did not end with nothing
   * made (docs/architecture/repeats.md): refused (the import records nothing), skipped (the
   * other rows are recorded), or allowed (recorded, and the campaign says it repeats them).
   * @defaultValue "refuse"
   */
  repeats?: RepeatsChoice;
  /**
   * Who runs the import (src/audit/actor.ts): recorded on the campaign while it is held, so the
   * four-eyes rule can refuse their own approval. @defaultValue the current actor's name
   */
  actor?: string;
  /**
   * GIFTJOBS_APPROVAL_THRESHOLD: a campaign whose planned price passes it in a currency is held
   * (docs/architecture/audit.md, "Four eyes").
   */
  approvalThreshold?: Readonly<Record<string, string>>;
  /** How far back the paid memory is looked at, in days. @defaultValue 90 */
  repeatWindowDays?: number;
  /** Called as rows are read and enqueued. */
  onProgress?: (progress: ImportProgress) => void;
}

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
