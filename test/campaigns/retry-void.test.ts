import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { retryCampaign } from "../../src/campaigns/retry.js";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import type { ImportDeps } from "../../src/import/import-types.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import type { Ledger } from "../../src/ledger/ledger.js";
import type { LedgerOrders } from "../../src/ledger/orders.js";
import type { LedgerOrder } from "../../src/ledger/types.js";
import { journalPath } from "../../src/orders/journal.js";
import { orderKey } from "../../src/orders/keys.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS } from "../helpers/campaign-env.js";
import { useTestDatabase } from "../helpers/database.js";
import { cleanPrefix } from "../helpers/redis.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

const CAMPAIGN = "void";
const ONE_ATTEMPT = { attempts: 1, backoff: { type: "fixed", delay: 10 } };

/**
 * `orders retry --new-key --include-uncertain` journals the move to the next generation, then REKEY refuses
 * it: the order was settled meanwhile (as `orders reconcile` settles one it finds made under its
 * key). The line is voided, so a re-import after a lost ledger rebuilds the order under the key
 * the service made it with, and the service replays it: one order, not two
 * (docs/architecture/keys-and-exactly-once.md, "One key while an order may exist").
 */
describe("a generation change REKEY refused is voided in the journal", () => {
  const envs = useCampaignEnv();
  const db = useTestDatabase("retry_void");

  /** One row, sync; the service makes its order then answers 500: failed_uncertain, made. */
  async function madeButUncertain(env: CampaignEnv, deps: ImportDeps) {
    const file = join(env.dataDir, "one.csv");
    await writeFile(file, sampleCsv(env.index, { rows: 1, products: 1 }));
    const options = {
      file,
      campaign: CAMPAIGN,
      executionMode: "sync" as const,
      jobOptions: ONE_ATTEMPT,
    };
    await importCampaign(options, deps);
    await envs.work(env, { concurrency: 1, timings: FAST_TIMINGS });
    await eventually(
      async () => (await campaignStatus(env.ledger, CAMPAIGN)).failed_uncertain === 1,
      "failed_uncertain",
    );
    await envs.stopWorkers();
    env.sandbox.setFaults({ failAfterRate: 0 });
    const made = await sandboxOrders(env.sandbox);
    expect(made).toHaveLength(1);
    const [number, order] = (await orders(env))[0]!;
    expect(order).toMatchObject({ status: "failed_uncertain", generation: 0 });
    return { options, number, order, made: made[0]! };
  }

  async function orders(env: CampaignEnv): Promise<[number, LedgerOrder][]> {
    const all: [number, LedgerOrder][] = [];
    for await (const entry of env.ledger.orders.all(CAMPAIGN)) all.push(entry);
    return all;
  }

  /** What `orders reconcile` does to a failed_uncertain order it finds made under its key. */
  async function settle(env: CampaignEnv, number: number, orderId: string) {
    const moved = await env.ledger.orders.transition({
      campaign: CAMPAIGN,
      number,
      from: ["failed_uncertain"],
      to: "completed",
      patch: { order_id: orderId },
      clearance: "answered",
    });
    expect(moved.moved).toBe(true);
  }

  /** Redis lost, the file imported again, sent: the service replays the one order it made. */
  async function lostAndImportedAgain(
    env: CampaignEnv,
    options: Parameters<typeof importCampaign>[0],
    deps: ImportDeps,
    key: string,
  ) {
    await cleanPrefix(env.redis, env.config.prefix);
    await importCampaign(options, deps);
    const rebuilt = await orders(env);
    expect(rebuilt.map(([, o]) => [o.key, o.generation])).toEqual([[key, 0]]);
    await envs.work(env, { concurrency: 1, timings: FAST_TIMINGS });
    await eventually(
      async () => (await campaignStatus(env.ledger, CAMPAIGN)).completed === 1,
      "completed after the re-import",
    );
    expect(await campaignStatus(env.ledger, CAMPAIGN)).toMatchObject({ replayed: 1 });
    expect(await sandboxOrders(env.sandbox)).toHaveLength(1);
  }

  it("in the file journal: REKEY refused after the line (the order settled meanwhile)", async () => {
    const env = await envs.setup("void-file", { failAfterRate: 1 });
    const { options, number, order, made } = await madeButUncertain(env, depsOf(env));
    // The settle lands between the journal line and REKEY: rekey is the one function wrapped,
    // the ledger under it is Redis's.
    const orders = Object.create(env.ledger.orders) as LedgerOrders;
    orders.rekey = async (...args: Parameters<LedgerOrders["rekey"]>) => {
      await settle(env, number, made.id);
      return env.ledger.orders.rekey(...args);
    };
    const racing = Object.assign(Object.create(env.ledger) as Ledger, { orders });
    const retried = await retryCampaign(racing, CAMPAIGN, {
      newKey: true,
      includeUncertain: true,
      stores: fileStores(env.dataDir),
      apiKey: env.client.keyFingerprint,
    });
    expect(retried).toMatchObject({ orders: 0, rows: 0 });
    const next = orderKey(CAMPAIGN, 1, order.identities);
    const lines = (await readFile(journalPath(env.dataDir, CAMPAIGN), "utf8"))
      .trimEnd()
      .split("\n")
      .map((text) => JSON.parse(text));
    expect(lines.map((l) => [l.g, l.k, l.void ?? false])).toEqual([
      [0, order.key, false],
      [1, next, false],
      [1, next, true],
    ]);
    await lostAndImportedAgain(env, options, depsOf(env), order.key);
  });

  it("in PostgreSQL: the order settled while the line waits to be written; its row deleted", {
    timeout: 120_000,
  }, async () => {
    const env = await envs.setup("void-db", { failAfterRate: 1 });
    const deps = { ...depsOf(env), stores: pgStores(env.dataDir, db.database) };
    const { options, number, order, made } = await madeButUncertain(env, deps);
    const journalKeys = async () =>
      (
        await db.pool.query(
          "SELECT generation, order_key FROM order_journal WHERE campaign = $1 ORDER BY seq",
          [CAMPAIGN],
        )
      ).rows;
    expect(await journalKeys()).toEqual([{ generation: 0, order_key: order.key }]);

    // Nothing stubbed: the journal's INSERT waits on a lock this test holds, the order is
    // settled meanwhile, then the INSERT lands and REKEY, run after it, refuses.
    const locker = await db.pool.connect();
    let retrying: ReturnType<typeof retryCampaign> | undefined;
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE order_journal IN EXCLUSIVE MODE");
      retrying = retryCampaign(env.ledger, CAMPAIGN, {
        newKey: true,
        includeUncertain: true,
        stores: pgStores(env.dataDir, db.database),
        apiKey: env.client.keyFingerprint,
      });
      await eventually(async () => {
        const { rows } = await db.pool.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO order_journal%'`,
        );
        return rows[0].n === 1;
      }, "the journal line waiting");
      await settle(env, number, made.id);
    } finally {
      await locker.query("COMMIT");
      locker.release();
    }
    expect(await retrying).toMatchObject({ orders: 0, rows: 0 });
    expect(await journalKeys()).toEqual([{ generation: 0, order_key: order.key }]);

    // The data dir lost too: the re-import reads the journal in the database alone.
    const elsewhere = await tmpDir("void-elsewhere");
    try {
      await lostAndImportedAgain(
        env,
        options,
        { ...deps, stores: pgStores(elsewhere, db.database) },
        order.key,
      );
    } finally {
      await removeDir(elsewhere);
    }
  });
});
