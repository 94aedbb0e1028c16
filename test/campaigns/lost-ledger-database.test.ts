import { access, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { enqueueOrders } from "../../jobs/orders/enqueue.js";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import type { ImportDeps } from "../../src/import/import-types.js";
import { pickSampleProducts } from "../../src/import/sample-csv.js";
import { journalPath } from "../../src/orders/journal.js";
import { orderKey } from "../../src/orders/keys.js";
import { type CampaignEnv, depsOf, giftjobs } from "../helpers/campaign-env.js";
import { csvFile, validCsv } from "../helpers/csv.js";
import { useTestDatabase } from "../helpers/database.js";
import { cleanPrefix } from "../helpers/redis.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const ROWS = 1000;
const PER_ORDER = 50;
const CAMPAIGN = "lost";

/**
 * docs/architecture/keys-and-exactly-once.md, "Lost ledger", with GIFTJOBS_DATABASE_URL set: the
 * journal is in PostgreSQL, so a campaign whose Redis keys AND data dir are lost is imported
 * again from another data dir and every row is still paid once.
 */
describe("a lost ledger with the journal in PostgreSQL", () => {
  const { setup, work: startWork, stopWorkers } = useCampaignEnv();
  const db = useTestDatabase("lost_ledger");

  /** The env's import deps with the database: the journal goes there. */
  function deps(e: CampaignEnv, dataDir = e.dataDir): ImportDeps {
    return { ...depsOf(e), dataDir, database: db.database };
  }

  /** The campaign: the file's first half, then the whole file with --append. */
  async function twoImports(e: CampaignEnv): Promise<string> {
    const { text } = validCsv(e.index, ROWS, "emp");
    const lines = text.trimEnd().split("\n");
    const half = await csvFile(e, "half.csv", `${lines.slice(0, 1 + ROWS / 2).join("\n")}\n`);
    const whole = await csvFile(e, "whole.csv", text);
    await importCampaign({ file: half, campaign: CAMPAIGN, itemsPerOrder: PER_ORDER }, deps(e));
    await importCampaign(
      { file: whole, campaign: CAMPAIGN, itemsPerOrder: PER_ORDER, append: true },
      deps(e),
    );
    return whole;
  }

  /** In-process workers with the database configured; `perMinute` slows their sending. */
  async function work(e: CampaignEnv, perMinute?: number): Promise<void> {
    await startWork(e, {
      config: {
        ...e.config,
        ...db.config,
        ...(perMinute ? { orderRateLimitPerMinute: perMinute } : {}),
      },
      concurrency: 2,
    });
  }

  async function completed(e: CampaignEnv): Promise<number> {
    return (await campaignStatus(e.ledger, CAMPAIGN)).completed;
  }

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

  /** Each recipient has exactly one item in the sandbox: nothing paid twice, nothing missed. */
  async function expectPaidOnce(e: CampaignEnv): Promise<void> {
    const orders = await sandboxOrders(e.sandbox);
    const items = new Map<string, number>();
    for (const order of orders)
      for (const item of order.items) {
        const email = item.distribution_method.email_address;
        items.set(email, (items.get(email) ?? 0) + 1);
      }
    const twice = [...items.values()].filter((n) => n > 1).length;
    expect({ recipients: items.size, twice }).toEqual({ recipients: ROWS, twice: 0 });
    expect(orders).toHaveLength(ROWS / PER_ORDER);
  }

  it("Redis and the data dir lost at about 60%, the file imported again elsewhere: each row paid once", async () => {
    const e = await setup("lostdb60", { asyncCompleteMs: 20 });
    const whole = await twoImports(e);
    // In the database, not beside the campaign: the data dir holds no journal.
    expect(await journalRows()).toBe(ROWS / PER_ORDER);
    expect(await exists(journalPath(e.dataDir, CAMPAIGN))).toBe(false);
    const file = await readFile(whole, "utf8");

    await work(e, 300);
    await eventually(async () => (await completed(e)) >= ROWS * 0.6, "60% completed", 60_000);
    await stopWorkers();
    expect(await completed(e)).toBeLessThan(ROWS);
    expect((await sandboxOrders(e.sandbox)).length).toBeLessThan(ROWS / PER_ORDER);

    // The machine is gone: its Redis keys and its whole data dir.
    await cleanPrefix(e.redis, e.config.prefix);
    await removeDir(e.dataDir);
    expect(await e.ledger.exists(CAMPAIGN)).toBe(false);

    // Another machine, an empty data dir of its own, the same file.
    const other = await tmpDir("lostdb-other");
    const copy = await csvFile({ ...e, dataDir: other }, "whole.csv", file);
    const again = await importCampaign(
      { file: copy, campaign: CAMPAIGN, itemsPerOrder: PER_ORDER, append: true },
      deps(e, other),
    );
    expect(again).toMatchObject({ enqueued: ROWS, orders: ROWS / PER_ORDER, already_known: 0 });
    // Rebuilt from the journal: nothing appended to it.
    expect(await journalRows()).toBe(ROWS / PER_ORDER);

    await work(e);
    await eventually(async () => (await completed(e)) === ROWS, "every row completed", 60_000);
    await stopWorkers();
    await expectPaidOnce(e);
    expect(await campaignStatus(e.ledger, CAMPAIGN)).toMatchObject({
      state: "done",
      total: ROWS,
      completed: ROWS,
    });
    expect((await campaignStatus(e.ledger, CAMPAIGN)).replayed).toBeGreaterThan(0);
    expect(await exists(journalPath(other, CAMPAIGN))).toBe(false);
  });

  it("refuses rows whose journal order this file does not have whole, naming the table", async () => {
    const e = await setup("lostdb-part");
    const text = await readFile(await twoImports(e), "utf8");
    await cleanPrefix(e.redis, e.config.prefix);
    await removeDir(e.dataDir);
    const other = await tmpDir("lostdb-part-other");
    const cut = await csvFile(
      { ...e, dataDir: other },
      "cut.csv",
      `${text.trimEnd().split("\n").slice(0, -1).join("\n")}\n`,
    );
    const error = await importCampaign(
      { file: cut, campaign: CAMPAIGN, itemsPerOrder: PER_ORDER },
      deps(e, other),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ImportRefused);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^49 rows of this file were recorded in 1 order of campaign lost \\(table ${db.schema}\\.order_journal of PostgreSQL, campaign lost\\) together with 1 row this import does not have`,
      ),
    );
    expect(await e.ledger.exists(CAMPAIGN)).toBe(false);
  });

  it("a worker's move to the next generation and retry --new-key are journaled there first", async () => {
    const e = await setup("lostdb-gen");
    const product = pickSampleProducts(e.index, 1)[0]!;
    const face =
      product.denominations?.type === "fixed"
        ? product.denominations.list[0]!
        : (product.denominations as { min: string }).min;
    // One order of three rows, one of them refused by the service (its e-mail): the worker
    // moves the other two to generation 1 after the 422 (jobs/orders/failures.ts).
    const identities = ["id-a", "id-b", "id-c"];
    const emails = ["a@example.com", "not an email", "c@example.com"];
    await e.ledger.register(CAMPAIGN, { execution_mode: "async" });
    await e.ledger.record(CAMPAIGN, [
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
    await work(e);
    await eventually(async () => (await completed(e)) === 2, "the two good rows completed");
    await stopWorkers();
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
      dataDir: e.dataDir,
      database: db.database,
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
    const e = await setup("lostdb-cli");
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
    const e = await setup("lostdb-files");
    const { text } = validCsv(e.index, 10, "emp");
    const file = await csvFile(e, "ten.csv", text);
    await importCampaign({ file, campaign: CAMPAIGN, itemsPerOrder: 5 }, depsOf(e));
    const lines = (await readFile(journalPath(e.dataDir, CAMPAIGN), "utf8")).trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(await journalRows()).toBe(0);
  });
});
