import { currencyDecimals, discountedPriceUnits, fromUnits, toUnits } from "../money.js";
import { ApiError } from "./api-error.js";
import type { Catalog, Orderable } from "./catalog.js";
import { checkChoiceItem, SelectionTemplates } from "./choice-items.js";
import { itemId, orderId } from "./ids.js";
import type { Order, OrderItem, Product } from "./types.js";
import type { NewOrder, NewOrderItem } from "./validate-order.js";

/** Balance of every currency without a --balance: large enough never to run out by accident. */
const DEFAULT_BALANCE = "1000000000";

/** The template of the account, used when an item names none. */
const DEFAULT_TEMPLATE_ID = "TPL-DEFAULT";

export interface StoredOrder {
  order: Order;
  idempotencyKey: string;
  /** The API key the order was made with (idempotency keys are scoped to it). */
  apiKey?: string;
  /** Epoch ms at which an async order turns COMPLETED (or FAILED). */
  completesAt: number;
  /** An async order that ends FAILED (fault async_fail_rate); its price is refunded then. */
  fails?: boolean;
}

/** What GET /v2/order/{id} shows of an order still being processed. */
export interface ProcessingView {
  id: string;
  status: "PROCESSING";
  message: string;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function addMonths(ms: number, months: number): number {
  const date = new Date(ms);
  date.setUTCMonth(date.getUTCMonth() + months);
  return date.getTime();
}

/** Face value as units of the currency; a number with more decimals than the currency has is refused. */
function faceUnits(face: number, currency: string, index: number): bigint {
  const scale = currencyDecimals(currency);
  try {
    // toFixed(10) avoids exponent notation; the trailing zeros are dropped by toUnits' check.
    return toUnits(face.toFixed(10).replace(/\.?0+$/, ""), scale);
  } catch {
    throw new ApiError(
      "product_validation_error",
      `items[${index}]: face value ${face} has more than ${scale} decimals for ${currency}`,
    );
  }
}

/**
 * Checks one item against the catalog; returns its face value in units. Orders and estimates
 * (estimate-route.ts) both check their items here, so both refuse the same items.
 */
export function checkItem(
  catalog: Catalog,
  item: { face_value: number; products: { type: "SINGLE"; value: string } },
  index: number,
  currency: string,
): { found: Orderable; face: bigint } {
  const code = item.products.value;
  const found = catalog.resolve(code);
  const fail = (why: string) => new ApiError("product_validation_error", `items[${index}]: ${why}`);
  if (!found) throw fail(`product ${code} does not exist`);
  const { product, plan } = found;
  if (product.state !== "LIVE" && product.state !== "TEMPORARILY_DEGRADED") {
    throw fail(`product ${code} is ${product.state}`);
  }
  if (!product.is_orderable) throw fail(`product ${code} is not orderable`);
  if (product.subscription && !plan) {
    throw fail(`product ${code} is a subscription: order one of its subscription_plan_code`);
  }
  if (product.currency !== currency) {
    throw new ApiError(
      "currency_mismatch",
      `items[${index}]: product ${code} is in ${product.currency}, payment is in ${currency}`,
    );
  }
  const face = faceUnits(item.face_value, currency, index);
  const scale = currencyDecimals(currency);
  const units = (text: string) => toUnits(text, scale);
  if (plan) {
    if (face !== units(plan.price)) throw fail(`face value must be the plan price ${plan.price}`);
    return { found, face };
  }
  const denominations = product.gift_card?.denominations ?? product.payment?.denominations;
  if (denominations) {
    const list = product.gift_card?.denominations.available_list ?? null;
    if (list) {
      if (!list.some((value) => units(value) === face)) {
        throw fail(`face value must be one of ${list.join(", ")}`);
      }
    } else if (
      face < units(denominations.minimum_value) ||
      face > units(denominations.maximum_value)
    ) {
      throw fail(
        `face value must be between ${denominations.minimum_value} and ${denominations.maximum_value}`,
      );
    }
  }
  return { found, face };
}

/** An item checked: its products, face value and price in units, and its answered products. */
interface CheckedItem {
  found: Orderable[];
  face: bigint;
  price: bigint;
  products: OrderItem["products"];
}

/**
 * Checks an item of any kind: one product (checkItem, priced with its discount), or a choice
 * (checkChoiceItem, priced at its face value: the recipient's product is not chosen yet). A
 * RECIPIENT item takes payment products only (OpenAPI RecipientDistribution).
 */
function checkAnyItem(
  catalog: Catalog,
  templates: SelectionTemplates,
  item: NewOrderItem,
  index: number,
  currency: string,
): CheckedItem {
  const { products } = item;
  let checked: CheckedItem;
  if (products.type === "SINGLE") {
    const { found, face } = checkItem(
      catalog,
      { face_value: item.face_value, products },
      index,
      currency,
    );
    const price = priceUnits(found.product, face, currencyDecimals(currency));
    checked = { found: [found], face, price, products: { type: "SINGLE", value: products.value } };
  } else {
    const choice = checkChoiceItem(
      catalog,
      templates,
      { face_value: item.face_value, products },
      index,
      currency,
    );
    checked = {
      found: choice.found,
      face: choice.face,
      price: choice.face,
      products: choice.answered,
    };
  }
  const other = checked.found.find((f) => f.product.payout_type !== "payment");
  if (item.distribution_method.type === "RECIPIENT" && other)
    throw new ApiError(
      "product_validation_error",
      `items[${index}]: RECIPIENT distribution takes payment products only ` +
        `(${other.product.code} is ${other.product.payout_type})`,
    );
  return checked;
}

/** The item's distribution_method as the service answers it: its template, else the account's. */
function answeredDistribution(
  dm: NewOrderItem["distribution_method"],
): OrderItem["distribution_method"] {
  const template_id = dm.template_id ?? DEFAULT_TEMPLATE_ID;
  if (dm.type === "PAYOUT_LINK") return { type: "PAYOUT_LINK", template_id };
  if (dm.type === "RECIPIENT") {
    const { recipient_reference, email_address } = dm;
    return { type: "RECIPIENT", recipient_reference, email_address, template_id };
  }
  return { type: "EMAIL", email_address: dm.email_address, template_id };
}

/** Orders and balances of the sandbox account. */
export class OrderBook {
  readonly orders = new Map<string, StoredOrder>();
  /** The account's payout selection templates; kept by reset(), like the catalog. */
  readonly selectionTemplates = new SelectionTemplates();
  /** Balance units per currency, at the currency's scale. */
  private balances = new Map<string, bigint>();
  itemCount = 0;

