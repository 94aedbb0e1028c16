import type { ApiClient } from "../api/client.js";
import type { ListedOrder } from "../api/order-list.js";
import type { Order } from "../api/schemas.js";
import { UserError } from "../errors/user-error.js";
import type { Ledger } from "../ledger/ledger.js";
import type { RowStatus } from "../ledger/row-status.js";
import { tagsOf } from "../orders/order-tags.js";
import { type LookupPace, Lookups } from "./lookups.js";
import { LedgerSide } from "./reconcile-ledger.js";
import { compareStatus, couldBe } from "./reconcile-match.js";
import {
  type LookalikeEntry,
  type OtherOrders,
  type Outsider,
  outsiderOf,
  sortOutsiders,
  unreadOutsider,
} from "./reconcile-outsiders.js";
import { type Evidence, settleUncertain, type UncertainEntry } from "./reconcile-settle.js";
import { listWindow, lookUpOrder } from "./service-orders.js";
import { storedState } from "./state.js";

export type { LookalikeEntry, LookalikeItem, OtherOrders } from "./reconcile-outsiders.js";
export type { UncertainEntry } from "./reconcile-settle.js";

const MINUTE = 60_000;

export interface ReconcileOptions {
  /** Fingerprint of the API key the service is read with (apiKeyFingerprint). */
  apiKey: string;
  pace?: LookupPace;
  /**
   * A failed_uncertain order is recorded absent only if its last attempt ended at least this
   * long before the listing began: the service may still be working on a request the client
   * gave up on. @defaultValue 15 minutes
   */
  minAgeMs?: number;
  /** The window opens this long before the campaign's creation (clocks differ). @defaultValue 1h */
  marginMs?: number;
  onProgress?: (progress: { phase: "listing" | "lookups"; done: number; total: number }) => void;
}

/** An order of the service the ledger does not hold. */
export interface ServiceOrderEntry {
  order_id: string;
  status: string;
  created_at: string | null;
  currency: string | null;
  total_price: string | null;
  /** Why it is taken for the campaign's. */
  why: string;
  /** The ledger order its metadata names, with its status and rows' lines. */
  ledger_order?: number;
  ledger_status?: string;
  lines?: number[];
}

/** A ledger order holding a service order id, and what the service says of that id. */
export interface LedgerOrderEntry {
  ledger_order: number;
  order_id: string;
  ledger_status: string;
  /** Absent when the service does not know the id. */
  service_status?: string;
  lines?: number[];
}

export interface ReconcileReport {
  campaign: string;
  /** The orders compared: made from `from` until the listing began (`listed_at`). */
  window: { from: string; listed_at: string };
  pages: number;
  service_orders: number;
  /** Requests made to the service, retries included. */
  requests: number;
  unknown_to_ledger: ServiceOrderEntry[];
  missing_on_service: LedgerOrderEntry[];
  status_disagreements: LedgerOrderEntry[];
  /** Ends the service reached and the ledger not yet (a follower will): no disagreement. */
  behind: LedgerOrderEntry[];
  uncertain: UncertainEntry[];
  /** Orders of the window whose details the service would not show yet (PROCESSING). */
  unidentified: string[];
  /**
   * Orders of the window not the campaign's whose items look like its rows (same currency,
   * distribution type, products and face value): possible duplicates, and a disagreement.
   */
  lookalikes: LookalikeEntry[];
  /** The window's other orders: counted, no disagreement. */
  other_orders: OtherOrders;
  agree: boolean;
}

/**
 * `orders reconcile`: the service's orders of the campaign's time window against its ledger
 * (docs/architecture/keys-and-exactly-once.md, "Reconciling with the service"). Orders are
 * matched by order id, then by the tags naming campaign and key (src/orders/order-tags.ts),
 * read with GET /v2/order/{id} (the list shows no metadata). Reports orders the ledger does not
 * know, ledger orders the service does not have, and status disagreements; settles the
 * campaign's failed_uncertain orders: an order made under one's key completes it (or fails it
 * for good, FAILED) with the clearance `answered`; none anywhere in the window is recorded on it
 * (reconciled_absent_at) for `orders retry --new-key`. The window's other orders are sorted
 * into look-alikes of the campaign's rows (possible duplicates) and the rest, counted.
 */
