import type { OrderRequest } from "../api/order-request.js";
import { pauseIfRunning } from "../campaigns/control.js";
import { readCurrentPointer } from "../catalog/current-pointer.js";
import { readIndexOverrides, type StateOverride } from "../catalog/index-overrides.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";

/** States in which the service still takes orders (the others it refuses with a 422). */
const ORDERABLE_STATES = new Set(["LIVE", "TEMPORARILY_DEGRADED"]);

/**
 * What `product.update` told of the current snapshot's products (index-overrides.ts), read at
 * most once per `ttlMs`: a worker looks before each order without reading a file each time.
 */
export class ProductGuard {
  private overrides: Record<string, StateOverride> = {};
  private readAt = 0;

  constructor(
    private readonly dataDir: string,
    private readonly ttlMs = 1000,
  ) {}

  /** Why an order of `request` cannot be made now, or undefined. */
  async stopReason(request: OrderRequest): Promise<string | undefined> {
    if (Date.now() - this.readAt > this.ttlMs) {
      const pointer = await readCurrentPointer(this.dataDir);
      this.overrides = pointer ? await readIndexOverrides(this.dataDir, pointer.name) : {};
      this.readAt = Date.now();
    }
    for (const item of request.items) {
      // A choice of products (MULTIPLE, TEMPLATE) is not held here: the service checks it.
      if (item.products.type !== "SINGLE") continue;
      const code = item.products.value;
      const override = this.overrides[code];
      if (override && !ORDERABLE_STATES.has(override.state)) {
        return `product_unavailable: product ${code} is ${override.state} (product.update of ${override.timestamp}); resume the campaign when it is orderable again`;
      }
    }
    return undefined;
  }
}

/**
 * Before an order is sent: when the service told (product.update) that one of its products went
 * out of order, the campaign is paused with that reason and the order goes back on its pending
 * list, unsent, under the same key, instead of being sent to fail (a 422 would fail its rows).
 * Returns true when the order was held.
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
