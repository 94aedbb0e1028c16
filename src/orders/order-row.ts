/** A row that passed validation: what one card needs, plus where it came from. */
export interface OrderRow {
  /** Physical file line the row starts on. */
  line: number;
  /** Trimmed, as written (case kept: it is sent as is). */
  email: string;
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
}