export async function reconcileCampaign(
  ledger: Ledger,
  client: ApiClient,
  campaign: string,
  options: ReconcileOptions,
): Promise<ReconcileReport> {
  const meta = await ledger.campaigns.meta(campaign);
  if (storedState(meta) === "archived")
    throw new UserError(`campaign ${campaign} is archived: orders restore it first`);
  const created = meta.created_at ? Date.parse(meta.created_at) : Number.NaN;
  if (!Number.isFinite(created))
    throw new UserError(`campaign ${campaign} has no creation time: its window is not known`);
  const side = await LedgerSide.read(ledger, campaign);
  const lookups = new Lookups(options.pace);
  const from = created - (options.marginMs ?? 60 * MINUTE);
  const listedAt = new Date().toISOString();
  const listing = await listWindow(client, lookups, from, (pages) =>
    options.onProgress?.({ phase: "listing", done: pages, total: 0 }),
  );
  const run = new Reconciliation(client, side, lookups, options);
  await run.compare(listing.orders);
  const uncertain = await settleUncertain(
    { ledger, client, lookups, side, createdAt: meta.created_at, apiKey: options.apiKey },
    run.evidence,
    { listedAt, minAgeMs: options.minAgeMs ?? 15 * MINUTE },
  );
  await run.addLines();
  const outsiders = await sortOutsiders(ledger, campaign, run.outsiders);
  const report: ReconcileReport = {
    campaign,
    window: { from: new Date(from).toISOString(), listed_at: listedAt },
    pages: listing.pages,
    service_orders: listing.orders.size,
    requests: lookups.started,
    ...run.found,
    uncertain,
    unidentified: run.evidence.unidentified,
    ...outsiders,
    agree: false,
  };
  report.agree =
    report.unknown_to_ledger.length === 0 &&
    report.missing_on_service.length === 0 &&
    report.status_disagreements.length === 0 &&
    report.lookalikes.length === 0 &&
    uncertain.every((entry) => entry.outcome !== "undecided");
  return report;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function serviceEntry(order: ListedOrder | Order, why: string): ServiceOrderEntry {
  return {
    order_id: order.id,
    status: order.status,
    created_at: order.created_at ?? null,
    currency: order.currency ?? null,
    total_price: order.total_price ?? null,
    why,
  };
}

/** One run's comparison of the service's orders with the ledger's. */
class Reconciliation {
  readonly found = {
    unknown_to_ledger: [] as ServiceOrderEntry[],
    missing_on_service: [] as LedgerOrderEntry[],
    status_disagreements: [] as LedgerOrderEntry[],
    behind: [] as LedgerOrderEntry[],
  };
  readonly evidence: Evidence = {
    made: new Map(),
    alike: new Map(),
    byId: new Map(),
    unidentified: [],
  };
  /** The window's orders the campaign does not own (see sortOutsiders). */
  readonly outsiders: Outsider[] = [];
  private done = 0;
  private total = 0;

  constructor(
    private readonly client: ApiClient,
    private readonly side: LedgerSide,
    private readonly lookups: Lookups,
    private readonly options: ReconcileOptions,
  ) {}

  /** Every order of the window, then the ledger's order ids the window did not show. */
  async compare(listed: Map<string, ListedOrder>): Promise<void> {
    const toRead: string[] = [];
    for (const order of listed.values()) {
      const known = this.side.byId.get(order.id);
      if (known) this.compareKnown(known, order.id, order.status, undefined);
      else if (order.status === "PROCESSING") this.evidence.unidentified.push(order.id);
      else if (!order.currency || this.side.currencies.has(order.currency)) toRead.push(order.id);
      // Another currency than any of the campaign's: neither one of its bodies nor alike.
      else this.outsiders.push(unreadOutsider(order));
    }
    const unlisted = [...this.side.byId].filter(([id]) => !listed.has(id));
    this.total = toRead.length + unlisted.length;
    await this.lookups.forEach(toRead, async (id) => {
      const lookup = await lookUpOrder(this.client, this.lookups, id);
      this.tick();
      if (lookup?.kind === "processing") this.evidence.unidentified.push(id);
      else if (lookup) await this.examine(lookup.order);
    });
    await this.lookups.forEach(unlisted, async ([id, known]) => {
      const lookup = await lookUpOrder(this.client, this.lookups, id);
      this.tick();
      if (!lookup) this.missing(known, id);
      else {
        const order = lookup.kind === "order" ? lookup.order : undefined;
        this.compareKnown(known, id, lookup.order.status, order);
      }
    });
  }

  private tick(): void {
    this.done += 1;
    this.options.onProgress?.({ phase: "lookups", done: this.done, total: this.total });
  }

  private missing(known: { number: number; status: string }, id: string): void {
    if (known.status === "superseded") return;
    this.found.missing_on_service.push({
      ledger_order: known.number,
      order_id: id,
      ledger_status: known.status,
    });
  }

  private compareKnown(
    known: { number: number; status: RowStatus | "superseded" },
    id: string,
    status: string,
    order: Order | undefined,
  ): void {
    if (known.status === "superseded") return;
    if (known.status === "failed_uncertain") {
      this.evidence.byId.set(known.number, { id, order, status });
      return;
    }
    const verdict = compareStatus(known.status, status);
    if (verdict === "ok") return;
    const entry = {
      ledger_order: known.number,
      order_id: id,
      ledger_status: known.status,
      service_status: status,
    };
    if (verdict === "behind") this.found.behind.push(entry);
    else this.found.status_disagreements.push(entry);
  }

  /** A service order no ledger order holds the id of: the campaign's, by its tags or body? */
  private async examine(order: Order): Promise<void> {
    const tags = tagsOf(order.metadata);
    if (tags?.campaign === this.side.campaign) {
      await this.examineTagged(order, tags.key);
      return;
    }
    let alike = false;
    for (const uncertain of this.side.uncertain.values()) {
      if (!couldBe(uncertain.body, order)) continue;
      push(this.evidence.alike, uncertain.number, order);
      alike = true;
    }
    if (alike) return;
    // Orders of several rows carried the campaign's name before tags existed.
    if (order.metadata?.campaign === this.side.campaign)
      this.found.unknown_to_ledger.push(
        serviceEntry(order, "its metadata names the campaign (no key: made before order tags)"),
      );
    else this.outsiders.push(outsiderOf(order));
  }

  private async examineTagged(order: Order, key: string): Promise<void> {
    const owner = await this.side.orderOfKey(key);
    if (!owner) {
      this.found.unknown_to_ledger.push(
        serviceEntry(order, "its metadata names the campaign and a key its ledger does not hold"),
      );
      return;
    }
    const [number, ledgerOrder] = owner;
    const uncertain = this.side.uncertain.get(number);
    if (uncertain && couldBe(uncertain.body, order)) {
      push(this.evidence.made, number, order);
      return;
    }
    // Its key's order but not its body, or an order that holds another id, or none.
    if (uncertain) push(this.evidence.alike, number, order);
    this.found.unknown_to_ledger.push({
      ...serviceEntry(order, "its metadata names an order of the campaign"),
      ledger_order: number,
      ledger_status: ledgerOrder.status,
    });
  }

  /** The rows' lines of every ledger order reported. */
  async addLines(): Promise<void> {
    const { unknown_to_ledger, missing_on_service, status_disagreements } = this.found;
    for (const entry of [...unknown_to_ledger, ...missing_on_service, ...status_disagreements]) {
      if (entry.ledger_order !== undefined) entry.lines = await this.side.lines(entry.ledger_order);
    }
  }
}
