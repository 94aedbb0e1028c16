import { currencyDecimals, fromUnits } from "../money.js";
import { ApiError, type ValidationDetail } from "./api-error.js";
import { checkChoiceItem } from "./choice-items.js";
import { checkProducts, type NewProducts, readProducts } from "./item-parts.js";
import { checkItem, priceUnits } from "./order-book.js";
import type { Reply } from "./product-routes.js";
import type { SandboxState } from "./state.js";
import { checkItemBase, checkPayment, isObject, type Obj, Problems } from "./validate-order.js";

/** The most items one estimate takes (OpenAPI OrderPriceRequest, `items.maxItems`). */
const MAX_ESTIMATE_ITEMS = 500;

/** An item of an estimate request that passed the schema checks. */
interface EstimateItem {
  face_value: number;
  products: Exclude<NewProducts, { type: "TEMPLATE" }>;
}

function checkEstimateItem(value: unknown, index: number, problems: Problems): void {
  const { item, at } = checkItemBase(value, index, problems);
  if (!item) return;
  const face = item.face_value;
  const products = item.products;
  if (products === undefined) problems.add(at("products"), "missing", "Field required");
  else if (!isObject(products)) problems.add(at("products"), "object_type", "Must be an object");
  // OrderItemPriceRequest takes SingleProduct and MultipleProduct: no template.
  else if (products.type === "TEMPLATE")
    problems.add(at("products", "type"), "enum", "Must be one of 'SINGLE', 'MULTIPLE'");
  else checkProducts(products, face, at("products"), problems);
}

/** Checks a parsed body against OrderPriceRequest; throws a 422 with every problem found. */
function validateEstimateBody(body: unknown): { currency: string; items: EstimateItem[] } {
  const problems = new Problems();
  if (!isObject(body)) {
    problems.add([], "model_type", "The body must be a JSON object");
    throw new ApiError("validation_error", "Request failed validation", problems.details);
  }
  checkPayment(body.payment_method, problems);
  const items = body.items;
  if (items === undefined) problems.add(["items"], "missing", "Field required");
  else if (!Array.isArray(items)) problems.add(["items"], "list_type", "Must be an array");
  else {
    if (items.length === 0) problems.add(["items"], "too_short", "At least 1 item is required");
    if (items.length > MAX_ESTIMATE_ITEMS)
      problems.add(["items"], "too_long", `At most ${MAX_ESTIMATE_ITEMS} items`);
    items.forEach((item, index) => {
      checkEstimateItem(item, index, problems);
    });
  }
  if (problems.details.length > 0)
    throw new ApiError("validation_error", "Request failed validation", problems.details);
  const currency = (body.payment_method as Obj).currency as string;
  const read = (items as Obj[]).map((item) => ({
    face_value: item.face_value as number,
    products: readProducts(item.products as Obj) as EstimateItem["products"],
  }));
  return { currency, items: read };
}

/**
 * One item priced as the order book prices it: one product with its discount, a choice of
 * several at its face value (the recipient's product is not chosen yet), its multiplier then
 * none. Throws the order's ApiError for an item an order would refuse.
 */
function priceItem(state: SandboxState, item: EstimateItem, index: number, currency: string) {
  const scale = currencyDecimals(currency);
  const { products } = item;
  if (products.type === "SINGLE") {
    const { found, face } = checkItem(state.catalog, { ...item, products }, index, currency);
    const price = priceUnits(found.product, face, scale);
    return { products, face, price, multiplier: found.product.discount_multiplier };
  }
  const templates = state.book.selectionTemplates;
  const choice = checkChoiceItem(state.catalog, templates, { ...item, products }, index, currency);
  return { products, face: choice.face, price: choice.face, multiplier: "0.00" };
}

/**
 * POST /v2/order/estimate: prices the items exactly as an order of them would be priced and
 * charged (order-book.ts, choice-items.ts: the same item checks, the same price), debiting and
 * recording nothing. SINGLE and MULTIPLE products, as OrderItemPriceRequest has them (no
 * template). An item an order would refuse (unknown product, not orderable, another currency, a
 * face value outside its denominations) is a 422 naming it: the only client error the document
 * gives this route. Amounts are JSON numbers, as OrderPriceResponse types them; the multiplier a
 * string. Fault `estimateFailRate`: a 500 before anything is done.
 */
export function estimateOrder(state: SandboxState, raw: string): Reply {
  if (state.dice.roll(state.faults.estimateFailRate)) {
    throw new ApiError("internal_server_error", "Injected failure (estimate fail rate)");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ApiError("validation_error", "Request failed validation", [
      { type: "json_invalid", message: "The body is not valid JSON", location: ["body"] },
    ]);
  }
  const { currency, items } = validateEstimateBody(parsed);
  const scale = currencyDecimals(currency);
  const amount = (units: bigint) => Number(fromUnits(units, scale));
  const details: ValidationDetail[] = [];
  const priced = items.map((item, index) => {
    try {
      return priceItem(state, item, index, currency);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const location = ["body", "items", String(index)];
      details.push({ type: error.type, message: error.message, location });
      return undefined;
    }
  });
  if (details.length > 0)
    throw new ApiError("validation_error", "Request failed validation", details);
  let totalFace = 0n;
  let totalPrice = 0n;
  const answered = priced.map((p) => {
    const { products, face, price, multiplier } = p!;
    totalFace += face;
    totalPrice += price;
    return {
      products,
      face_value: amount(face),
      price: amount(price),
      discount_multiplier: multiplier,
      currency,
    };
  });
  const body = {
    payment_method: { type: "ACCOUNT_BALANCE", currency },
    items: answered,
    currency,
    total_discount: amount(totalFace - totalPrice),
    total_price: amount(totalPrice),
    transaction_detail: { [currency]: { value: fromUnits(totalPrice, scale), fx: null } },
  };
  return { status: 200, body: JSON.stringify(body) };
}
