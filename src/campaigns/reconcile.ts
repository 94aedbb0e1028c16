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
  summaryOf,
  unreadOutsider,
} from "./reconcile-outsiders.js";
import { CampaignPayments, serviceItem } from "./reconcile-payments.js";
import {
  applySettlements,
  type Evidence,
  plannedStatuses,
  planSettlements,
  type UncertainEntry,
} from "./reconcile-settle.js";
import {
  type HeldOrder,
  heldElsewhere,
  heldOrder,
  type OrderSummary,
  type PaidAgainEntry,
  type SiblingOrder,
  SiblingSorter,
  type SiblingsSorted,
} from "./reconcile-siblings.js";
import { listWindow, lookUpOrder } from "./service-orders.js";
import { storedState } from "./state.js";

export type { LookalikeEntry, OtherOrders } from "./reconcile-outsiders.js";

export type { PaidAgainEntry, PaidAgainItem } from "./reconcile-siblings.js";

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
  /** GIFTJOBS_DATA_DIR: an archived campaign's repeat marks are read from its archive. */
  dataDir?: string;
  /**
   * Called with the report as planned, once every comparison is made and before any
   * failed_uncertain order is settled: its audit entry is written there
   * (docs/architecture/audit.md, "An entry before its effect"); an error stops the reconcile
   * with nothing settled.
   */
  beforeSettle?: (planned: ReconcileReport) => Promise<void>;
}

/** Each order of the window in one class, counted (docs/commands.md, "Reconcile"). */
export interface OrderClasses {
  /**
   * The campaign's: its ledger holds the id, its tags or metadata name it, or its body is alike
   * an uncertain order's.
   */
  campaign: number;
  /** Other giftjobs campaigns' orders that are neither suspects nor repeats, per campaign. */
  other_campaigns: Record<string, number>;
  /** Other campaigns' orders paying rows of this one again, recorded with --allow-repeats. */
  repeats: number;
  /** Other campaigns' orders paying rows of this one again, not recorded as repeats. */
  suspects: number;
  /** Untagged orders paying a recipient of the campaign the same card (possible duplicates). */
  lookalikes: number;
  /** Every other order of the account. */
  others: number;
  /** Still PROCESSING, no details shown: not classed yet. */
  unidentified: number;
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
   * Untagged orders of the window whose items pay a recipient of the campaign the same product
   * and face value as a row: possible duplicates, and a disagreement.
   */
  lookalikes: LookalikeEntry[];
  /** Other campaigns' orders paying rows of this one (with their own order) again, unrecorded. */
  suspects: PaidAgainEntry[];
  /** Other campaigns' orders paying rows of this one again knowingly (--allow-repeats). */
  repeats: PaidAgainEntry[];
  classes: OrderClasses;
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
  const unknownIds = new Set([...listing.orders.keys()].filter((id) => !side.byId.has(id)));
  const held = await heldElsewhere(ledger, campaign, { ids: unknownIds, listedAt });
  const run = new Reconciliation(client, side, lookups, options);
  await run.compare(listing.orders, held);
  const deps = {
    ledger,
    client,
    lookups,
    side,
    createdAt: meta.created_at,
    apiKey: options.apiKey,
  };
  const plan = await planSettlements(deps, run.evidence, {
    listedAt,
    minAgeMs: options.minAgeMs ?? 15 * MINUTE,
  });
  await run.addLines();
  // The classes as they will be once the plan is made: no state is read again in between.
  const sorted = await sortOthers(ledger, campaign, run, {
    dataDir: options.dataDir,
    planned: plannedStatuses(plan),
  });
  const planned = withAgreement({
    campaign,
    window: { from: new Date(from).toISOString(), listed_at: listedAt },
    pages: listing.pages,
    service_orders: listing.orders.size,
    requests: lookups.started,
    ...run.found,
    uncertain: plan.map((settlement) => settlement.entry),
    unidentified: run.evidence.unidentified,
    ...sorted,
    agree: false,
  });
  await options.beforeSettle?.(planned);
  const uncertain = await applySettlements(deps, plan);
  return withAgreement({ ...planned, uncertain });
}

/** The report with `agree` said: nothing a person must look at. */
function withAgreement(report: ReconcileReport): ReconcileReport {
  const agree =
    report.unknown_to_ledger.length === 0 &&
    report.missing_on_service.length === 0 &&
    report.status_disagreements.length === 0 &&
    report.lookalikes.length === 0 &&
    report.suspects.length === 0 &&
    report.uncertain.every((entry) => entry.outcome !== "undecided");
  return { ...report, agree };
}

/**
 * Why a reconcile settled less than its plan (its audit entry's), or undefined when it settled
 * all of it: the orders another process moved between the plan and its writes.
 */
export function reconcileShortfall(
  planned: ReconcileReport,
  done: ReconcileReport,
): string | undefined {
  const left = planned.uncertain.filter(
    (entry, i) => entry.outcome !== "undecided" && done.uncertain[i]?.outcome === "undecided",
  );
  if (left.length === 0) return undefined;
  const settling = planned.uncertain.filter((entry) => entry.outcome !== "undecided").length;
  const numbers = left.map((entry) => entry.ledger_order).join(", ");
  return `${left.length} of ${settling} planned settlements not made: the orders changed during the check (ledger orders ${numbers})`;
}

