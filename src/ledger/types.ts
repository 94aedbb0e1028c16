import type { ExecutionMode } from "../api/order-request.js";
import type { RowStatus } from "./row-status.js";

/**
 * What the ledger keeps of a row: enough to build its order's body and its report line, never
 * the API key. Stored as a compact array (ledger-codec.ts).
 */
export interface LedgerRow {
  line: number;
  /** The number of the row's current order in its campaign (changes only with the generation). */
  order: number;
  generation: number;
  /** The start of the hash of what is sent for the row (see PAYLOAD_HASH_CHARS). */
  payload_hash: string;
  email: string;
  product_code: string;
  face_value: string;
  currency: string;
  reference?: string;
  /** The e-mail template sent with the row's item, when one was given. */
  template_id?: string;
}

/**
 * What the ledger keeps of an order, under its number in the campaign; its status is the status
 * of all its rows. Its body is built from it and its rows (see requestFromLedger).
 */
export interface LedgerOrder {
  /** The X-Idempotency-Key it is sent under (see orderKey). */
  key: string;
  /** Its rows, in the order of the body's items. */
  identities: string[];
  generation: number;
  status: RowStatus | "superseded";
  /** Execution mode the order was imported with; kept by later generations. */
  mode?: ExecutionMode;
  /** Payment currency, and the price in its minor units (a string: exact), for the spend. */
  currency?: string;
  price?: string;
  /** Face value in minor units (a string). */
  face?: string;
  /** The body's description and metadata, when it has them (see buildOrderRequest). */
  description?: string;
  metadata?: Record<string, string>;
  /** Not created before this time (ms since 1970): its rows' send_at. */
  send_at?: number;
  order_id?: string;
  /** Item ids, in the order of `identities`. */
  item_ids?: string[];
  payout_status?: string;
  /** Redemption links, in the order of `identities`; only kept with --store-payout-urls. */
  payout_urls?: string[];
  error_type?: string | null;
  error_message?: string | null;
  /**
   * Set when an attempt under this order's key ended unclear (timeout, dropped connection, 5xx,
   * in progress, a worker that died mid-attempt): the error type of the first such attempt. An
   * order may then exist under the key, so the key stays the rows' key until the service answers
   * under it (docs/architecture.md, "One key while an order may exist"). Only the ledger's scripts
   * remove it, and only for such an answer or an operator's --force.
   */
  unclear?: string | null;
  /** Fingerprint of the API key the unclear attempt was made with (see apiKeyFingerprint). */
  unclear_api_key?: string | null;
  /** Fingerprint of the API key of the attempt under way (while in_flight only). */
  attempt_api_key?: string | null;
  attempts?: number;
  /** Status checks of an async order so far (drives the delay between them). */
  polls?: number;
  updated_at?: string;
  /** The number of the order this one took rows from (next generation). */
  replaces?: number;
  superseded_by?: number;
  /** The service answered with an order made before this campaign was imported. */
  replayed?: boolean;
}
