/** A row that passed validation: what one card needs, plus where it came from. */
export interface OrderRow {
  /** Physical file line the row starts on. */
  line: number;
  /** Trimmed, as written (case kept: it is sent as is); "" on a link row, which sends none. */
  email: string;
  /** The one product (SINGLE); "" when the row offers a choice (product_codes or a template). */
  product_code: string;
  /** A plain positive decimal as written ("10.50"); decimals are checked at preflight. */
  face_value: string;
  /** The row's template, else the default; undefined lets the service use the account's. */
  template_id?: string;
  /**
   * Where template_id came from. The identity of a row without reference hashes only what the
   * file says, so a changed default template never turns an old row into a new card.
   */
  template_source: "row" | "default" | "none";
  description?: string;
  reference?: string;
  /** When its order may be created (ms since 1970; see parseSendAt); absent: at once. */
  send_at?: number;
  /** Non-empty `metadata.<key>` cells, key -> value. */
  metadata: Record<string, string>;
  /**
   * How the link reaches its recipient when not by e-mail: `link` (no e-mail: the operator hands
   * the link out), `recipient` (a known recipient, by e-mail). Absent: by e-mail, as every row
   * before it existed; an absent field leaves a row's identity and body as they were.
   */
  distribution?: "link" | "recipient";
  /** A recipient row's reference at the service (its repeat payouts go to the same person). */
  recipient_reference?: string;
  /** MULTIPLE: two or more codes of one currency the recipient chooses from, as written. */
  product_codes?: string[];
  /** TEMPLATE: a payout selection template of the service, whose products it keeps. */
  selection_template_id?: string;
  /**
   * The row's `currency` cell in upper case, checked against its products at preflight. On a
   * template row, else `--currency`: its payment currency (the snapshot does not know a
   * template's products). Only a template row's currency is part of its identity.
   */
  currency?: string;
  /** Where a template row's currency came from (as template_source, for its identity). */
  currency_source?: "row" | "default";
}

/** The distribution of a row as its column spells it; absent means email. */
export const DISTRIBUTIONS = ["email", "link", "recipient"] as const;
export type Distribution = (typeof DISTRIBUTIONS)[number];

/** What a report or a message shows for a row's product: the code, the codes, or the template. */
export function productLabel(row: {
  product_code: string;
  product_codes?: string[];
  selection_template_id?: string;
}): string {
  if (row.product_codes) return row.product_codes.join("|");
  if (row.selection_template_id) return `template ${row.selection_template_id}`;
  return row.product_code;
}
