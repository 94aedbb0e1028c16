import type { ExecutionMode } from "../api/order-request.js";
import { UserError } from "../errors/user-error.js";

/** The service takes 1..200 items per async order, exactly 1 per sync order. */
export const MAX_ITEMS_PER_ORDER = 200;

/** One order to place: rows of one currency, by identity (sorted). */
export interface PackedOrder {
  currency: string;
  identities: string[];
}

/**
 * Checks `--items-per-order` against `--execution-mode`; returns the number to pack by.
 * @defaultValue 1
 */
export function checkItemsPerOrder(itemsPerOrder: number | undefined, mode: ExecutionMode): number {
  const n = itemsPerOrder ?? 1;
  if (!Number.isInteger(n) || n < 1 || n > MAX_ITEMS_PER_ORDER) {
    throw new UserError(
      `--items-per-order must be a whole number from 1 to ${MAX_ITEMS_PER_ORDER} (got ${itemsPerOrder})`,
    );
  }
  if (mode === "sync" && n !== 1) {
    throw new UserError(
      `--items-per-order ${n} needs --execution-mode async: a sync order holds exactly one item`,
    );
  }
  return n;
}

/**
 * With one row per order no sorting is needed: each row is its own order, as it streams by.
 * @internal exported for its tests (docs/development.md, "Exports for tests")
 */
export function singleRowOrder(identity: string, currency: string): PackedOrder {
  return { currency, identities: [identity] };
}

/**
 * Packs rows into orders of up to N rows of one currency (and one send_at), deterministically:
 * group by currency and send_at, sort by identity, cut in chunks. A re-import of the same rows rebuilds the same
 * orders whatever the row order, so the orders get the same keys.
 *
 * Cost: every identity is held until `orders()` (about 100 bytes each: ~100 MB for a million
 * rows), since the last row may sort first. Rows the ledger already assigned to an order must
 * not be added: a re-import reuses those assignments, and only new rows are packed; nor rows
 * the campaign's order journal assigned (docs/architecture/keys-and-exactly-once.md, "Lost
 * ledger").
 */
export class OrderPacker {
  /** Rows by what they must share to share an order: currency, and send_at when they have one. */
  private readonly byGroup = new Map<string, { currency: string; identities: string[] }>();

  constructor(private readonly itemsPerOrder: number) {
    if (
      !Number.isInteger(itemsPerOrder) ||
      itemsPerOrder < 1 ||
      itemsPerOrder > MAX_ITEMS_PER_ORDER
    ) {
      throw new RangeError(
        `itemsPerOrder must be 1..${MAX_ITEMS_PER_ORDER} (got ${itemsPerOrder})`,
      );
    }
  }

  /** Rows scheduled for different times never share an order: it is sent at one time. */
  add(identity: string, currency: string, sendAt?: number): void {
    const group = sendAt === undefined ? currency : `${currency} ${sendAt}`;
    const found = this.byGroup.get(group);
    if (found) found.identities.push(identity);
    else this.byGroup.set(group, { currency, identities: [identity] });
  }

  /** The orders, groups in sorted order; each list is sorted in place, once. */
  *orders(): Generator<PackedOrder> {
    for (const group of [...this.byGroup.keys()].sort()) {
      const { currency, identities } = this.byGroup.get(group)!;
      identities.sort();
      for (let start = 0; start < identities.length; start += this.itemsPerOrder) {
        yield { currency, identities: identities.slice(start, start + this.itemsPerOrder) };
      }
    }
  }
}
