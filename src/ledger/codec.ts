import type { ExecutionMode } from "../api/order-request.js";
import { orderTags, TAG_CAMPAIGN, TAG_KEY } from "./order-tags.js";
import type { LedgerOrder, LedgerRow, RepeatOf } from "./types.js";

/**
 * How rows and orders are written in Redis (docs/architecture/ledger.md, "Redis keys" and "What
 * a row costs"). Both are compact: a campaign holds one of each per row, and Redis keeps them
 * until the campaign is archived. A row is a JSON array in a fixed order; an order a JSON object
 * with one-letter names, which the Lua scripts read and change (scripts.ts uses the same names).
 * What an order's record can be told from is not written (see encodeOrder); every way an order
 * was written before is still read.
 */

/** Stored name of each order field. The scripts use these: change both together. */
const STORED_ORDER_FIELDS = {
  key: "k",
  identities: "i",
  generation: "g",
  status: "s",
  mode: "m",
  currency: "c",
  face: "f",
  price: "p",
  description: "d",
  metadata: "md",
  send_at: "sa",
  order_id: "o",
  item_ids: "ii",
  payout_status: "ps",
  payout_urls: "pu",
  payout_expiries: "px",
  error_type: "et",
  error_message: "em",
  unclear: "uc",
  unclear_api_key: "uk",
  attempt_api_key: "ak",
  attempts: "a",
  polls: "pl",
  updated_at: "u",
  replaces: "rp",
  superseded_by: "sb",
  replayed: "rd",
  reconciled_absent_at: "ra",
  reconciled_api_key: "rk",
  payouts: "po",
  payouts_at: "pa",
} as const satisfies Record<keyof LedgerOrder, string>;

type StoredName = (typeof STORED_ORDER_FIELDS)[keyof typeof STORED_ORDER_FIELDS];

/**
 * `"t":1`: the order's body carries the tags naming its campaign and key
 * (src/ledger/order-tags.ts), which are not written: they are made again from the campaign and
 * `k` when the order is read, and `md` holds only the rest of its metadata. An order written
 * before `t` existed holds its tags in `md`.
 */
const STORED_TAGGED = "t";

// Two fields under one stored name would read each other's values: refused when loaded.
if (
  new Set([...Object.values(STORED_ORDER_FIELDS), STORED_TAGGED]).size !==
  Object.keys(STORED_ORDER_FIELDS).length + 1
)
  throw new Error("two order fields share a stored name (src/ledger/codec.ts)");

const LONG_NAMES = new Map<string, keyof LedgerOrder>(
  Object.entries(STORED_ORDER_FIELDS).map(([long, short]) => [short, long as keyof LedgerOrder]),
);

/**
 * The characters of the payload hash a row keeps: 72 bits, so a changed row passes for the same
 * once in 2^72. Rows written before kept 16 (96 bits), and are compared on all of them.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export const PAYLOAD_HASH_CHARS = 12;

/** Whether a row's stored payload hash is the start of this full one (the same row content). */
export function samePayload(stored: string, full: string): boolean {
  return stored.length >= PAYLOAD_HASH_CHARS && full.startsWith(stored);
}

/**
 * What an order is read and written with, beside its record: the campaign it is of (the tags
 * name it), and the campaign's execution mode (meta `execution_mode`), when known: an order of
 * that mode does not repeat it.
 */
export interface OrderContext {
  campaign: string;
  mode?: ExecutionMode | undefined;
}

/**
 * Fields to store, by stored name. `null` stays `null`: in a patch it removes the field (the
 * scripts drop it); `undefined` is left out.
 */
export function encodeOrderFields(fields: Partial<LedgerOrder>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const stored = STORED_ORDER_FIELDS[name as keyof LedgerOrder] as StoredName | undefined;
    if (!stored) throw new Error(`not an order field: ${name}`);
    out[stored] = value;
  }
  return out;
}

