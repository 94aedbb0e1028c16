// docs/operations.md, "PostgreSQL down": PostgreSQL lost in the middle of an import, with the
// journal there. Its connection is terminated (pg_terminate_backend) exactly when the import
// appends its second batch of journal lines, by a trigger of the test's schema: the orders of
// that batch were never journaled and none of them reaches Redis; the import stops in one line,
// exit 1; run again once PostgreSQL is back, it records the rest and every row is paid once.
import { afterEach, describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { databaseAddress } from "../../src/db/database-error.js";
import { type CampaignEnv, campaignEnv, giftjobs, runWorkers } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useTestDatabase } from "../helpers/database.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { eventually } from "../helpers/wait-for.js";

// More than one of the import's batches of 1,000 rows (RECORD_BATCH, src/import/import-recording.ts).
const ROWS = 1200;
const CAMPAIGN = "lost-db";

let env: CampaignEnv | undefined;
let stopWorkers: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stopWorkers?.();
  stopWorkers = undefined;
  await env?.dispose();
  env = undefined;
});

describe("PostgreSQL lost in the middle of an import", () => {
  const db = useTestDatabase("import_db_lost");

  /** Rows and orders the journal holds for the campaign. */
  async function journaled(): Promise<{ orders: number; rows: number }> {
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS orders, coalesce(sum(cardinality(identities)), 0)::int AS rows
         FROM order_journal WHERE campaign = $1`,
      [CAMPAIGN],
    );
    return rows[0];
  }

  it("journals and records the first batch only, exit 1 in one line; the re-run pays each row once", {
    timeout: 240_000,
  }, async () => {
    env = await campaignEnv({ orderRateLimit: 100_000 }, "import-db-lost");
    const e = env;
    expect((await giftjobs(e, ["catalog", "sync"], db.env)).code).toBe(0);
    const { text } = validCsv(e.index, ROWS, "emp");
    const file = await csvFile(e, "orders.csv", text);

    // The outage: the second INSERT into order_journal kills its own connection, as a server
    // stopping would (57P01), before any of its lines is committed.
    const schema = `"${db.schema}"`;
    await db.pool.query(`
      CREATE FUNCTION ${schema}.outage() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM ${schema}.order_journal) THEN
          PERFORM pg_terminate_backend(pg_backend_pid());
          PERFORM pg_sleep(10);
        END IF;
        RETURN NULL;
      END $$`);
    await db.pool.query(
      `CREATE TRIGGER outage BEFORE INSERT ON ${schema}.order_journal
         FOR EACH STATEMENT EXECUTE FUNCTION ${schema}.outage()`,
    );
    // An order a row: the import's first batch of 1,000 rows is 1,000 journal lines, one INSERT.
    const args = ["orders", "import", file, "--campaign", CAMPAIGN, "--yes"];
    const lost = await giftjobs(e, args, db.env);
    expect(lost.code).toBe(1);
    // What reached Redis is exactly what was journaled: the first batch.
    const first = await journaled();
    expect(lost.stderr).toBe(
      `giftjobs: PostgreSQL at ${databaseAddress(db.url)} does not answer or went away during the import (GIFTJOBS_DATABASE_URL): ${first.rows} rows were recorded, each journaled first; run the same import again once it answers to record the rest\n`,
    );
    expect(first.rows).toBeGreaterThan(0);
    expect(first.rows).toBeLessThan(ROWS);
    const recorded = await campaignStatus(e.ledger, CAMPAIGN);
    expect(recorded.total).toBe(first.rows);

    // PostgreSQL back: the same import again records the rest, and the workers pay each once.
    await db.pool.query(`DROP TRIGGER outage ON ${schema}.order_journal`);
    const again = await giftjobs(e, args, db.env);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" });
    const count = (n: number) => n.toLocaleString("en-US");
    expect(again.stdout).toContain(
      `${count(ROWS - first.rows)} new, ${count(first.rows)} already known`,
    );
    expect((await journaled()).rows).toBe(ROWS);

    const workers = await runWorkers(e, { config: { ...e.config, ...db.config } });
    stopWorkers = () => workers.close();
    await eventually(
      async () => (await campaignStatus(e.ledger, CAMPAIGN)).completed === ROWS,
      "every row completed",
      120_000,
    );
    const orders = await sandboxOrders(e.sandbox);
    const keys = new Set(orders.map((o) => o.idempotency_key));
    expect(keys.size).toBe(orders.length);
    expect(orders.flatMap((o) => o.items)).toHaveLength(ROWS);
  });
});
