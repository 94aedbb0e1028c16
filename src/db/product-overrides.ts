import { ProductUpdateStateSchema } from "../api/product-update-schema.js";
import type { ProductUpdate } from "../api/schemas.js";
import type { CatalogIndex } from "../catalog/index-entry.js";
import {
  applyProductOverrides,
  overrideOf,
  type ProductOverrideMap,
  type ProductOverrideStore,
  type StateRecordResult,
} from "../catalog/product-overrides.js";
import { type Database, queryRows } from "./open-database.js";

/** A row of `product_overrides`. */
interface OverrideRow {
  product_code: string;
  pushed_at_ms: string;
  pushed_timestamp: string;
  state: unknown;
  received_at: Date;
}

/**
 * The newer-only rule in one statement: the update happens only when the held state is older
 * than the message, so two receivers recording one product at once keep the newer message
 * whichever commits last (the row lock orders them). RETURNING says whether it was written.
 */
const RECORD = `
INSERT INTO product_overrides AS held
       (product_code, pushed_at_ms, pushed_timestamp, state, received_at)
VALUES ($1, $2, $3, $4::jsonb, $5)
ON CONFLICT (product_code) DO UPDATE
   SET pushed_at_ms = EXCLUDED.pushed_at_ms,
       pushed_timestamp = EXCLUDED.pushed_timestamp,
       state = EXCLUDED.state,
       received_at = EXCLUDED.received_at
 WHERE held.pushed_at_ms < EXCLUDED.pushed_at_ms
RETURNING 1`;

/**
 * Pushed product states (`product.update`) in PostgreSQL (`product_overrides`, migration
 * 0002_journal_and_overrides.sql), used when GIFTJOBS_DATABASE_URL is set: every machine using
 * the database sees a state once its receiver answered 2xx, whatever its Redis or data dir.
 * See docs/catalog-database.md, "The order journal and product overrides".
 */
export class PgProductOverrides implements ProductOverrideStore {
  constructor(private readonly database: Database) {}

  async record(update: ProductUpdate, receivedAt = new Date()): Promise<StateRecordResult> {
    const value = overrideOf(update, receivedAt);
    const rows = await this.query(RECORD, [
      update.product_code,
      String(value.at),
      value.timestamp,
      JSON.stringify(value.state),
      value.received_at,
    ]);
    return rows.length === 1 ? "applied" : "stale";
  }

  async read(): Promise<ProductOverrideMap> {
    const rows = await this.query<OverrideRow>(
      "SELECT product_code, pushed_at_ms, pushed_timestamp, state, received_at FROM product_overrides",
      [],
    );
    const out: ProductOverrideMap = {};
    for (const row of rows) {
      // Written by record() only; a state edited by hand into another shape is left out.
      const state = ProductUpdateStateSchema.safeParse(row.state);
      if (!state.success) continue;
      out[row.product_code] = {
        at: Number(row.pushed_at_ms),
        timestamp: row.pushed_timestamp,
        state: state.data,
        received_at: row.received_at.toISOString(),
      };
    }
    return out;
  }

  async applyTo(index: CatalogIndex): Promise<CatalogIndex> {
    return applyProductOverrides(index, await this.read());
  }

  private query<R>(text: string, values: unknown[]): Promise<R[]> {
    return queryRows<R>(this.database, text, values);
  }
}
