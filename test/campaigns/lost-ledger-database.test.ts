import { access, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { enqueueOrders } from "../../jobs/orders/enqueue.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { pickSampleProducts } from "../../src/import/sample-csv.js";
import { journalPath } from "../../src/orders/journal.js";
import { orderKey } from "../../src/orders/keys.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useTestDatabase } from "../helpers/database.js";
import { CAMPAIGN, PER_ORDER, ROWS, useLostLedger } from "../helpers/lost-ledger.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";
import { eventually } from "../helpers/wait-for.js";

/**
 * docs/architecture/keys-and-exactly-once.md, "Lost ledger", with GIFTJOBS_DATABASE_URL set: the
 * journal is in PostgreSQL, so a campaign whose Redis keys AND data dir are lost is imported
 * again from another data dir and every row is still paid once.
 */
describe("a lost ledger with the journal in PostgreSQL", () => {
  const db = useTestDatabase("lost_ledger");
  const lost = useLostLedger(db);

  async function journalRows(): Promise<number> {
    const { rows } = await db.pool.query(
      "SELECT count(*)::int AS n FROM order_journal WHERE campaign = $1",
      [CAMPAIGN],
    );
    return rows[0].n;
  }

  async function exists(path: string): Promise<boolean> {
    return access(path).then(
      () => true,
      () => false,
    );
  }

  it("Redis and the data dir lost at about 60%, the file imported again elsewhere: each row paid once", async () => {
    const e = await lost.setup("lostdb60", { asyncCompleteMs: 20 });
    const whole = await lost.twoImports(e);
    // In the database, not beside the campaign: the data dir holds no journal.
    expect(await journalRows()).toBe(ROWS / PER_ORDER);
    expect(await exists(journalPath(e.dataDir, CAMPAIGN))).toBe(false);
    const file = await readFile(whole, "utf8");
    await lost.payAboutSixtyPercent(e);

    // The machine is gone: its Redis keys and its whole data dir.
    await lost.loseRedis(e);
    await removeDir(e.dataDir);

    // Another machine, an empty data dir of its own, the same file.
    const other = await tmpDir("lostdb-other");
    const copy = await csvFile({ ...e, dataDir: other }, "whole.csv", file);
    await lost.reimport(e, copy, other);
    // Rebuilt from the journal: nothing appended to it.
    expect(await journalRows()).toBe(ROWS / PER_ORDER);

    await lost.runToEnd(e);
    await lost.expectPaidOnce(e);
    expect(await campaignStatus(e.ledger, CAMPAIGN)).toMatchObject({
      state: "done",
      total: ROWS,
      completed: ROWS,
    });
    expect((await campaignStatus(e.ledger, CAMPAIGN)).replayed).toBeGreaterThan(0);
    expect(await exists(journalPath(other, CAMPAIGN))).toBe(false);
  });

  it("refuses rows whose journal order this file does not have whole, naming the table", async () => {
    const e = await lost.setup("lostdb-part");
    const text = await readFile(await lost.twoImports(e), "utf8");
    await lost.loseRedis(e);
    await removeDir(e.dataDir);
    const other = await tmpDir("lostdb-part-other");
    const refusal = await lost.importWithoutLastRow(e, text, other);
    expect(refusal).toMatch(
      new RegExp(
        `^49 rows of this file were recorded in 1 order of campaign lost \\(table ${db.schema}\\.order_journal of PostgreSQL, campaign lost\\) together with 1 row this import does not have`,
      ),
    );
  });

  it("a worker's move to the next generation and retry --new-key are journaled there first", async () => {
    const e = await lost.setup("lostdb-gen");
    const product = pickSampleProducts(e.index, 1)[0]!;
    const face =
      product.denominations?.type === "fixed"
        ? product.denominations.list[0]!
        : (product.denominations as { min: string }).min;
    // One order of three rows, one of them refused by the service (its e-mail): the worker
    // moves the other two to generation 1 after the 422 (jobs/orders/failures.ts).
    const identities = ["id-a", "id-b", "id-c"];
    const emails = ["a@example.com", "not an email", "c@example.com"];
    await e.ledger.campaigns.register(CAMPAIGN, { execution_mode: "async" });
    await e.ledger.orders.record(CAMPAIGN, [
      {
        order: {
          key: orderKey(CAMPAIGN, 0, identities),
          identities,
          generation: 0,
          status: "queued",
          currency: product.currency,
          metadata: { campaign: CAMPAIGN },
        },
        rows: identities.map((id, i) => [
          id,
          {
            line: i + 2,
            generation: 0,
            payload_hash: id,
            email: emails[i]!,
            product_code: product.code,
            face_value: face,
            currency: product.currency,
          },
        ]),
      },
    ]);
    await enqueueOrders(e.queue, [{ campaign: CAMPAIGN, order: 1, executionMode: "async" }]);
    await lost.work(e);
    await eventually(async () => (await lost.completed(e)) === 2, "the two good rows completed");
    await lost.stopWorkers();
    const journal = async () =>
      (
        await db.pool.query(
          "SELECT generation, order_key, identities FROM order_journal WHERE campaign = $1 ORDER BY seq",
          [CAMPAIGN],
        )
      ).rows;
    expect(await journal()).toEqual([
      {
        generation: 1,
        order_key: orderKey(CAMPAIGN, 1, ["id-a", "id-c"]),
        identities: ["id-a", "id-c"],
      },
    ]);

    // The refused row, moved on by `orders retry --new-key`: journaled before the ledger has it.
    const retried = await retryCampaign(e.ledger, CAMPAIGN, {
      newKey: true,
      stores: pgStores(e.dataDir, db.database),
    });
    expect(retried).toMatchObject({ orders: 1, rows: 1 });
    expect((await journal()).at(-1)).toEqual({
      generation: 1,
      order_key: orderKey(CAMPAIGN, 1, ["id-b"]),
      identities: ["id-b"],
    });
    expect(await exists(journalPath(e.dataDir, CAMPAIGN))).toBe(false);
  });

  it("giftjobs orders import and orders retry --new-key journal in the database when it is set", {
    timeout: 180_000,
  }, async () => {
    const e = await lost.setup("lostdb-cli");
    const { text } = validCsv(e.index, 10, "emp");
    const file = await csvFile(e, "ten.csv", text);
    // With the setting, the import reads the catalog there too.
    expect((await giftjobs(e, ["catalog", "sync"], db.env)).code).toBe(0);
    const run = await giftjobs(
      e,
      ["orders", "import", file, "--campaign", CAMPAIGN, "--items-per-order", "5", "--yes"],
      db.env,
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(await journalRows()).toBe(2);
    expect(await exists(journalPath(e.dataDir, CAMPAIGN))).toBe(false);
    const { rows } = await db.pool.query("SELECT campaign FROM order_tags_marker");
    expect(rows).toEqual([{ campaign: CAMPAIGN }]);
    // Nothing failed_final: --new-key moves nothing, and journals nothing.
    const retry = await giftjobs(
      e,
      ["orders", "retry", "--campaign", CAMPAIGN, "--new-key"],
      db.env,
    );
    expect(retry.code).toBe(0);
    expect(await journalRows()).toBe(2);
  });

  it("without the database the journal stays the data dir's file", async () => {
    const e = await lost.setup("lostdb-files");
    const { text } = validCsv(e.index, 10, "emp");
    const file = await csvFile(e, "ten.csv", text);
    await importCampaign({ file, campaign: CAMPAIGN, itemsPerOrder: 5 }, depsOf(e));
    const lines = (await readFile(journalPath(e.dataDir, CAMPAIGN), "utf8")).trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(await journalRows()).toBe(0);
  });
});
