import type { OrderBook, StoredOrder } from "./order-book.js";
import type { Product } from "./types.js";
import type { WebhookSender } from "./webhook-sender.js";

/**
 * Pushes what the service pushes: `order.completion` when an async order ends (COMPLETED with
 * the order as GET /v2/order/{id} shows it, FAILED with `{id, status}`), and `product.update`
 * when a product's state changes.
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
    const body = view.status === "FAILED" ? { id: view.id, status: "FAILED" } : view;
    this.sender.send("order.completion", body);
  }

  /** The catalog was replaced: one message per product still there whose state changed. */
  catalogChanged(before: readonly Product[], after: readonly Product[]): void {
    const old = new Map(before.map((p) => [p.code, p.state]));
    const timestamp = new Date().toISOString();
    for (const product of after) {
      const oldState = old.get(product.code);
      if (oldState === undefined || oldState === product.state) continue;
      this.sender.send("product.update", {
        product_code: product.code,
        old_state: oldState,
        new_state: product.state,
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
