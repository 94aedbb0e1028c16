import type { OrderRequest } from "../api/order-request.js";
import { pauseIfRunning } from "../campaigns/control.js";
import type { CatalogStore } from "../catalog/catalog-store.js";
import { openCurrentSnapshot } from "../catalog/current-snapshot.js";
import type { CatalogIndex } from "../catalog/index-entry.js";
import { notOrderableReason } from "../catalog/orderable.js";
import {
  allowsFaceValue,
  denominationsText,
  readDenominations,
} from "../catalog/product-denominations.js";
import {
  isNewerThan,
  type ProductOverrideMap,
  type ProductOverrideStore,
} from "../catalog/product-overrides.js";
import type { Ledger } from "../ledger/ledger.js";
import type { Logger } from "../log.js";

/** Where the product guard reads. */
export interface ProductGuardSource {
  /** The product states pushed by the service (`product.update`): Redis, or the database. */
  overrides: ProductOverrideStore;
  /**
   * The worker's catalog (its data dir's, or PostgreSQL's): overrides not newer than its current
   * snapshot are ignored (the snapshot has what they said). Without a snapshot, every override
   * counts.
   */
  catalog: CatalogStore;
}

/** A face value as a plain decimal (no exponent), for comparing with denominations. */
function plainDecimal(value: number): string {
  return value.toFixed(10).replace(/\.?0+$/, "");
}

/** What the guard reads: the pushed states newer than the snapshot, and the snapshot's index. */
interface GuardView {
  overrides: ProductOverrideMap;
  /** The worker's current snapshot, when its data dir has one. */
  snapshot?: { fetchedAt: string; index: CatalogIndex };
}

/**
 * Whether the products of an order can be ordered now, as the import decided it
 * (src/catalog/orderable.ts; docs/concepts.md, "Orderable"): the current snapshot with what
 * `product.update` told since (product-overrides.ts) laid over it, read at most once per
 * `ttlMs`, so that a worker looks before each order without a round trip each time. The index is
 * read again only when the snapshot changes.
 */
export class ProductGuard {
  private view: GuardView = { overrides: {} };
  private readAt = 0;
  private snapshot: { name: string; fetchedAt: string; index: CatalogIndex } | undefined;
  /** The read under way: the orders that find the view old meanwhile wait for it, not a read each. */
  private reading: Promise<GuardView> | undefined;

  constructor(
    private readonly source: ProductGuardSource,
    private readonly ttlMs = 1000,
  ) {}

  /** Whether the view was read less than `ttlMs` ago. */
  private fresh(): boolean {
    return Date.now() - this.readAt <= this.ttlMs;
  }

  /**
   * The overrides newer than the current snapshot, and its index, read again once `ttlMs` has
   * passed: one read at a time, shared by every order that asks while it runs (fifty orders in
   * flight would otherwise each open the snapshot once the view is old).
   */
  private current(): Promise<GuardView> {
    if (this.fresh()) return Promise.resolve(this.view);
    this.reading ??= this.read().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async read(): Promise<GuardView> {
    const [all, snapshot] = await Promise.all([
      this.source.overrides.read(),
      openCurrentSnapshot(this.source.catalog),
    ]);
    if (!snapshot) this.snapshot = undefined;
    else if (this.snapshot?.name !== snapshot.name) {
      const index = await snapshot.index();
      this.snapshot = { name: snapshot.name, fetchedAt: snapshot.manifest.fetched_at, index };
    }
    const since = snapshot?.manifest.fetched_at;
    this.view = {
      overrides: Object.fromEntries(
        Object.entries(all).filter(([, override]) => isNewerThan(override, since)),
      ),
      snapshot: this.snapshot,
    };
    this.readAt = Date.now();
    return this.view;
  }

  /**
   * Why an order of `request` cannot be made now, or undefined: a product that is not orderable
   * (the service said so by product.update, or the snapshot does), or a face value its pushed
   * denominations no longer take.
   */
  async stopReason(request: OrderRequest): Promise<string | undefined> {
    // A view gone old is read again, and an order it would stop waits for that read (a product
    // back since, and the campaign resumed, must not be paused again by the old view); an order
    // it lets through goes at once, checked against a view at most one read older than `ttlMs`,
    // instead of every order in flight waiting for the read inside its sending slot.
    if (this.readAt > 0 && this.ttlMs > 0 && !this.fresh()) {
      const reading = this.current();
      const before = this.reasonIn(this.view, request);
      if (before === undefined) {
        reading.catch(() => undefined);
        return undefined;
      }
    }
    return this.reasonIn(await this.current(), request);
  }

  private reasonIn(view: GuardView, request: OrderRequest): string | undefined {
    const { overrides, snapshot } = view;
    for (const item of request.items) {
      // A choice of products (MULTIPLE, TEMPLATE) is not held here: the service checks it.
      if (item.products.type !== "SINGLE") continue;
      const code = item.products.value;
      const entry = snapshot?.index.entries[code];
      const override = overrides[entry?.plan_of ?? code] ?? overrides[code];
      if (!entry && !override) continue;
      const reason = notOrderableReason({
        code,
        is_orderable: override ? override.state.is_orderable : entry?.is_orderable,
        state: entry?.state,
      });
      const pushed = override && `(product.update of ${override.timestamp})`;
      if (reason) {
        const from = override?.state.is_orderable === false ? pushed : snapshotText(snapshot);
        return `product_unavailable: ${reason} ${from}; resume the campaign when it is orderable again`;
      }
      if (!override?.state.denominations || entry?.plan_of) continue;
      const denominations = readDenominations(override.state.denominations);
      const face = plainDecimal(item.face_value);
      if (!allowsFaceValue(denominations, face)) {
        const now = denominationsText(denominations);
        return (
          `product_unavailable: product ${code} no longer takes face value ${face} ` +
          `(its denominations: ${now}) ${pushed}; ` +
          "cancel the campaign, or resume it when that face value is taken again"
        );
      }
    }
    return undefined;
  }
}

/** `(catalog snapshot fetched T: ...)`: where a refusal that no product.update made comes from. */
function snapshotText(snapshot: GuardView["snapshot"]): string {
  return `(catalog snapshot fetched ${snapshot?.fetchedAt ?? "?"}; \`giftjobs catalog sync\` reads it again)`;
}

/**
 * Before an order is sent: when the service told (product.update) that one of its products
 * cannot be ordered, or no longer at one of its face values, the campaign is paused with that
 * reason and the order goes back on its pending list, unsent, under the same key, instead of
 * being sent to fail (a 422 would fail its rows). Returns true when the order was held.
 */
export async function holdIfProductStopped(
  order: { campaign: string; number: number; request: OrderRequest; log: Logger },
  deps: {
    guard: ProductGuard | undefined;
    ledger: Ledger;
    onPaused?: (campaign: string, reason: string) => void;
  },
): Promise<boolean> {
  const { guard, ledger, onPaused } = deps;
  const reason = await guard?.stopReason(order.request).catch(() => undefined);
  if (!reason) return false;
  const { campaign, number, log } = order;
  if (await pauseIfRunning(ledger, campaign, reason)) {
    onPaused?.(campaign, reason);
    log.error(
      `campaign ${campaign} paused: ${reason}. Then: giftjobs orders resume --campaign ${campaign}`,
    );
  }
  await ledger.orders.transition({
    campaign,
    number,
    from: ["in_flight"],
    to: "queued",
    patch: {},
    follow: "pending",
  });
  return true;
}
