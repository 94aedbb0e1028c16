import type { ExecutionMode } from "../api/order-request.js";
import type { LimitReached } from "./daily-limit.js";
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
  /** Not by e-mail: `link` (email is ""), `recipient` (see OrderRow). Absent: by e-mail. */
  distribution?: "link" | "recipient";
  recipient_reference?: string;
  /** MULTIPLE: the codes offered, in the order sent (product_code is then ""). */
  product_codes?: string[];
  /** TEMPLATE: the payout selection template (product_code is then ""). */
  selection_template_id?: string;
  /**
   * Recorded with --allow-repeats: the rows of other campaigns this row pays again
   * (docs/architecture/repeats.md, "The check"); absent on a row that repeats none.
   */
  repeat_of?: RepeatOf;
}

/** The earlier rows a row repeats: the latest few, and how many more there were. */
export interface RepeatOf {
  /** Oldest first: each row's campaign, and its line there (its `line` in that report). */
  rows: { campaign: string; line: number }[];
  /** Earlier rows it repeats beyond `rows`; absent when none. */
  more?: number;
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
  /** The body's description and metadata, when it has them (see orderOwnParts). */
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
  /** Their expiry dates as the service gave them ("" for none), kept with the links. */
  payout_expiries?: string[];
  error_type?: string | null;
  error_message?: string | null;
  /**
   * Set when an attempt under this order's key ended unclear (timeout, dropped connection, 5xx,
   * in progress, a worker that died mid-attempt): the error type of the first such attempt. An
   * order may then exist under the key, so the key stays the rows' key until the service answers
   * under it (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist"). Only
   * the ledger's scripts remove it, and only for such an answer or an operator's clearance (retry --include-uncertain, --any-api-key).
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
  /**
   * A failed_uncertain order `orders reconcile` found no order for on the service: when the
   * listing that showed none began, and the fingerprint of the API key it listed with. Gone when
   * the order leaves failed_uncertain. With it, under the API key of the unclear attempt,
   * `orders retry --new-key` may move the order on without --include-uncertain (the clearance `absent`: see
   * docs/architecture/keys-and-exactly-once.md, "Reconciling with the service").
   */
  reconciled_absent_at?: string;
  reconciled_api_key?: string;
  /**
   * The payout link of each row, in the order of `identities`, as `orders payouts` last read it:
   * `STATUS|expiry` (expiry in whole seconds since 1970, empty when the link does not expire).
   */
  payouts?: string[];
  /** When `payouts` was read (ISO). */
  payouts_at?: string;
}

/** The states a campaign is stored in; `done` is derived (see campaign-state.ts). */
const STORED_STATES = ["held", "running", "paused", "cancelled", "archived"] as const;
export type StoredState = (typeof STORED_STATES)[number];

export interface CampaignMeta {
  execution_mode?: "async" | "sync";
  items_per_order?: string;
  created_at?: string;
  /** Absent on a campaign recorded before states existed: running. */
  state?: StoredState;
  approved_at?: string;
  paused_reason?: string;
  paused_at?: string;
  cancelled_at?: string;
  finished_at?: string;
  /**
   * "1": the campaign's orders carry giftjobs_campaign and giftjobs_key metadata (see
   * src/orders/order-tags.ts); absent on a campaign created before they existed.
   */
  order_tags?: string;
  archived_at?: string;
  /**
   * Set by a worker whose orders of the campaign cannot reach the service:
   * `service_unreachable: URL: ERROR` (src/campaigns/stall.ts), and since when (ISO); removed
   * once an order of it gets an answer.
   */
  stalled_reason?: string;
  stalled_at?: string;
  /** An archived campaign's archive folder (see campaign-archive.ts). */
  archive_path?: string;
  /**
   * JSON `{"gifts": 12}`: rows imported with --allow-repeats that pay again what those campaigns
   * paid (docs/architecture/repeats.md).
   */
  repeats?: string;
  /** JSON: attempts and backoff of the campaign's order jobs. */
  job_options?: string;
  /**
   * `spent:CUR`: price of completed orders; `uncertain:CUR`: of failed_uncertain ones (an order
   * may exist); `planned_rows:CUR`, `planned_face:CUR`,
   * `planned_price:CUR`: what was recorded; `budget:CUR`: the most the planned price may reach
   * (RECORD refuses more; START pauses the campaign when it is over). Money in minor units, as
   * strings.
   */
  [
    money: `${"spent" | "uncertain" | "planned_rows" | "planned_face" | "planned_price" | "budget"}:${string}`
  ]: string | undefined;
}

/** Rows per status; `scheduled`: queued rows whose send_at is still ahead. */
export type CampaignCounts = Record<RowStatus, number> & {
  total: number;
  replayed: number;
  scheduled: number;
};

/** A change of an order's fields; null removes one (an error cleared by a retry, say). */
export type OrderPatch = { [F in keyof LedgerOrder]?: LedgerOrder[F] | null };

/** An order to record, with its rows (each row's order number is given by the ledger). */
export interface NewOrder {
  order: LedgerOrder;
  rows: [identity: string, row: Omit<LedgerRow, "order">][];
}

/** What endReported found: the order moved, or why not (see TRANSITION). */
export type ReportedEnd =
  /** `replayed`: the script marked it so (made before the campaign was imported). */
  | { kind: "moved"; status: RowStatus; replayed: boolean }
  /** Past `submitted` already (a poll and a webhook raced): ended once, by the other. */
  | { kind: "past"; status: string }
  /** The ledger holds another order id for it (`heldId`): not this order's end. */
  | { kind: "mismatch"; status: string; heldId: string | undefined }
  /** Queued or in flight: its order id is not recorded yet (a webhook that beat the worker). */
  | { kind: "not-yet"; status: string }
  /** Unknown or superseded. */
  | { kind: "gone" };

/**
 * What the service's answer says of an order's key (docs/architecture/keys-and-exactly-once.md,
 * "One key while an order may exist"): `answered` when it answered under the key (the mark of an
 * unclear attempt goes), `force` when the operator checked and sends it under another API key
 * anyway, `absent` when `orders reconcile` found no order under the key (REKEY only, and only
 * for an order it recorded absent under the API key of the unclear attempt).
 */
export type KeyClearance = "answered" | "force" | "absent";

/** What a transition does to the order's entry in the follow set (see OrderFollower). */
export type FollowChange = { at: number } | "unfollow" | "pending";

/** A followed order taken by a follower: where it is, and the ledger's record of it. */
export interface FollowedOrder {
  campaign: string;
  /** The order's number in its campaign. */
  number: number;
  order: LedgerOrder | undefined;
}

/**
 * What starting an attempt found: paused (`budget` when this start paused it: its currency's
 * planned price is over the budget), started (with the order and its rows), or past it.
 */
export type StartResult =
  | { kind: "paused"; reason: string; budget?: true }
  | {
      kind: "started";
      order: LedgerOrder;
      /** The order's rows, in its order (undefined where one is missing). */
      rows: (LedgerRow | undefined)[];
      /** When the campaign was first imported (ISO), to tell a replayed order. */
      campaignCreatedAt: string | undefined;
    }
  | { kind: "past"; status: string | null }
  /** Not sent: an earlier attempt ended unclear under another API key (`mark`: its error type). */
  | { kind: "other-api-key"; mark: string }
  /** Not sent: the day's spend in its currency would pass the daily limit (see START). */
  | { kind: "daily-limit"; reason: string; reached: LimitReached };
