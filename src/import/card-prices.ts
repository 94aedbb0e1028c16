import type { EstimableChoice } from "../api/order-estimate.js";
import type { ProductChoice } from "../api/order-request.js";
import type { OrderRow } from "../orders/order-row.js";
import { productsOf } from "../orders/request.js";
import { CampaignTotals } from "../orders/totals.js";
import type { SpooledRow } from "./row-spool.js";

/**
 * The most distinct cards an import asks the service to price: 100 estimates of 500. A file of
 * more (open denominations, each row its own amount) keeps the catalog snapshot's prices, and
 * the book stops growing there.
 */
const MAX_CARDS = 50_000;

/**
 * One card of a file: the rows that pay the same face value for the same products in the same
 * currency. The service prices it once; its rows cost that many times its price.
 */
export interface Card {
  currency: string;
  /** What the order sends; undefined for a payout selection template (no estimate takes it). */
  products: EstimableChoice | undefined;
  /** The face value as the order sends it (a JSON number), and in minor units. */
  face: number;
  faceUnits: bigint;
  /** The price of one row as pass 1 worked it out (the snapshot's, or the face value). */
  localUnits: bigint;
  /** Valid rows of the file, and the new ones among them (those recorded). */
  rows: number;
  newRows: number;
}

/**
 * A card as text: its currency, its products and its face value in minor units. A choice of
 * several products is the same card whatever order its codes are written in.
 */
export function cardKey(currency: string, products: ProductChoice, faceUnits: bigint): string {
  const what =
    products.type === "SINGLE"
      ? `SINGLE ${products.value}`
      : products.type === "MULTIPLE"
        ? `MULTIPLE ${[...products.values].sort().join(" ")}`
        : `TEMPLATE ${products.template_id}`;
  return `${currency}\n${what}\n${faceUnits}`;
}

/**
 * The distinct cards of an import's valid rows, counted in pass 1, and once the service has
 * priced every one, its price of each: the totals shown, checked against budgets and the
 * balance, and the prices recorded are then the service's (docs/architecture/import.md,
 * "Prices").
 */
export class CardBook {
  private readonly cards = new Map<string, Card>();
  private servicePrices: Map<string, bigint> | undefined;
  /** More distinct cards than `limit`: those past it were not kept. */
  overflow = false;

  constructor(private readonly limit = MAX_CARDS) {}

  /** Counts a valid row of the file; `fresh` when it is new (to be recorded). */
  count(row: OrderRow, currency: string, faceUnits: bigint, priceUnits: bigint, fresh: boolean) {
    const products = productsOf(row);
    const key = cardKey(currency, products, faceUnits);
    let card = this.cards.get(key);
    if (!card) {
      if (this.cards.size >= this.limit) {
        this.overflow = true;
        return;
      }
      card = {
        currency,
        products: products.type === "TEMPLATE" ? undefined : products,
        face: Number(row.face_value),
        faceUnits,
        localUnits: priceUnits,
        rows: 0,
        newRows: 0,
      };
      this.cards.set(key, card);
    }
    card.rows += 1;
    if (fresh) card.newRows += 1;
  }

  get size(): number {
    return this.cards.size;
  }

  /** Every card, with its key. */
  entries(): IterableIterator<[string, Card]> {
    return this.cards.entries();
  }

  /** The service priced every card: `prices` holds one row's price of each, by key. */
  pricedByService(prices: Map<string, bigint>): void {
    for (const key of this.cards.keys())
      if (!prices.has(key)) throw new Error(`the service's prices miss a card (${key})`);
    this.servicePrices = prices;
  }

  /**
   * The totals of every valid row and of the new rows at the service's prices, exactly: a
   * card's price times its rows, in minor units. Undefined until the service priced the cards.
   */
  serviceTotals(): { all: CampaignTotals; fresh: CampaignTotals } | undefined {
    const prices = this.servicePrices;
    if (!prices) return undefined;
    const all = new CampaignTotals();
    const fresh = new CampaignTotals();
    for (const [key, card] of this.cards) {
      const price = prices.get(key)!;
      const add = (totals: CampaignTotals, rows: number) =>
        totals.add(card.currency, card.faceUnits * BigInt(rows), price * BigInt(rows), rows);
      add(all, card.rows);
      if (card.newRows > 0) add(fresh, card.newRows);
    }
    return { all, fresh };
  }

  /**
   * Spooled rows as pass 2 records them: at the service's price of their card, if it gave one.
   * Set in place, not copied a row: the entries are pass 2's own, just read from the spool.
   */
  priced(entries: SpooledRow[]): SpooledRow[] {
    const prices = this.servicePrices;
    if (!prices) return entries;
    for (const entry of entries) {
      const key = cardKey(entry.currency, productsOf(entry.row), BigInt(entry.face));
      const price = prices.get(key);
      // Pass 1 counted every row it spooled: a row of no card would be recorded at a guess.
      if (price === undefined) throw new Error(`line ${entry.row.line}: a spooled row of no card`);
      entry.price = String(price);
    }
    return entries;
  }
}
