import { Catalog } from "./catalog.js";
import { DEFAULT_FAULTS, FaultDice, type Faults } from "./faults.js";
import { generateCatalog } from "./generate-catalog.js";
import { IdempotencyCache } from "./idempotency.js";
import { OrderBook } from "./order-book.js";
import type { WebhookNotifier } from "./order-completion.js";
import { SlidingWindow } from "./rate-limit.js";
import { Stats } from "./stats.js";
import type { Product } from "./types.js";

/** Changes to apply to the current catalog, in this order: remove, update, add. */
export interface CatalogMutation {
  /** Codes of products to remove. */
  remove?: string[];
  /** Shallow merges into existing products, found by `code`. */
  update?: (Partial<Product> & { code: string })[];
  /** Whole new products (their codes must be new). */
  add?: Product[];
}

/** How a rotation answers the key it replaces: 401 invalid_api_key, or 403 forbidden. */
export type OldKeyAnswer = "invalid_api_key" | "forbidden";

/** Everything the sandbox holds in memory; `catalog` is replaced whole, never edited in place. */
export class SandboxState {
  catalog: Catalog;
  readonly faults: Faults;
  readonly book: OrderBook;
  readonly idempotency = new IdempotencyCache();
  readonly orderWindow: SlidingWindow;
  readonly dice: FaultDice;
  readonly stats = new Stats();
  /** The only X-Api-Key accepted; undefined: any non-empty one (POST /_sandbox/api-key). */
  apiKey: string | undefined;
  /** Former keys answered 403 forbidden instead of 401 invalid_api_key. */
  readonly forbiddenKeys = new Set<string>();
  /** Set when the sandbox sends webhooks (--webhook-url). */
  webhooks: WebhookNotifier | undefined;

  constructor(
    products: Product[],
    faults: Partial<Faults>,
    balances: Record<string, string>,
    faultSeed: number,
  ) {
    this.catalog = new Catalog(products);
    this.faults = { ...DEFAULT_FAULTS, ...faults };
    this.book = new OrderBook(balances);
    this.orderWindow = new SlidingWindow(this.faults.orderRateLimit);
    this.dice = new FaultDice(faultSeed);
  }

  setCatalog(products: Product[]): void {
    const before = this.catalog.products;
    this.catalog = new Catalog(products);
    this.webhooks?.catalogChanged(before, this.catalog.products);
  }

  regenerate(products: number, seed: number): void {
    this.setCatalog(generateCatalog({ products, seed }));
  }

  mutateCatalog(mutation: CatalogMutation): void {
    const remove = new Set(mutation.remove ?? []);
    const byCode = new Map<string, Product>();
    for (const product of this.catalog.products) {
      if (!remove.has(product.code)) byCode.set(product.code, product);
    }
    for (const change of mutation.update ?? []) {
      const current = byCode.get(change.code);
      if (!current) throw new RangeError(`update: no product ${change.code}`);
      byCode.set(change.code, { ...current, ...change });
    }
    for (const product of mutation.add ?? []) {
      if (byCode.has(product.code)) throw new RangeError(`add: product ${product.code} exists`);
      byCode.set(product.code, product);
    }
    this.setCatalog([...byCode.values()]);
  }

  /**
   * A key rotation: only `apiKey` is accepted from now on (undefined: any). The key it replaces
   * is answered 401 invalid_api_key, or 403 forbidden with `oldKey` "forbidden".
   */
  rotateApiKey(apiKey: string | undefined, oldKey: OldKeyAnswer = "invalid_api_key"): void {
    if (this.apiKey !== undefined && this.apiKey !== apiKey && oldKey === "forbidden")
      this.forbiddenKeys.add(this.apiKey);
    if (apiKey !== undefined) this.forbiddenKeys.delete(apiKey);
    this.apiKey = apiKey;
  }

  setFaults(update: Partial<Faults>): Faults {
    Object.assign(this.faults, update);
    this.orderWindow.limit = this.faults.orderRateLimit;
    return this.faults;
  }

  /** Clears orders, idempotency keys, balances, the rate window, stats and the fault dice. */
  reset(): void {
    this.book.reset();
    this.idempotency.clear();
    this.orderWindow.reset();
    this.stats.reset();
    this.dice.reset();
    this.webhooks?.sender.resetStats();
  }
}
