import { ApiError, type ValidationDetail } from "./api-error.js";
import {
  checkDistribution,
  checkProducts,
  type NewDistribution,
  type NewProducts,
  readDistribution,
  readProducts,
} from "./item-parts.js";

/** A request body of POST /v2/order that passed the schema checks. */
export interface NewOrder {
  payment_method: { type: "ACCOUNT_BALANCE"; currency: string };
  items: NewOrderItem[];
  description: string | null;
  metadata: Record<string, string> | null;
}

export interface NewOrderItem {
  face_value: number;
  distribution_method: NewDistribution;
  products: NewProducts;
}
const CURRENCY = /^[A-Z]{3}$/;

const MAX_ASYNC_ITEMS = 200;
const MAX_SYNC_ITEMS = 1;

export type Obj = Record<string, unknown>;

export function isObject(value: unknown): value is Obj {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Collects every problem, as a pydantic-style 422 does, instead of stopping at the first. */
export class Problems {
  readonly details: ValidationDetail[] = [];
  add(location: (string | number)[], type: string, message: string): void {
    this.details.push({ type, message, location: ["body", ...location.map(String)] });
  }
}

export function checkPayment(value: unknown, problems: Problems): void {
  if (value === undefined) {
    problems.add(["payment_method"], "missing", "Field required");
    return;
  }
  if (!isObject(value)) {
    problems.add(["payment_method"], "object_type", "Must be an object");
    return;
  }
  if (value.type !== "ACCOUNT_BALANCE") {
    problems.add(["payment_method", "type"], "enum", "Must be 'ACCOUNT_BALANCE'");
  }
  if (value.currency === undefined) {
    problems.add(["payment_method", "currency"], "missing", "Field required");
  } else if (typeof value.currency !== "string" || !CURRENCY.test(value.currency)) {
    problems.add(["payment_method", "currency"], "string_pattern_mismatch", "Must be ISO 4217");
  }
}

/**
 * The checks an order's item and an estimate's item share: an object, with a face value of at
 * least 0.01. Returns the item (undefined when it is not an object) and the path maker of its
 * fields.
 */
export function checkItemBase(
  item: unknown,
  index: number,
  problems: Problems,
): { item: Obj | undefined; at: (...rest: string[]) => (string | number)[] } {
  const at = (...rest: string[]) => ["items", index, ...rest];
  if (!isObject(item)) {
    problems.add(at(), "object_type", "Must be an object");
    return { item: undefined, at };
  }
  const face = item.face_value;
  if (face === undefined) problems.add(at("face_value"), "missing", "Field required");
  else if (typeof face !== "number" || !Number.isFinite(face)) {
    problems.add(at("face_value"), "number_type", "Must be a number");
  } else if (face < 0.01) {
    problems.add(at("face_value"), "greater_than_equal", "Must be at least 0.01");
  }
  return { item, at };
}

function checkItem(value: unknown, index: number, problems: Problems): void {
  const { item, at } = checkItemBase(value, index, problems);
  if (!item) return;
  const face = item.face_value;

  const dm = item.distribution_method;
  if (dm === undefined) problems.add(at("distribution_method"), "missing", "Field required");
  else if (!isObject(dm))
    problems.add(at("distribution_method"), "object_type", "Must be an object");
  else checkDistribution(dm, at("distribution_method"), problems);

  const products = item.products;
  if (products === undefined) problems.add(at("products"), "missing", "Field required");
  else if (!isObject(products)) problems.add(at("products"), "object_type", "Must be an object");
  else checkProducts(products, face, at("products"), problems);
}

function checkItems(value: unknown, maxItems: number, sync: boolean, problems: Problems): void {
  if (value === undefined) {
    problems.add(["items"], "missing", "Field required");
    return;
  }
  if (!Array.isArray(value)) {
    problems.add(["items"], "list_type", "Must be an array");
    return;
  }
  if (value.length === 0) problems.add(["items"], "too_short", "At least 1 item is required");
  if (value.length > maxItems) {
    const why = sync ? "A sync order has a single item" : `At most ${maxItems} items`;
    problems.add(["items"], "too_long", why);
  }
  value.forEach((item, index) => {
    checkItem(item, index, problems);
  });
}

function checkDescription(value: unknown, problems: Problems): void {
  if (value === undefined || value === null) return;
  if (typeof value !== "string") problems.add(["description"], "string_type", "Must be a string");
  else if (value.length > 128)
    problems.add(["description"], "string_too_long", "At most 128 chars");
}

function checkMetadata(value: unknown, problems: Problems): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) {
    problems.add(["metadata"], "dict_type", "Must be an object");
    return;
  }
  const entries = Object.entries(value);
  if (entries.length > 20) problems.add(["metadata"], "too_long", "At most 20 keys");
  for (const [key, v] of entries) {
    if (key.length > 40) problems.add(["metadata", key], "string_too_long", "Key over 40 chars");
    if (typeof v !== "string") problems.add(["metadata", key], "string_type", "Must be a string");
    else if (v.length > 200) problems.add(["metadata", key], "string_too_long", "Over 200 chars");
  }
}

/** Checks a parsed body against the request schema; throws a 422 with every problem found. */
export function validateOrderBody(body: unknown, sync: boolean): NewOrder {
  const problems = new Problems();
  if (!isObject(body)) {
    problems.add([], "model_type", "The body must be a JSON object");
    throw new ApiError("validation_error", "Request failed validation", problems.details);
  }
  checkPayment(body.payment_method, problems);
  checkItems(body.items, sync ? MAX_SYNC_ITEMS : MAX_ASYNC_ITEMS, sync, problems);
  checkDescription(body.description, problems);
  checkMetadata(body.metadata, problems);
  if (problems.details.length > 0) {
    throw new ApiError("validation_error", "Request failed validation", problems.details);
  }
  const payment = body.payment_method as NewOrder["payment_method"];
  return {
    payment_method: { type: "ACCOUNT_BALANCE", currency: payment.currency },
    items: (body.items as Obj[]).map((item) => ({
      face_value: item.face_value as number,
      distribution_method: readDistribution(item.distribution_method as Obj),
      products: readProducts(item.products as Obj),
    })),
    description: (body.description as string | null | undefined) ?? null,
    metadata: (body.metadata as Record<string, string> | null | undefined) ?? null,
  };
}
