import { readFile } from "node:fs/promises";
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { orderJobId } from "../../jobs/orders/job.js";
import { QUEUES } from "../../jobs/registry.js";
import { UserError } from "../../src/errors/user-error.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { ImportRefused } from "../../src/import/import-errors.js";
import type { LedgerRow } from "../../src/ledger/ledger.js";
import { RecordFencedError } from "../../src/ledger/record-errors.js";
import { orderKey } from "../../src/orders/keys.js";
import { Dispatcher } from "../../src/worker/dispatcher.js";
import {
  type CampaignEnv,
  campaignEnv,
  depsOf,
  pendingOrders,
  quietLog,
} from "../helpers/campaign-env.js";
import { csvFile, shuffleLines, validCsv } from "../helpers/csv.js";
import { loseKeys, REDIS_URL } from "../helpers/redis.js";

let env: CampaignEnv | undefined;

afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function setup(label: string): Promise<CampaignEnv> {
  env = await campaignEnv({}, label);
  return env;
}

/** A dispatcher over the env's ledger and queue, for its repair pass. */
function repairerOf(e: CampaignEnv): Dispatcher {
  return new Dispatcher({ ledger: e.ledger, queue: e.queue, log: quietLog, window: 100 });
}

/** A worker without a processor, on a connection of its own, that takes jobs as `fn` asks. */
async function withTaker(e: CampaignEnv, fn: (taker: Worker) => Promise<void>): Promise<void> {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const taker = new Worker(QUEUES.orders, null, { connection, prefix: e.config.prefix });
  try {
    await fn(taker);
  } finally {
    await taker.close();
    await connection.quit();
  }
}

/** Every row of the campaign with its identity. */
async function ledgerRows(e: CampaignEnv, campaign: string): Promise<[string, LedgerRow][]> {
  const rows: [string, LedgerRow][] = [];
  for await (const entry of e.ledger.orders.rows(campaign)) rows.push(entry);
  return rows;
}