/**
 * The orders of the window not the campaign's, sorted into their classes: other campaigns'
 * (suspects, repeats, the rest per campaign), look-alikes and the rest. The campaign's rows are
 * read once, only when an order is left to compare with them, with the statuses the settlement
 * plan gives its failed_uncertain orders (the plan is made after, and no state is read again).
 */
async function sortOthers(
  ledger: Ledger,
  campaign: string,
  run: Reconciliation,
  { dataDir, planned }: { dataDir: string | undefined; planned: Map<number, RowStatus> },
) {
  const compared =
    run.held.length + run.siblings.length > 0 || run.outsiders.some((o) => o.items.length > 0);
  const payments = compared ? await CampaignPayments.read(ledger, campaign, planned) : undefined;
  let sorted: SiblingsSorted = { siblings: {}, repeats: [], suspects: [] };
  if (payments) {
    const sorter = new SiblingSorter(ledger, payments, dataDir);
    for (const { held, summary } of run.held)
      await sorter.sort(await heldOrder(ledger, held, summary));
    for (const sibling of run.siblings) await sorter.sort(sibling);
    sorted = sorter.sorted;
  }
  const outsiders = sortOutsiders(run.outsiders, payments);
  const classes: OrderClasses = {
    campaign: run.own,
    other_campaigns: sorted.siblings,
    repeats: sorted.repeats.length,
    suspects: sorted.suspects.length,
    lookalikes: outsiders.lookalikes.length,
    others: outsiders.other_orders.count,
    unidentified: run.evidence.unidentified.length,
  };
  return { ...outsiders, suspects: sorted.suspects, repeats: sorted.repeats, classes };
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function serviceEntry(order: ListedOrder | Order, why: string): ServiceOrderEntry {
  const { order_id, status, created_at, currency, total_price } = summaryOf(order);
  return { order_id, status, created_at, currency, total_price, why };
}

/** An order read whose tags name another campaign, with its items as the service shows them. */
function siblingOf(order: Order, campaign: string): SiblingOrder {
  const summary = summaryOf(order);
  const currency = summary.currency ?? undefined;
  return { summary, campaign, items: order.items.map((item) => serviceItem(item, currency)) };
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
  /** The window's untagged orders the campaign does not own (see sortOutsiders). */
  readonly outsiders: Outsider[] = [];
  /** The window's orders another campaign's ledger holds: known without a read. */
  readonly held: { held: HeldOrder; summary: OrderSummary }[] = [];
  /** The window's orders read whose tags name another campaign. */
  readonly siblings: SiblingOrder[] = [];
  /** The window's orders found to be the campaign's. */
  own = 0;
  private done = 0;
  private total = 0;

  constructor(
    private readonly client: ApiClient,
    private readonly side: LedgerSide,
    private readonly lookups: Lookups,
    private readonly options: ReconcileOptions,
  ) {}

  /**
   * Every order of the window, then the ledger's order ids the window did not show. An order is
   * read from the service only when its class depends on what it holds: not one of the
   * campaign's ids, nor one another campaign's ledger holds (`held`), nor of another currency.
   */
  async compare(listed: Map<string, ListedOrder>, held: Map<string, HeldOrder>): Promise<void> {
    const toRead: ListedOrder[] = [];
    for (const order of listed.values()) {
      const known = this.side.byId.get(order.id);
      const elsewhere = held.get(order.id);
      if (known) this.compareOwn(known, order);
      else if (elsewhere) this.held.push({ held: elsewhere, summary: summaryOf(order) });
      else if (order.status === "PROCESSING") this.evidence.unidentified.push(order.id);
      else if (!order.currency || this.side.currencies.has(order.currency)) toRead.push(order);
      // Another currency than any of the campaign's: neither one of its bodies nor alike.
      else this.outsiders.push(unreadOutsider(order));
    }
    const unlisted = [...this.side.byId].filter(([id]) => !listed.has(id));
    this.total = toRead.length + unlisted.length;
    await this.lookups.forEach(toRead, async (listedOrder) => {
      const lookup = await lookUpOrder(this.client, this.lookups, listedOrder.id);
      this.tick();
      if (lookup?.kind === "processing") this.evidence.unidentified.push(listedOrder.id);
      else if (lookup) await this.examine(lookup.order);
      // Listed, then unknown: gone from the service; counted among the others.
      else this.outsiders.push(unreadOutsider(listedOrder));
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

  private compareOwn(
    known: { number: number; status: RowStatus | "superseded" },
    order: ListedOrder,
  ) {
    this.own += 1;
    this.compareKnown(known, order.id, order.status, undefined);
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
      this.own += 1;
      await this.examineTagged(order, tags.key);
      return;
    }
    if (tags) {
      this.siblings.push(siblingOf(order, tags.campaign));
      return;
    }
    if (this.alikeUncertain(order)) {
      this.own += 1;
      return;
    }
    // Orders of several rows carried the campaign's name before tags existed.
    if (order.metadata?.campaign === this.side.campaign) {
      this.own += 1;
      this.found.unknown_to_ledger.push(
        serviceEntry(order, "its metadata names the campaign (no key: made before order tags)"),
      );
    } else this.outsiders.push(outsiderOf(order));
  }

  /** Whether an untagged order could be an uncertain order's (noted as evidence if so). */
  private alikeUncertain(order: Order): boolean {
    let alike = false;
    for (const uncertain of this.side.uncertain.values()) {
      if (!couldBe(uncertain.body, order)) continue;
      push(this.evidence.alike, uncertain.number, order);
      alike = true;
    }
    return alike;
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
