import { basicView } from "./basic-view.js";
import type { OrderBook, StoredOrder } from "./order-book.js";
import type { Product } from "./types.js";
import type { WebhookSender } from "./webhook-sender.js";

/** A product's state as `product.update` shows it (OpenAPI ProductUpdateState). */
export interface ProductUpdateState {
  /** The product's `discount_multiplier` (OpenAPI ProductDiscountMultiplier). */
  price_multiplier: string;
  is_orderable: boolean;
  /** The gift card's or payment's denominations, as the product shows them; none otherwise. */
  denominations?: {
    type?: string;
    minimum_value: string;
    maximum_value: string;
    available_list?: string[] | null;
  };
}

/** What `product.update` says of `product`: its fields in a fixed order, so states compare. */
export function productUpdateState(product: Product): ProductUpdateState {
  const state: ProductUpdateState = {
    price_multiplier: product.discount_multiplier,
    is_orderable: product.is_orderable,
  };
  const gift = product.gift_card?.denominations;
  const payment = product.payment?.denominations;
  if (gift) {
    state.denominations = {
      type: gift.type,
      minimum_value: gift.minimum_value,
      maximum_value: gift.maximum_value,
      available_list: gift.available_list,
    };
  } else if (payment) {
    state.denominations = {
      minimum_value: payment.minimum_value,
      maximum_value: payment.maximum_value,
    };
  }
  return state;
}

/**
 * Pushes what the service pushes: `order.completion` when an async order ends (COMPLETED with
 * the order's basic details, as GET /v2/order lists it, FAILED with `{id, status}`), and
 * `product.update` when what it tells of a product (multiplier, orderable, denominations)
 * changes.
 */
export class WebhookNotifier {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly sender: WebhookSender,
    private readonly book: OrderBook,
  ) {}

  /** An async order was accepted: its message leaves when it ends. */
  orderAccepted(stored: StoredOrder): void {
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        this.orderEnded(stored);
      },
      Math.max(0, stored.completesAt - Date.now()),
    );
    this.timers.add(timer);
  }

  private orderEnded(stored: StoredOrder): void {
    const view = this.book.view(stored);
    // A timer may fire a millisecond early: look again then.
    if (view.status === "PROCESSING") {
      this.orderAccepted(stored);
      return;
    }
    // What the service sends (OpenAPI CompletedOrderWebhook): the basic details, no items.
    const body = view.status === "FAILED" ? { id: view.id, status: "FAILED" } : basicView(view);
    this.sender.send("order.completion", body);
  }

  /**
   * The catalog was replaced: one `product.update` per product still there whose multiplier,
   * `is_orderable` or denominations changed (its `state`, LIVE and the others, is not part of
   * the message: a change of it alone sends nothing).
   */
  catalogChanged(before: readonly Product[], after: readonly Product[]): void {
    const old = new Map(before.map((p) => [p.code, p]));
    const timestamp = new Date().toISOString();
    for (const product of after) {
      const was = old.get(product.code);
      if (was === undefined || was === product) continue;
      const oldState = productUpdateState(was);
      const newState = productUpdateState(product);
      if (JSON.stringify(oldState) === JSON.stringify(newState)) continue;
      this.sender.send("product.update", {
        product_code: product.code,
        old_state: oldState,
        new_state: newState,
        timestamp,
      });
    }
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.sender.close();
  }
}