/** Whether `metadata` holds the tags of an order of `campaign` under `key`, and what else. */
function splitTags(
  metadata: Record<string, string>,
  campaign: string,
  key: string,
): Record<string, string> | undefined {
  if (metadata[TAG_CAMPAIGN] !== campaign || metadata[TAG_KEY] !== key) return undefined;
  const { [TAG_CAMPAIGN]: _campaign, [TAG_KEY]: _key, ...own } = metadata;
  return own;
}

/**
 * An order as stored, without what it can be told from when read (decodeOrder makes it again):
 * its tags (`t` instead), generation 0, its campaign's execution mode, and its face value (an
 * input of RECORD's `planned_face:CUR`, read by nothing after).
 */
export function encodeOrder(order: LedgerOrder, context: OrderContext): string {
  const own = order.metadata && splitTags(order.metadata, context.campaign, order.key);
  // One pass over the order's own fields, in their order: no copy, no `delete` (which turns an
  // object slow); an import encodes one order a row (docs/benchmarks.md).
  const stored: Record<string, unknown> = {};
  for (const name in order) {
    const value = order[name as keyof LedgerOrder];
    if (value === undefined || name === "face") continue;
    if (name === "generation" && value === 0) continue;
    if (name === "mode" && context.mode !== undefined && value === context.mode) continue;
    if (name === "metadata" && own) {
      if (Object.keys(own).length > 0) stored.md = own;
      continue;
    }
    const short = STORED_ORDER_FIELDS[name as keyof LedgerOrder] as StoredName | undefined;
    if (!short) throw new Error(`not an order field: ${name}`);
    stored[short] = value;
  }
  if (own) stored[STORED_TAGGED] = 1;
  return JSON.stringify(stored);
}

const FORMAT_1_ORDER =
  "an order recorded by an earlier giftjobs (ledger format 1): finish or archive its campaign with that version";
const FORMAT_1_ROW =
  "a row recorded by an earlier giftjobs (ledger format 1): finish or archive its campaign with that version";

export function decodeOrder(text: string, context: OrderContext): LedgerOrder {
  const stored = JSON.parse(text) as Record<string, unknown>;
  if (!("k" in stored)) throw new Error(FORMAT_1_ORDER);
  const order: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(stored)) {
    const long = LONG_NAMES.get(name);
    if (long) order[long] = value;
  }
  order.generation ??= 0;
  if (context.mode !== undefined) order.mode ??= context.mode;
  if (stored[STORED_TAGGED] === 1)
    order.metadata = {
      ...(order.metadata as Record<string, string> | undefined),
      ...orderTags(context.campaign, stored.k as string),
    };
  return order as unknown as LedgerOrder;
}

/**
 * What a row holds beyond an e-mail row of one product that repeats no other campaign's, under
 * short names (`d` distribution, `r` recipient reference, `m` product codes, `t` selection
 * template, `p` the earlier rows it repeats as `[[campaign, line], ...]` and `pm` how many more),
 * or undefined: such a row is stored as it always was, without the cell.
 */
function rowExtras(row: Omit<LedgerRow, "line" | "order">): Record<string, unknown> | undefined {
  const extras: Record<string, unknown> = {};
  if (row.distribution !== undefined) extras.d = row.distribution;
  if (row.recipient_reference !== undefined) extras.r = row.recipient_reference;
  if (row.product_codes !== undefined) extras.m = row.product_codes;
  if (row.selection_template_id !== undefined) extras.t = row.selection_template_id;
  if (row.repeat_of !== undefined) {
    extras.p = row.repeat_of.rows.map((r) => [r.campaign, r.line]);
    if (row.repeat_of.more) extras.pm = row.repeat_of.more;
  }
  return Object.keys(extras).length > 0 ? extras : undefined;
}

/**
 * A row without its order number and line: what follows them in the stored array. The scripts
 * put `[line,order` in front when they record the row (the number is theirs to give). The
 * template cell is null when a row has extras and no template.
 */