describe("re-importing a campaign", () => {
  it("a shuffled copy adds nothing and keeps every key, with and without packing", async () => {
    const e = await setup("shuffle");
    // No references: identities come from content, so only the content may decide the keys.
    const { text } = validCsv(e.index, 57);
    const original = await csvFile(e, "a.csv", text);
    const shuffled = await csvFile(e, "b.csv", shuffleLines(text));
    expect(await readFile(shuffled, "utf8")).not.toBe(text);

    for (const [campaign, itemsPerOrder, orders] of [
      ["single", 1, 57],
      ["packed", 10, 6],
    ] as const) {
      // The same rows in both campaigns: the second pays them again, knowingly.
      const first = await importCampaign(
        { file: original, campaign, itemsPerOrder, allowRepeats: true },
        depsOf(e),
      );
      expect(first).toMatchObject({ enqueued: 57, already_known: 0, orders });
      const idsBefore = await pendingOrders(e, campaign);
      expect(idsBefore).toHaveLength(orders);
      const again = await importCampaign({ file: shuffled, campaign, itemsPerOrder }, depsOf(e));
      expect(again).toMatchObject({ rows: 57, enqueued: 0, already_known: 57, orders: 0 });
      expect(await pendingOrders(e, campaign)).toEqual(idsBefore);
    }
    // Import hands nothing to BullMQ: the dispatcher does, while a campaign runs.
    expect(await e.queue.count()).toBe(0);
  });

  it("identical rows are distinct cards with distinct keys", async () => {
    const e = await setup("twins");
    const row = validCsv(e.index, 1).text.trimEnd().split("\n")[1]!;
    const file = await csvFile(
      e,
      "twins.csv",
      `email,product_code,face_value\n${row}\n${row}\n${row}\n`,
    );
    const result = await importCampaign({ file, campaign: "twins" }, depsOf(e));
    expect(result).toMatchObject({ rows: 3, valid: 3, enqueued: 3, orders: 3 });
    const ids = await pendingOrders(e, "twins");
    expect(new Set(ids).size).toBe(3);
    const rows = await ledgerRows(e, "twins");
    expect(new Set(rows.map(([identity]) => identity)).size).toBe(3);
    expect(new Set(rows.map(([, r]) => r.order))).toEqual(new Set(ids));

    const again = await importCampaign({ file, campaign: "twins" }, depsOf(e));
    expect(again).toMatchObject({ enqueued: 0, already_known: 3 });
    // One more identical row is one more card: only it is new.
    await csvFile(
      e,
      "twins.csv",
      `email,product_code,face_value\n${row}\n${row}\n${row}\n${row}\n`,
    );
    const more = await importCampaign({ file, campaign: "twins", append: true }, depsOf(e));
    expect(more).toMatchObject({ enqueued: 1, already_known: 3 });
  });

  it("a changed row under a known reference is refused, unless its order failed for good", async () => {
    const e = await setup("changed");
    const { text } = validCsv(e.index, 4, "ref");
    const file = await csvFile(e, "a.csv", text);
    await importCampaign({ file, campaign: "chg" }, depsOf(e));
    const before = await ledgerRows(e, "chg");
    const target = before.find(([, r]) => r.reference === "ref-000002")!;
    const [identity, oldRow] = target;

    const changedText = text.replace("recipient-000002@", "changed-000002@");
    const changed = await csvFile(e, "b.csv", changedText);
    const refused = await importCampaign({ file: changed, campaign: "chg" }, depsOf(e)).catch(
      (error) => error,
    );
    expect(refused).toBeInstanceOf(ImportRefused);
    expect(refused.result.errors).toEqual([
      {
        line: 3,
        column: "reference",
        message: expect.stringContaining("row changed since line 3 was imported"),
      },
    ]);
    expect(refused.result.errors[0].message).toContain("status queued");
    // The refused row is an invalid row: not valid, not in the totals.
    const rowsOf = (r: { totals: Record<string, { rows: number }> }) =>
      Object.values(r.totals).reduce((n, t) => n + t.rows, 0);
    expect(refused.result).toMatchObject({ rows: 4, valid: 3, invalid: 1 });
    expect(rowsOf(refused.result)).toBe(3);
    expect((await e.ledger.orders.getRows("chg", [identity]))[0]).toEqual(oldRow);

    // With --skip-invalid the others go on and the conflict is written to the error file.
    const errorFile = `${file}.errors.csv`;
    const skipped = await importCampaign(
      { file: changed, campaign: "chg", skipInvalid: true, errorFile },
      depsOf(e),
    );
    expect(skipped).toMatchObject({
      valid: 3,
      invalid: 1,
      enqueued: 0,
      already_known: 3,
      error_file: errorFile,
    });
    expect(await readFile(errorFile, "utf8")).toContain("row changed since line 3");

    // Only a final failure (nothing was made) lets the changed row go, under a new key.
    const moved = await e.ledger.orders.transition({
      campaign: "chg",
      number: oldRow.order,
      from: ["queued"],
      to: "failed_final",
      patch: { error_type: "validation_error" },
    });
    expect(moved.moved).toBe(true);
    const accepted = await importCampaign({ file: changed, campaign: "chg" }, depsOf(e));
    expect(accepted).toMatchObject({ enqueued: 1, already_known: 3, orders: 1 });
    const [row] = await e.ledger.orders.getRows("chg", [identity]);
    expect(row).toMatchObject({ generation: 1, email: "changed-000002@ref.example.com" });
    expect(row!.order).not.toBe(oldRow.order);
    const oldOrder = await e.ledger.orders.getOrder("chg", oldRow.order);
    expect(oldOrder).toMatchObject({ status: "superseded" });
    expect(await e.ledger.orders.getOrder("chg", row!.order)).toMatchObject({
      status: "queued",
      generation: 1,
      identities: [identity],
      key: orderKey("chg", 1, [identity]),
    });
    expect(oldOrder!.key).toBe(orderKey("chg", 0, [identity]));
    expect(await pendingOrders(e, "chg")).toContain(row!.order);
    const counts = await e.ledger.campaigns.counts("chg");
    expect(counts).toMatchObject({ total: 4, queued: 4, failed_final: 0 });

    // The accepted change is now the recorded content: importing it again adds nothing.
    const again = await importCampaign({ file: changed, campaign: "chg" }, depsOf(e));
    expect(again).toMatchObject({ enqueued: 0, already_known: 4 });
  });

  it("a dispatcher that dies between taking keys and adding their jobs: repair adds them", async () => {
    const e = await setup("crash");
    const { text } = validCsv(e.index, 30);
    const file = await csvFile(e, "a.csv", text);
    await importCampaign({ file, campaign: "crash", itemsPerOrder: 4 }, depsOf(e));
    const ids = await pendingOrders(e, "crash");
    expect(ids).toHaveLength(8);
    // The dispatcher's script moves the keys into the window, then the process dies: no jobs.
    const handed = await e.ledger.dispatch.handOut(100);
    expect(handed.map((h) => h.number).sort((a, b) => a - b)).toEqual(ids);
    expect(await e.queue.count()).toBe(0);
    // One order went through before the crash (a job that did run): it must not come back.
    await e.ledger.orders.transition({
      campaign: "crash",
      number: ids[0]!,
      from: ["queued"],
      to: "completed",
    });

    const dispatcher = repairerOf(e);
    expect(await dispatcher.repair()).toBe(7);
    const jobs = await e.queue.getJobs(["wait", "delayed", "prioritized", "active"]);
    expect(jobs.map((j) => j.id).sort()).toEqual(
      ids
        .slice(1)
        .map((n) => orderJobId("crash", n))
        .sort(),
    );
    // The job names the order; its body is made from what the ledger recorded at import.
    expect(jobs[0]?.data).toEqual({ campaign: "crash", order: Number(jobs[0]?.id?.split(".")[1]) });
    expect(await e.ledger.dispatch.windowOrders("crash")).toHaveLength(7);
    // A second repair finds nothing lost.
    expect(await dispatcher.repair()).toBe(0);
  });

  it("repair re-adds each lost job, a missing one and one BullMQ still holds as failed, beside a live one", async () => {
    const e = await setup("lost-kinds");
    const file = await csvFile(e, "a.csv", validCsv(e.index, 3).text);
    await importCampaign({ file, campaign: "lost" }, depsOf(e));
    await e.ledger.dispatch.handOut(100);
    // Roles in the order repair reads the window, so that the failed job comes after a missing one.
    const numbers = await e.ledger.dispatch.windowOrders("lost");
    const keys = numbers.map((n) => orderJobId("lost", n));
    const [live, missing, failed] = keys as [string, string, string];
    // One job waits as it should; one was never added; one failed for good and is kept.
    const [liveOrder, , failedOrder] = numbers;
    await e.queue.add("order-create", { campaign: "lost", order: liveOrder! }, { jobId: live });
    await e.queue.add("order-create", { campaign: "lost", order: failedOrder! }, { jobId: failed });
    await withTaker(e, async (taker) => {
      const taken = await taker.getNextJob("token");
      expect(taken?.id).toBe(live);
      // Put the live one back: only the second one fails.
      await taken!.moveToDelayed(Date.now(), "token");
      const next = await taker.getNextJob("token");
      expect(next?.id).toBe(failed);
      await next!.moveToFailed(new Error("lost"), "token", false);
    });
    expect(await e.queue.getJobState(failed)).toBe("failed");
    expect(missing).toBeDefined();

    const dispatcher = repairerOf(e);
    expect(await dispatcher.repair()).toBe(2);
    for (const key of keys)
      expect(["waiting", "delayed"]).toContain(await e.queue.getJobState(key));
    expect(await dispatcher.repair()).toBe(0);
  });

  it("repair re-adds a job whose hash outlived its place in the queue (a partial loss)", async () => {
    // Keys that go one by one (an eviction, a flush while workers run) can leave a job's hash
    // in no list: BullMQ would ignore a new job of its id, so repair must take the hash first.
    const e = await setup("orphan");
    const file = await csvFile(e, "a.csv", validCsv(e.index, 1).text);
    await importCampaign({ file, campaign: "orphan" }, depsOf(e));
    const [handed] = await e.ledger.dispatch.handOut(100);
    const number = handed!.number;
    const id = orderJobId("orphan", number);
    await e.queue.add("order-create", { campaign: "orphan", order: number }, { jobId: id });
    await e.redis.del(`${e.config.prefix}:${QUEUES.orders}:wait`);
    expect(await e.queue.getJobState(id)).toBe("unknown");
    expect(await e.redis.exists(`${e.config.prefix}:${QUEUES.orders}:${id}`)).toBe(1);

    const dispatcher = repairerOf(e);
    expect(await dispatcher.repair()).toBe(1);
    expect(await e.queue.getJobState(id)).toBe("waiting");
    expect(await dispatcher.repair()).toBe(0);

    // The same, but a worker holds the job (locked): it is that worker's, neither removed nor
    // counted as repaired.
    await withTaker(e, async (taker) => {
      expect((await taker.getNextJob("token"))?.id).toBe(id);
      await e.redis.del(`${e.config.prefix}:${QUEUES.orders}:active`);
      expect(await e.queue.getJobState(id)).toBe("unknown");
      expect(await dispatcher.repair()).toBe(0);
      expect(await e.redis.exists(`${e.config.prefix}:${QUEUES.orders}:${id}`)).toBe(1);
    });
  });

  it("a new campaign's rows are not looked up; one another import made meanwhile is refused", async () => {
    // Pass 1 of a campaign with no ledger takes every row for new without asking Redis: when
    // another import makes the campaign while this one reads, nothing it decided holds.
    const e = await setup("new-race");
    const { text } = validCsv(e.index, 6);
    const file = await csvFile(e, "a.csv", text);
    const half = await csvFile(
      e,
      "half.csv",
      `${text.trimEnd().split("\n").slice(0, 4).join("\n")}\n`,
    );
    const deps = depsOf(e);
    const stores = deps.stores;
    let lookups = 0;
    const getRows = e.ledger.orders.getRows.bind(e.ledger.orders);
    e.ledger.orders.getRows = (campaign, identities) => {
      lookups += 1;
      return getRows(campaign, identities);
    };
    const racing = {
      ...deps,
      stores: {
        ...stores,
        // Read as pass 1 begins, after the import saw no campaign: the other import runs here.
        productOverrides: (ledger: typeof e.ledger) => {
          const overrides = stores.productOverrides(ledger);
          return {
            ...overrides,
            applyTo: async (catalog: typeof e.index) => {
              await importCampaign({ file: half, campaign: "race" }, depsOf(e));
              return overrides.applyTo(catalog);
            },
          };
        },
      },
    };
    const error = await importCampaign({ file, campaign: "race" }, racing).catch(
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ImportRefused);
    expect((error as Error).message).toBe(
      "campaign race was created by another import while this one read the file; nothing was enqueued: import the file again with --append to add the rows it does not have",
    );
    expect(lookups).toBe(0);
    expect(await e.ledger.campaigns.counts("race")).toMatchObject({ total: 3 });
    // Then the same file again: the campaign exists, its rows are looked up, the rest added.
    const again = await importCampaign({ file, campaign: "race", append: true }, depsOf(e));
    expect(again).toMatchObject({ enqueued: 3, already_known: 3 });
    expect(lookups).toBeGreaterThan(0);
  });

  it("Redis losing its keys while pass 2 records stops the import at RECORD's fence; imported again, each row is recorded once", async () => {
    const e = await setup("fence");
    const rows = 1600; // four batches of pass 2 (500 rows each)
    const file = await csvFile(e, "a.csv", validCsv(e.index, rows).text);
    let lost = false;
    const onProgress = ({ phase, enqueued }: { phase: string; enqueued: number }) => {
      // After the first batch is answered, the next may already be sent: a later one is not.
      if (phase !== "enqueue" || enqueued === 0 || lost) return;
      lost = true;
      void loseKeys(e.redis, e.config.prefix);
    };
    const error = await importCampaign({ file, campaign: "fenced", onProgress }, depsOf(e)).catch(
      (err: unknown) => err,
    );
    expect(lost).toBe(true);
    expect(error).toBeInstanceOf(RecordFencedError);
    expect((error as Error).message).toMatch(
      /^campaign fenced: Redis no longer holds the rows this import recorded .*import the file again/,
    );
    // The rows recorded before the loss are in the journal: the next import rebuilds their orders
    // from it and records the rest, every row once.
    await importCampaign({ file, campaign: "fenced" }, depsOf(e));
    expect((await e.ledger.campaigns.counts("fenced")).total).toBe(rows);
    expect((await ledgerRows(e, "fenced")).length).toBe(rows);
  });

  it("refuses --items-per-order 200 in sync mode before touching anything", async () => {
    const e = await setup("sync");
    const file = await csvFile(e, "a.csv", validCsv(e.index, 2).text);
    const error = await importCampaign(
      { file, campaign: "sync", itemsPerOrder: 200, executionMode: "sync" },
      depsOf(e),
    ).catch((err) => err);
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toContain("needs --execution-mode async");
    expect(await e.ledger.campaigns.exists("sync")).toBe(false);
  });
});
