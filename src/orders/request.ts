import type {
  DistributionMethod,
  OrderRequest,
  OrderRequestItem,
  ProductChoice,
} from "../api/order-request.js";
import { UserError } from "../errors/user-error.js";
import type { LedgerOrder, LedgerRow } from "../ledger/types.js";
import { sendsExactly } from "../money.js";
import { LIMITS } from "./limits.js";
import type { OrderRow } from "./order-row.js";
import { orderTags, roomForTags, TAG_KEY } from "./order-tags.js";
import { MAX_ITEMS_PER_ORDER } from "./packing.js";

export interface CampaignInfo {
  name: string;
  /** Description of orders holding several rows. @defaultValue `giftjobs campaign NAME` */
  description?: string;
  /**
   * The order's key, when the campaign's orders carry the tags naming campaign and key
   * (src/orders/order-tags.ts; decided per campaign, see campaignTagsOrders).
   */
  tagKey?: string;
}

/**
 * The service wants a JSON number. A plain decimal of a few digits converts exactly (JSON
 * prints the shortest form, which is the canonical decimal); anything that would not come
 * back the same, such as a 20-digit amount, is refused rather than sent rounded.
 */
function faceValueNumber(faceValue: string): number {
  if (!sendsExactly(faceValue))
    throw new RangeError(`face_value ${faceValue} cannot be sent exactly as a JSON number`);
  return Number(faceValue);
}

/** What an item is made of: the row's fields the service gets. */
type ItemSource = Pick<
  OrderRow,
  | "email"
  | "face_value"
  | "product_code"
  | "template_id"
  | "distribution"
  | "recipient_reference"
  | "product_codes"
  | "selection_template_id"
>;

/**
 * The item's distribution_method (OpenAPI EmailDistribution, LinkDistribution,
 * RecipientDistribution). An e-mail row's is built as it always was, key for key: its body, and
 * so the replay of its key, must not change.
 */
function distributionOf(row: ItemSource): DistributionMethod {
  let distribution: DistributionMethod;
  if (row.distribution === "link") distribution = { type: "PAYOUT_LINK" };
  else if (row.distribution === "recipient") {
    if (row.recipient_reference === undefined)
      throw new Error("a recipient row without recipient_reference");
    distribution = {
      type: "RECIPIENT",
      recipient_reference: row.recipient_reference,
      email_address: row.email,
    };
  } else distribution = { type: "EMAIL", email_address: row.email };
  if (row.template_id !== undefined) distribution.template_id = row.template_id;
  return distribution;
}

/**
 * The item's products: one code, the recipient's choice of codes, or a selection template. Also
 * what an import asks the service to price (src/import/card-prices.ts).
 */
export function productsOf(row: ItemSource): ProductChoice {
  if (row.product_codes !== undefined) return { type: "MULTIPLE", values: [...row.product_codes] };
  if (row.selection_template_id !== undefined)
    return { type: "TEMPLATE", template_id: row.selection_template_id };
  return { type: "SINGLE", value: row.product_code };
}

/**
 * A row's item in its order's body.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function itemOf(row: ItemSource): OrderRequestItem {
  return {
    face_value: faceValueNumber(row.face_value),
    distribution_method: distributionOf(row),
    products: productsOf(row),
  };
}

/**
 * Keys sorted: the service replays a key only for the same body, so the body must not depend
 * on the column order of the file the row came from this time.
 */
function sortedRecord(record: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of sortedKeys(record)) out[key] = record[key]!;
  return out;
}

/**
 * A record's keys in the order Array.prototype.sort gives them (by UTF-16 code units), sorted
 * in place by insertion when there are few: an import sorts an order's metadata (its two tags at
 * least), and for so few keys sort's set-up was most of its cost, and most of what the import
 * allocated in sorting (173 MB of 3.1 GB for 200,000 rows, in an allocation profile).
 */
function sortedKeys(record: Record<string, string>): string[] {
  const keys = Object.keys(record);
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > key; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = key;
  }
  return keys;
}

function truncate(text: string, max: number): string {
  return [...text].slice(0, max).join("");
}

/**
 * An order's own description and metadata, beside its rows' items (`itemOf`) in its body. The
 * service has description and metadata on the order only, not per item: a one-row order carries
 * the row's own; an order of several rows cannot carry theirs, so it gets the campaign's
 * description and `{campaign: NAME}` (the rows' own stay in the ledger and the report). The
 * ledger keeps them with the order: requestFromLedger sends them with the rows' items.
 */
export function orderOwnParts(
  rows: readonly OrderRow[],
  campaign: CampaignInfo,
): Pick<OrderRequest, "description" | "metadata"> {
  if (rows.length < 1 || rows.length > MAX_ITEMS_PER_ORDER) {
    throw new RangeError(`an order holds 1 to ${MAX_ITEMS_PER_ORDER} rows (got ${rows.length})`);
  }
  const tags = campaign.tagKey === undefined ? {} : orderTags(campaign.name, campaign.tagKey);
  const [only] = rows;
  if (rows.length === 1 && only) {
    const parts: Pick<OrderRequest, "description" | "metadata"> = {};
    if (only.description !== undefined) parts.description = only.description;
    const metadata = roomForTags(only.metadata) ? { ...only.metadata, ...tags } : only.metadata;
    if (Object.keys(metadata).length > 0) parts.metadata = sortedRecord(metadata);
    return parts;
  }
  if ([...campaign.name].length > LIMITS.metadataValueChars) {
    throw new UserError(
      `campaign name is longer than ${LIMITS.metadataValueChars} characters; it goes into order metadata`,
    );
  }
  return {
    description: truncate(
      campaign.description ?? `giftjobs campaign ${campaign.name}`,
      LIMITS.descriptionChars,
    ),
    metadata: sortedRecord({ campaign: campaign.name, ...tags }),
  };
}

/**
 * The body of an order recorded in the ledger, from its record and its rows (in the order's
 * identity order): its rows' items and its own parts (orderOwnParts) as the import made them,
 * since the rows keep what the items are made of and the order its description and metadata.
 * Every attempt under the order's key sends this same body.
 */
export function requestFromLedger(
  order: LedgerOrder,
  rows: readonly (LedgerRow | undefined)[],
): OrderRequest {
  if (!order.currency) throw new Error(`order ${order.key} has no currency recorded`);
  const items = rows.map((row, i) => {
    if (!row) throw new Error(`order ${order.key}: row ${order.identities[i]} is missing`);
    return itemOf(row);
  });
  const body: OrderRequest = {
    payment_method: { type: "ACCOUNT_BALANCE", currency: order.currency },
    items,
  };
  if (order.description !== undefined) body.description = order.description;
  if (order.metadata !== undefined) {
    // A tagged order (all made since tags exist) is sent with its metadata sorted: the ledger's
    // scripts re-encode the order, and Lua does not keep the order of an object's names.
    // An untagged one as it always was.
    body.metadata = TAG_KEY in order.metadata ? sortedRecord(order.metadata) : order.metadata;
  }
  return body;
}