export function rowTail(row: Omit<LedgerRow, "line" | "order">): string {
  const cells: (string | number | null | Record<string, unknown>)[] = [
    row.generation,
    row.payload_hash.slice(0, PAYLOAD_HASH_CHARS),
    row.email,
    row.product_code,
    row.face_value,
    row.currency,
    row.reference ?? "",
  ];
  const extras = rowExtras(row);
  if (row.template_id !== undefined || extras !== undefined) cells.push(row.template_id ?? null);
  if (extras !== undefined) cells.push(extras);
  return `,${JSON.stringify(cells).slice(1)}`;
}

/** Sets on `row` the fields of its extras cell (see rowExtras). */
function readExtras(row: LedgerRow, extras: unknown): void {
  if (extras === null || typeof extras !== "object") return;
  const { d, r, m, t, p, pm } = extras as Record<string, unknown>;
  if (d === "link" || d === "recipient") row.distribution = d;
  if (typeof r === "string") row.recipient_reference = r;
  if (Array.isArray(m)) row.product_codes = m.map(String);
  if (typeof t === "string") row.selection_template_id = t;
  if (Array.isArray(p)) row.repeat_of = readRepeatOf(p, pm);
}

/** The `p` and `pm` of a row's extras cell (see rowExtras). */
function readRepeatOf(p: unknown[], pm: unknown): RepeatOf {
  const rows = p.flatMap((entry) =>
    Array.isArray(entry) ? [{ campaign: String(entry[0]), line: Number(entry[1]) }] : [],
  );
  return typeof pm === "number" && pm > 0 ? { rows, more: pm } : { rows };
}

export function encodeRow(row: LedgerRow): string {
  return `[${row.line},${row.order}${rowTail(row)}`;
}

/**
 * An order's status alone, without the rest of it decoded (decodeOrder). The repeats check asks
 * it of every earlier row a repeat pays again, and parsing each order whole was 1.5 s of a
 * million-row repeat's first pass. Read from the text where that is sure: an order with no `{`
 * but its first has no object inside (metadata, payouts), so every `"x":` in it is one of its
 * own keys (a `"` inside a JSON string is written `\"`), each once, and a status is a word.
 * Anything else is parsed.
 */
export function orderStatus(text: string): string {
  if (text.indexOf("{", 1) === -1 && text.includes('"k":')) {
    const at = text.indexOf('"s":"');
    const end = at === -1 ? -1 : text.indexOf('"', at + 5);
    if (end !== -1) return text.slice(at + 5, end);
  }
  const stored = JSON.parse(text) as Record<string, unknown>;
  if (!("k" in stored)) throw new Error(FORMAT_1_ORDER);
  return stored.s as string;
}

/**
 * The number of a row's order alone, without the rest of it decoded (decodeRow): its second
 * cell, which encodeRow and RECORD write as the digits between `[line,` and the next comma. The
 * repeats check asks it of every earlier row a repeat pays again.
 */
export function rowOrder(text: string): number {
  if (!text.startsWith("[")) throw new Error(FORMAT_1_ROW);
  const first = text.indexOf(",");
  const second = text.indexOf(",", first + 1);
  const order = first < 0 || second < 0 ? Number.NaN : Number(text.slice(first + 1, second));
  if (Number.isInteger(order)) return order;
  return (JSON.parse(text) as unknown[])[1] as number;
}

export function decodeRow(text: string): LedgerRow {
  const cells = JSON.parse(text) as unknown;
  if (!Array.isArray(cells)) throw new Error(FORMAT_1_ROW);
  const [line, order, generation, hash, email, product, face, currency, reference, template] =
    cells as [number, number, number, string, string, string, string, string, string, unknown];
  const row: LedgerRow = {
    line,
    order,
    generation,
    payload_hash: hash,
    email,
    product_code: product,
    face_value: face,
    currency,
  };
  if (reference) row.reference = reference;
  if (typeof template === "string") row.template_id = template;
  readExtras(row, cells[10]);
  return row;
}

/** The item id of a row of this order (ids are kept in the order's identity order). */
export function itemIdOf(order: LedgerOrder, identity: string): string | undefined {
  if (!order.item_ids) return undefined;
  const index = order.identities.indexOf(identity);
  return index < 0 ? undefined : order.item_ids[index];
}
