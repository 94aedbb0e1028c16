import { currencyDecimals, fromUnits } from "../money.js";

/** What a campaign costs in one currency, as decimal strings at the currency's scale. */
export interface CurrencyTotal {
  face_value: string;
  price: string;
  rows: number;
}

/**
 * Sums face values and prices per currency in integer minor units (bigint), so a million rows
 * of 0.1 add up to exactly 100000.00.
 */
export class CampaignTotals {
  private readonly sums = new Map<string, { face: bigint; price: bigint; rows: number }>();

  /**
   * Adds one row, or `rows` rows whose amounts together these are; amounts are minor units at
   * the currency's scale (see preflightRow).
   */
  add(currency: string, faceUnits: bigint, priceUnits: bigint, rows = 1): void {
    const sum = this.sums.get(currency) ?? { face: 0n, price: 0n, rows: 0 };
    sum.face += faceUnits;
    sum.price += priceUnits;
    sum.rows += rows;
    this.sums.set(currency, sum);
  }

  currencies(): string[] {
    return [...this.sums.keys()].sort();
  }

  /** The price total of one currency in minor units; 0 when the campaign has none. */
  priceUnits(currency: string): bigint {
    return this.sums.get(currency)?.price ?? 0n;
  }

  /** `{USD: {face_value: "30.00", price: "29.61", rows: 2}}`, currencies sorted. */
  toJSON(): Record<string, CurrencyTotal> {
    const out: Record<string, CurrencyTotal> = {};
    for (const currency of this.currencies()) {
      const sum = this.sums.get(currency)!;
      const scale = currencyDecimals(currency);
      out[currency] = {
        face_value: fromUnits(sum.face, scale),
        price: fromUnits(sum.price, scale),
        rows: sum.rows,
      };
    }
    return out;
  }
}