  constructor(private readonly initialBalances: Record<string, string>) {
    this.reset();
  }

  reset(): void {
    this.orders.clear();
    this.itemCount = 0;
    this.balances = new Map();
    for (const [currency, amount] of Object.entries(this.initialBalances)) {
      this.setBalance(currency, amount);
    }
  }

  setBalance(currency: string, amount: string): void {
    this.balances.set(currency, toUnits(amount, currencyDecimals(currency)));
  }

  balanceUnits(currency: string): bigint {
    return this.balances.get(currency) ?? toUnits(DEFAULT_BALANCE, currencyDecimals(currency));
  }

  /** Balances as the service shows them: always two decimals (its pattern says so). */
  balance(currency: string): { balance: string; currency: string } {
    const scale = currencyDecimals(currency);
    const text = fromUnits(this.balanceUnits(currency), scale);
    return { balance: scale === 0 ? `${text}.00` : text, currency };
  }

  /** Every currency with a positive balance: those set, and those of the catalog. */
  allBalances(catalog: Catalog): { balance: string; currency: string }[] {
    const currencies = new Set(this.balances.keys());
    for (const product of catalog.products) currencies.add(product.currency);
    return [...currencies]
      .sort()
      .filter((currency) => this.balanceUnits(currency) > 0n)
      .map((currency) => this.balance(currency));
  }

