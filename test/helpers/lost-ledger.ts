// The campaign of docs/architecture/keys-and-exactly-once.md, "Lost ledger", as both lost-ledger
// suites build it (test/campaigns/lost-ledger*.test.ts): 1,000 rows packed 50 to an order over
// two imports, its Redis keys lost, the file imported again, and each row paid once.
import { expect } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import type { ImportDeps } from "../../src/import/import-types.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { type CampaignEnv, depsOf } from "./campaign-env.js";
import { csvFile, validCsv } from "./csv.js";
import type { TestDatabase } from "./database.js";
import { loseKeys } from "./redis.js";
import { sandboxOrders } from "./sandbox.js";
import { useCampaignEnv } from "./use-campaign-env.js";
import { eventually } from "./wait-for.js";

export const ROWS = 1000;
export const PER_ORDER = 50;
export const CAMPAIGN = "lost";

/**
 * useCampaignEnv and the steps of a lost ledger on its env. With `db` (useTestDatabase's), the
 * order journal is in PostgreSQL: the imports and the workers are given that database.
 */
export function useLostLedger(db?: TestDatabase) {
  const { setup, work: startWork, stopWorkers } = useCampaignEnv();

  /** The env's import deps, `db`'s database with them, the data dir `dataDir`. */
  function deps(e: CampaignEnv, dataDir = e.dataDir): ImportDeps {
    return { ...depsOf(e), stores: db ? pgStores(dataDir, db.database) : fileStores(dataDir) };
  }

  /** The campaign: the file's first half, then the whole file with --append. */
  async function twoImports(e: CampaignEnv): Promise<string> {
    const { text } = validCsv(e.index, ROWS, "emp");
    const lines = text.trimEnd().split("\n");
    const half = await csvFile(e, "half.csv", `${lines.slice(0, 1 + ROWS / 2).join("\n")}\n`);
    const whole = await csvFile(e, "whole.csv", text);
    const first = await importCampaign(
      { file: half, campaign: CAMPAIGN, itemsPerOrder: PER_ORDER },
      deps(e),
    );
    expect(first).toMatchObject({ enqueued: ROWS / 2, orders: ROWS / 2 / PER_ORDER });
    const second = await importCampaign(
      { file: whole, campaign: CAMPAIGN, itemsPerOrder: PER_ORDER, append: true },
      deps(e),
    );
    expect(second).toMatchObject({ enqueued: ROWS / 2, already_known: ROWS / 2 });
    return whole;
  }

  /** In-process workers (with `db`'s settings); `perMinute` slows their sending. */
  async function work(e: CampaignEnv, perMinute?: number): Promise<void> {
    await startWork(e, {
      config: {
        ...e.config,
        ...db?.config,
        ...(perMinute ? { orderRateLimitPerMinute: perMinute } : {}),
      },
      concurrency: 2,
    });
  }

  async function completed(e: CampaignEnv): Promise<number> {
    return (await campaignStatus(e.ledger, CAMPAIGN)).completed;
  }

  /**
   * Workers at about 5 orders a second, stopped once 60% of the rows completed: the loss that
   * follows finds orders paid, orders sent, and orders never sent. Answers the rows completed.
   */
  async function payAboutSixtyPercent(e: CampaignEnv): Promise<number> {
    await work(e, 300);
    await eventually(async () => (await completed(e)) >= ROWS * 0.6, "60% completed", 60_000);
    await stopWorkers();
    const paid = await completed(e);
    expect(paid).toBeLessThan(ROWS);
    expect((await sandboxOrders(e.sandbox)).length).toBeLessThan(ROWS / PER_ORDER);
    return paid;
  }

  /** Every key under the test's prefix goes at once, the ledger and BullMQ's queue both. */
  async function loseRedis(e: CampaignEnv): Promise<void> {
    await loseKeys(e.redis, e.config.prefix);
    expect(await e.ledger.campaigns.exists(CAMPAIGN)).toBe(false);
  }

  /** The whole file again, into the new ledger (from `dataDir`): every row is new to it. */
  async function reimport(e: CampaignEnv, file: string, dataDir = e.dataDir): Promise<void> {
    const again = await importCampaign(
      { file, campaign: CAMPAIGN, itemsPerOrder: PER_ORDER, append: true },
      deps(e, dataDir),
    );
    expect(again).toMatchObject({ enqueued: ROWS, orders: ROWS / PER_ORDER, already_known: 0 });
  }

  /**
   * The file's `text` without its last row, imported after the loss (into `dataDir`): refused,
   * since that row's order of 50 cannot be rebuilt, and nothing written. Answers the refusal.
   */
  async function importWithoutLastRow(
    e: CampaignEnv,
    text: string,
    dataDir = e.dataDir,
  ): Promise<string> {
    const cut = await csvFile(
      { ...e, dataDir },
      "cut.csv",
      `${text.trimEnd().split("\n").slice(0, -1).join("\n")}\n`,
    );
    const error = await importCampaign(
      { file: cut, campaign: CAMPAIGN, itemsPerOrder: PER_ORDER },
      deps(e, dataDir),
    ).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ImportRefused);
    expect(await e.ledger.campaigns.exists(CAMPAIGN)).toBe(false);
    return (error as Error).message;
  }

  async function runToEnd(e: CampaignEnv): Promise<void> {
    await work(e);
    await eventually(async () => (await completed(e)) === ROWS, "every row completed", 60_000);
    await stopWorkers();
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

  return {
    setup,
    stopWorkers,
    deps,
    twoImports,
    work,
    completed,
    payAboutSixtyPercent,
    loseRedis,
    reimport,
    importWithoutLastRow,
    runToEnd,
    expectPaidOnce,
  };
}
