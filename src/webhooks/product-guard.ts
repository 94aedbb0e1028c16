import type { OrderRequest } from "../api/order-request.js";
import { pauseIfRunning } from "../campaigns/control.js";
import { openCurrentSnapshot } from "../catalog/current-snapshot.js";
import {
  allowsFaceValue,
  denominationsText,
  readDenominations,
} from "../catalog/product-denominations.js";
import {
  isNewerThan,
  type ProductOverrideMap,
  type ProductOverrides,
} from "../catalog/product-overrides.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";

/** Where the product guard reads. */
export interface ProductGuardSource {
  /** The product states pushed by the service (`product.update`), in Redis. */
  overrides: ProductOverrides;
  /**
   * The worker's data dir: overrides not newer than its current snapshot are ignored (the
   * snapshot has what they said). Without a snapshot there, every override counts.
   */
  dataDir: string;
}

/** A face value as a plain decimal (no exponent), for comparing with denominations. */
function plainDecimal(value: number): string {
  return value.toFixed(10).replace(/\.?0+$/, "");
}

/**
 * What `product.update` told of products (product-overrides.ts), read at most once per
 * `ttlMs`: a worker looks before each order without a round trip each time.
 */
export class ProductGuard {
  private overrides: ProductOverrideMap = {};
  private readAt = 0;

  constructor(
    private readonly source: ProductGuardSource,
    private readonly ttlMs = 1000,
  ) {}

  /** The overrides newer than the current snapshot, read again once `ttlMs` has passed. */
  private async current(): Promise<ProductOverrideMap> {
    if (Date.now() - this.readAt <= this.ttlMs) return this.overrides;
    const [all, snapshot] = await Promise.all([
      this.source.overrides.read(),
      openCurrentSnapshot(this.source.dataDir),
    ]);
    const since = snapshot?.manifest.fetched_at;
    this.overrides = Object.fromEntries(
      Object.entries(all).filter(([, override]) => isNewerThan(override, since)),
    );
    this.readAt = Date.now();
    return this.overrides;
  }

  /**
   * Why an order of `request` cannot be made now, or undefined: a product the service said is
   * not orderable, or a face value its pushed denominations no longer take.
   */
  async stopReason(request: OrderRequest): Promise<string | undefined> {
    const overrides = await this.current();
    for (const item of request.items) {
      // A choice of products (MULTIPLE, TEMPLATE) is not held here: the service checks it.
      if (item.products.type !== "SINGLE") continue;
      const code = item.products.value;
      const override = overrides[code];
      if (!override) continue;
      const { state, timestamp } = override;
      const then = `(product.update of ${timestamp})`;
      if (!state.is_orderable) {
        return (
          `product_unavailable: product ${code} is not orderable ${then}; ` +
          "resume the campaign when it is orderable again"
        );
      }
      if (!state.denominations) continue;
      const denominations = readDenominations(state.denominations);
      const face = plainDecimal(item.face_value);
      if (!allowsFaceValue(denominations, face)) {
        const now = denominationsText(denominations);
        return (
          `product_unavailable: product ${code} no longer takes face value ${face} ` +
          `(its denominations: ${now}) ${then}; ` +
          "cancel the campaign, or resume it when that face value is taken again"
        );
      }
    }
    return undefined;
  }
}

/**
 * Before an order is sent: when the service told (product.update) that one of its products
 * cannot be ordered, or no longer at one of its face values, the campaign is paused with that
 * reason and the order goes back on its pending list, unsent, under the same key, instead of
 * being sent to fail (a 422 would fail its rows). Returns true when the order was held.
 */
export async function holdIfProductStopped(
  guard: ProductGuard | undefined,
  ledger: Ledger,
  order: { campaign: string; number: number; request: OrderRequest; log: Logger },
  onPaused?: (campaign: string, reason: string) => void,
): Promise<boolean> {
  const reason = await guard?.stopReason(order.request).catch(() => undefined);
  if (!reason) return false;
  const { campaign, number, log } = order;
  if (await pauseIfRunning(ledger, campaign, reason)) {
    onPaused?.(campaign, reason);
    log.error(
      `campaign ${campaign} paused: ${reason}. Then: giftjobs orders resume --campaign ${campaign}`,
    );
  }
  await ledger.transition(campaign, number, ["in_flight"], "queued", {}, "pending");
  return true;
}