  /**
   * Checks the order against the catalog and the balance, debits it, and stores it.
   * `asyncCompleteMs` undefined means sync (COMPLETED at once).
   */
  create(
    catalog: Catalog,
    request: NewOrder,
    idempotencyKey: string,
    asyncCompleteMs: number | undefined,
    redeemBase: string,
    fails = false,
    apiKey?: string,
  ): StoredOrder {
    const currency = request.payment_method.currency;
    const scale = currencyDecimals(currency);
    const checked = request.items.map((item, index) =>
      checkAnyItem(catalog, this.selectionTemplates, item, index, currency),
    );
    let totalFace = 0n;
    let totalPrice = 0n;
    const prices = checked.map(({ face, price }) => {
      totalFace += face;
      totalPrice += price;
      return price;
    });
    const balance = this.balanceUnits(currency);
    if (balance < totalPrice) {
      throw new ApiError(
        "insufficient_funds",
        `The ${currency} balance is too low for this order (${fromUnits(totalPrice, scale)} needed)`,
      );
    }
    this.balances.set(currency, balance - totalPrice);

    const now = Date.now();
    const sync = asyncCompleteMs === undefined;
    const completesAt = sync ? now : now + asyncCompleteMs;
    const items = request.items.map((item, index): OrderItem => {
      const { found, face, products } = checked[index] as (typeof checked)[number];
      const id = itemId(now);
      const months = found.length === 1 ? found[0]!.product.gift_card?.expiry.in_months || 12 : 12;
      return {
        id,
        distribution_method: answeredDistribution(item.distribution_method),
        products,
        face_value: fromUnits(face, scale),
        price: fromUnits(prices[index] as bigint, scale),
        payout: {
          status: "ACTIVE",
          status_updated_at: iso(completesAt),
          url: `${redeemBase}/redeem/${id}`,
          expiry_date: iso(addMonths(completesAt, months)),
        },
        currency,
      };
    });
    const order: Order = {
      id: orderId(now),
      status: sync ? "COMPLETED" : "PROCESSING",
      created_at: iso(now),
      completed_at: sync ? iso(now) : null,
      description: request.description,
      payment_method: { type: "ACCOUNT_BALANCE", currency },
      currency,
      total_price: fromUnits(totalPrice, scale),
      total_discount: fromUnits(totalFace - totalPrice, scale),
      items,
      transaction_detail: { [currency]: { value: fromUnits(totalPrice, scale), fx: null } },
      metadata: request.metadata,
    };
    const stored: StoredOrder = { order, idempotencyKey, completesAt };
    if (apiKey !== undefined) stored.apiKey = apiKey;
    if (fails && !sync) stored.fails = true;
    this.orders.set(order.id, stored);
    this.itemCount += items.length;
    return stored;
  }

  /** The order as GET /v2/order/{id} shows it now; async orders complete lazily, when read. */
  view(stored: StoredOrder, now = Date.now()): Order | ProcessingView {
    const { order } = stored;
    if (order.status === "PROCESSING") {
      if (now < stored.completesAt) {
        return { id: order.id, status: "PROCESSING", message: "The order is being processed" };
      }
      this.finish(stored);
    }
    return order;
  }

  /** Ends a PROCESSING order: COMPLETED, or FAILED with its price back on the balance. */
  private finish(stored: StoredOrder): void {
    const { order } = stored;
    if (!stored.fails) {
      order.status = "COMPLETED";
      order.completed_at = iso(stored.completesAt);
      return;
    }
    order.status = "FAILED";
    const scale = currencyDecimals(order.currency);
    const refund = toUnits(order.total_price, scale);
    this.balances.set(order.currency, this.balanceUnits(order.currency) + refund);
  }
}

/** What an item of `face` units costs: the price of an order's item and of an estimate's. */
export function priceUnits(product: Product, face: bigint, scale: number): bigint {
  return discountedPriceUnits(
    fromUnits(face, scale),
    product.discount_multiplier,
    product.currency,
  );
}
