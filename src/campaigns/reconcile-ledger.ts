import type { Ledger } from "../ledger/ledger.js";
import type { RowStatus } from "../ledger/row-status.js";
import type { LedgerOrder } from "../ledger/types.js";
import { type SentBody, sentBody } from "./reconcile-match.js";

/** The end of a key kept to find its order again (keys are hashes: 96 bits tell them apart). */
const KEY_TAIL = 16;

/** A failed_uncertain order of the ledger, with what its body was. */
export interface UncertainOrder {
  number: number;
  order: LedgerOrder;
  body: SentBody;
}

/** What `orders reconcile` needs of a campaign's ledger, read in one pass over its orders. */
export class LedgerSide {
  /** Orders holding a service order id: number and status, by that id. */
  readonly byId = new Map<string, { number: number; status: RowStatus | "superseded" }>();
  /** Order numbers by the end of their key (see orderOfKey). */
  private readonly byKey = new Map<string, number>();
  readonly uncertain = new Map<number, UncertainOrder>();
  readonly currencies = new Set<string>();

  private constructor(
    private readonly ledger: Ledger,
    readonly campaign: string,
  ) {}

  static async read(ledger: Ledger, campaign: string): Promise<LedgerSide> {
    const side = new LedgerSide(ledger, campaign);
    for await (const [number, order] of ledger.orders.all(campaign)) await side.add(number, order);
    return side;
  }

  private async add(number: number, order: LedgerOrder): Promise<void> {
    this.byKey.set(order.key.slice(-KEY_TAIL), number);
    if (order.currency) this.currencies.add(order.currency);
    if (order.order_id) this.byId.set(order.order_id, { number, status: order.status });
    if (order.status === "failed_uncertain" && !order.order_id) {
      const rows = await this.ledger.orders.getRows(this.campaign, order.identities);
      this.uncertain.set(number, { number, order, body: sentBody(order, rows) });
    }
  }

  /** The ledger order sent under `key`, read again (its record now), if the campaign has one. */
  async orderOfKey(key: string): Promise<[number, LedgerOrder] | undefined> {
    const number = this.byKey.get(key.slice(-KEY_TAIL));
    if (number === undefined) return undefined;
    const order = await this.ledger.orders.getOrder(this.campaign, number);
    return order?.key === key ? [number, order] : undefined;
  }

  /** The file lines of an order's rows, sorted. */
  async lines(number: number): Promise<number[]> {
    const order = await this.ledger.orders.getOrder(this.campaign, number);
    if (!order) return [];
    const rows = await this.ledger.orders.getRows(this.campaign, order.identities);
    return rows.flatMap((row) => (row ? [row.line] : [])).sort((a, b) => a - b);
  }
}
