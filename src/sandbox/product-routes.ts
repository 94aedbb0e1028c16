import { ApiError } from "./api-error.js";
import type { PageQuery } from "./catalog.js";
import type { SandboxState } from "./state.js";

/** A route's answer: status and an already serialized JSON body. */
export interface Reply {
  status: number;
  body: string;
}

const COUNTRY = /^[A-Z]{2}$/;
const LIMIT = /^\d+$/;
const MAX_PAGE_LIMIT = 500;

function optional(params: URLSearchParams, name: string): string | undefined {
  const value = params.get(name);
  return value === null || value === "" ? undefined : value;
}

function parseBoolean(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const lower = value.toLowerCase();
  if (lower === "true") return true;
  if (lower === "false") return false;
  throw new ApiError("bad_request", `${name} must be true or false`);
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return MAX_PAGE_LIMIT;
  const limit = LIMIT.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT)) {
    throw new ApiError(
      "pagination_error",
      `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}`,
    );
  }
  return limit;
}

function parsePageQuery(params: URLSearchParams): PageQuery {
  const after = optional(params, "after");
  const before = optional(params, "before");
  if (after !== undefined && before !== undefined) {
    throw new ApiError("pagination_error", "after and before cannot be used together");
  }
  const countries = params.getAll("countries_redeemable_in").filter((c) => c !== "");
  const bad = countries.find((c) => !COUNTRY.test(c));
  if (bad !== undefined) {
    throw new ApiError("bad_request", `countries_redeemable_in: ${bad} is not an ISO 3166 code`);
  }
  const query: PageQuery = {
    countries,
    categories: params.getAll("categories").filter((c) => c !== ""),
    limit: parseLimit(params.get("limit") ?? undefined),
  };
  const isOrderable = parseBoolean("is_orderable", optional(params, "is_orderable"));
  if (isOrderable !== undefined) query.isOrderable = isOrderable;
  const code = optional(params, "code");
  if (code !== undefined) query.code = code;
  if (after !== undefined) query.after = after;
  if (before !== undefined) query.before = before;
  return query;
}

/** Fires the product page fault when the request's cursor is the one it names. */
function takePageFault(state: SandboxState, query: PageQuery) {
  const fault = state.faults.productPageFault;
  if (!fault || query.before !== undefined) return undefined;
  if ((fault.after ?? null) !== (query.after ?? null)) return undefined;
  if (fault.times !== undefined) {
    fault.times -= 1;
    if (fault.times <= 0) state.faults.productPageFault = null;
  }
  return fault.kind;
}

/** GET /v2/product: one page in code order; an empty page after the last one. */
export function listProducts(state: SandboxState, params: URLSearchParams): Reply {
  const query = parsePageQuery(params);
  const fault = takePageFault(state, query);
  if (fault === "500") {
    throw new ApiError("internal_server_error", "Injected failure of this product page");
  }
  const catalog = state.catalog.page(query);
  const first = catalog[0]?.code;
  const last = catalog[catalog.length - 1]?.code;
  let cursors: Record<string, string | null>;
  if (first === undefined || last === undefined) {
    cursors = state.faults.emptyPageCursors === "null" ? { after: null, before: null } : {};
  } else {
    cursors = { after: last, before: first };
  }
  if (fault === "stuck_cursor") cursors.after = query.after ?? first ?? null;
  const body = JSON.stringify({ catalog, pagination: { cursors, page: { limit: query.limit } } });
  if (fault === "malformed")
    return { status: 200, body: body.slice(0, Math.ceil(body.length / 2)) };
  return { status: 200, body };
}

export function getProduct(state: SandboxState, code: string): Reply {
  const product = state.catalog.get(code);
  if (!product) throw new ApiError("not_found", `No product with code ${code}`);
  return { status: 200, body: JSON.stringify(product) };
}

export function listCountries(state: SandboxState): Reply {
  const countries = new Set<string>();
  for (const product of state.catalog.products) {
    for (const country of product.countries_redeemable_in) countries.add(country);
  }
  return { status: 200, body: JSON.stringify({ countries: [...countries].sort() }) };
}

export function listCategories(state: SandboxState): Reply {
  const categories = new Set<string>();
  for (const product of state.catalog.products) {
    for (const category of product.categories) categories.add(category);
  }
  const list = [...categories].sort().map((code) => ({ code }));
  return { status: 200, body: JSON.stringify({ categories: list }) };
}
