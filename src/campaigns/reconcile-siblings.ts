import { join } from "node:path";
import type { Ledger } from "../ledger/ledger.js";
import type { LedgerOrder, RepeatOf } from "../ledger/types.js";
import { ARCHIVE_FILES, archiveDir, readLedgerFile, readManifest } from "./archive-files.js";
import {
  type CampaignPayments,
  type ItemShown,
  marksName,
  type PaidItem,
  type RowPaid,
  rowItem,
  rowPayment,
} from "./reconcile-payments.js";
import { storedState } from "./state.js";

/** Rows of the campaign shown per item of a suspect or repeat order. */
const ROWS_SHOWN = 20;

/** What an order of the service is, as the list shows it. */
export interface OrderSummary {
  order_id: string;
  status: string;
  created_at: string | null;
  currency: string | null;
  total_price: string | null;
}

/** An order another giftjobs campaign made: its ledger holds its id, or its tags name it. */
export interface SiblingOrder {
  summary: OrderSummary;
  campaign: string;
  items: PaidItem[];
}

/** An item of another campaign's order that pays one of the campaign's rows again. */
export interface PaidAgainItem extends ItemShown {
  /** How many of the campaign's rows it pays again; `rows` the first 20 by line. */
  rows_count: number;
  rows: RowPaid[];
}

/** A suspect or deliberate repeat: another campaign's order paying rows of this one again. */
export interface PaidAgainEntry extends OrderSummary {
  campaign: string;
  items: PaidAgainItem[];
}

/** Another giftjobs campaign's order held in a ledger of this Redis. */
export interface HeldOrder {
  campaign: string;
  number: number;
  order: LedgerOrder;
}

/**
 * The ledgers of this Redis that hold the order ids of `ids` (the window's orders this campaign
 * does not hold): another campaign's order is then known without reading it from the service.
 * Campaigns created after the listing began made none of them.
 */
export async function heldElsewhere(
  ledger: Ledger,
  campaign: string,
  window: { ids: Set<string>; listedAt: string },
): Promise<Map<string, HeldOrder>> {
  const held = new Map<string, HeldOrder>();
  if (window.ids.size === 0) return held;
  for (const name of await ledger.campaigns.names()) {
    if (name === campaign) continue;
    const meta = await ledger.campaigns.meta(name);
    if (meta.created_at && meta.created_at > window.listedAt) continue;
    // An archived campaign's orders are no longer in Redis.
    if (storedState(meta) === "archived") continue;
    for await (const [number, order] of ledger.orders.all(name))
      if (order.order_id && window.ids.has(order.order_id))
        held.set(order.order_id, { campaign: name, number, order });
    if (held.size === window.ids.size) break;
  }
  return held;
}

/** A held order with its items, made from its campaign's rows (its body was made of them). */
export async function heldOrder(
  ledger: Ledger,
  { campaign, order }: HeldOrder,
  summary: OrderSummary,
): Promise<SiblingOrder> {
  const rows = await ledger.orders.getRows(campaign, order.identities);
  return { summary, campaign, items: rows.flatMap((row) => (row ? [rowItem(row)] : [])) };
}

/** What the other campaigns' orders of the window came to. */
export interface SiblingsSorted {
  /** Orders per campaign that pay none of this campaign's paid rows again. */
  siblings: Record<string, number>;
  repeats: PaidAgainEntry[];
  suspects: PaidAgainEntry[];
}

/**
 * Sorts other campaigns' orders (docs/architecture/keys-and-exactly-once.md, "Reconciling with
 * the service"): one that pays a row of this campaign with its own order again (same payee,
 * product, face value and currency) is a deliberate repeat when the repeat was recorded
 * (`--allow-repeats`: the row's marks name the other campaign, or the other row's name this
 * one), else a suspect. A FAILED order paid nothing.
 */
export class SiblingSorter {
  private readonly marks = new Map<string, Map<string, RepeatOf[]>>();
  readonly sorted: SiblingsSorted = { siblings: {}, repeats: [], suspects: [] };

  constructor(
    private readonly ledger: Ledger,
    private readonly payments: CampaignPayments,
    private readonly dataDir: string | undefined,
  ) {}

  async sort(order: SiblingOrder): Promise<void> {
    const paidAgain = order.summary.status === "FAILED" ? [] : this.paidAgain(order);
    if (paidAgain.length === 0) {
      const { siblings } = this.sorted;
      siblings[order.campaign] = (siblings[order.campaign] ?? 0) + 1;
      return;
    }
    let knowingly = true;
    for (const { item, rows } of paidAgain)
      if (!(await this.recorded(order.campaign, item, rows))) knowingly = false;
    const entry: PaidAgainEntry = {
      ...order.summary,
      campaign: order.campaign,
      items: paidAgain.map(({ item, rows }) => ({
        ...item.shown,
        rows_count: rows.length,
        rows: rows.slice(0, ROWS_SHOWN).map(({ line, status }) => ({ line, status })),
      })),
    };
    (knowingly ? this.sorted.repeats : this.sorted.suspects).push(entry);
  }

  private paidAgain(order: SiblingOrder) {
    return order.items.flatMap((item) => {
      const rows = this.payments.rows(item.payment, true);
      return rows.length > 0 ? [{ item, rows }] : [];
    });
  }

  /** Whether paying `rows` again by `item` of `other`'s order was recorded as a repeat. */
  private async recorded(
    other: string,
    item: PaidItem,
    rows: { marks: RepeatOf | undefined }[],
  ): Promise<boolean> {
    if (rows.some((row) => marksName(row.marks, other))) return true;
    const campaign = this.payments.campaign;
    if (item.ledgerMarks !== undefined) return marksName(item.ledgerMarks ?? undefined, campaign);
    const theirs = (await this.marksOf(other)).get(item.payment as string) ?? [];
    return theirs.some((marks) => marksName(marks, campaign));
  }

  /** Whether the campaign's rows are in Redis: it exists and is not archived. */
  private async inRedis(campaign: string): Promise<boolean> {
    if (!(await this.ledger.campaigns.exists(campaign))) return false;
    return storedState(await this.ledger.campaigns.meta(campaign)) !== "archived";
  }

  /** The repeat marks of `campaign`'s rows by payment: its ledger's, else its archive's. */
  private async marksOf(campaign: string): Promise<Map<string, RepeatOf[]>> {
    let found = this.marks.get(campaign);
    if (found) return found;
    found = new Map();
    const add = (map: Map<string, RepeatOf[]>, row: Parameters<typeof rowPayment>[0]) => {
      const payment = rowPayment(row);
      if (payment !== undefined && row.repeat_of)
        map.set(payment, [...(map.get(payment) ?? []), row.repeat_of]);
    };
    if (await this.inRedis(campaign)) {
      for await (const [, row] of this.ledger.orders.rows(campaign)) add(found, row);
    } else if (this.dataDir !== undefined) {
      const dir = archiveDir(this.dataDir, campaign);
      const map = found;
      if (await readManifest(dir))
        await readLedgerFile(join(dir, ARCHIVE_FILES.ledger), campaign, (line) => {
          if (line.type === "row") add(map, line.row);
        });
    }
    this.marks.set(campaign, found);
    return found;
  }
}
