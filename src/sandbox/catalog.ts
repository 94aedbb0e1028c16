import { compareCodes, sortByCode } from "./generate-catalog.js";
import type { Product, SubscriptionPlan } from "./types.js";

/** What an order item's product code resolves to: a product, or a subscription plan of one. */
export interface Orderable {
  product: Product;
  plan: SubscriptionPlan | undefined;
}

export interface PageQuery {
  isOrderable?: boolean;
  code?: string;
  countries?: string[];
  categories?: string[];
  after?: string;
  before?: string;
  limit: number;
}

/**
 * The catalog, sorted by code in an array: cursors are codes, found by binary search, so a
 * page costs O(log n + limit) even for 100,000 products.
 */
export class Catalog {
  readonly products: Product[];
  private readonly byCode = new Map<string, Product>();
  private readonly plans = new Map<string, Orderable>();

  constructor(products: Product[]) {
    // Checked before sorting: a product without a code would sort anywhere.
    this.products = products.slice();
    for (const product of this.products) {
      if (typeof product?.code !== "string" || product.code === "") {
        throw new Error("every product needs a non-empty string code");
      }
    }
    sortByCode(this.products);
    for (const product of this.products) {
      if (this.byCode.has(product.code)) throw new Error(`duplicate product code ${product.code}`);
      this.byCode.set(product.code, product);
      for (const plan of product.subscription?.subscription_plans ?? []) {
        this.plans.set(plan.subscription_plan_code, { product, plan });
      }
    }
  }

  get size(): number {
    return this.products.length;
  }

  get(code: string): Product | undefined {
    return this.byCode.get(code);
  }

  /** A code as used in an order item: a product code, or a subscription plan code. */
  resolve(code: string): Orderable | undefined {
    const product = this.byCode.get(code);
    if (product) return { product, plan: undefined };
    return this.plans.get(code);
  }

  /** Index of the first product whose code is greater than (or, inclusive, equal to) `code`. */
  private lowerBound(code: string, inclusive: boolean): number {
    let low = 0;
    let high = this.products.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const cmp = compareCodes((this.products[mid] as Product).code, code);
      if (cmp < 0 || (!inclusive && cmp === 0)) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /**
   * One page in code order. A cursor need not be a current code (the product may have gone):
   * `after` starts past it and `before` ends before it wherever it would sort.
   */
  page(query: PageQuery): Product[] {
    const matches = matcher(query);
    const out: Product[] = [];
    if (query.before !== undefined) {
      for (
        let i = this.lowerBound(query.before, true) - 1;
        i >= 0 && out.length < query.limit;
        i--
      ) {
        const product = this.products[i] as Product;
        if (matches(product)) out.push(product);
      }
      return out.reverse();
    }
    const start = query.after === undefined ? 0 : this.lowerBound(query.after, false);
    for (let i = start; i < this.products.length && out.length < query.limit; i++) {
      const product = this.products[i] as Product;
      if (matches(product)) out.push(product);
    }
    return out;
  }
}

function matcher(query: PageQuery): (product: Product) => boolean {
  const countries = query.countries?.length ? new Set(query.countries) : undefined;
  const categories = query.categories?.length ? new Set(query.categories) : undefined;
  return (product) => {
    if (query.isOrderable === true && !product.is_orderable) return false;
    if (query.code !== undefined && product.code !== query.code) return false;
    if (countries && !product.countries_redeemable_in.some((c) => countries.has(c))) return false;
    if (categories && !product.categories.some((c) => categories.has(c))) return false;
    return true;
  };
}
