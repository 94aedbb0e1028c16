import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { campaignStatus } from "../../src/campaigns/status.js";
import { importCampaign } from "../../src/import/import-campaign.js";
import { sampleCsv } from "../../src/import/sample-csv.js";
import type { LedgerOrder } from "../../src/ledger/ledger.js";
import { type CampaignEnv, depsOf, FAST_TIMINGS } from "../helpers/campaign-env.js";
import { freePort } from "../helpers/free-port.js";
import { sandboxOrders } from "../helpers/sandbox.js";
import { tcpProxy } from "../helpers/tcp-proxy.js";
import { useCampaignEnv } from "../helpers/use-campaign-env.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

/** The campaign's orders by number (superseded ones too: a new key would show there). */
async function ordersOf(env: CampaignEnv, campaign: string): Promise<Map<number, LedgerOrder>> {
  const all = new Map<number, LedgerOrder>();
  for await (const [number, order] of env.ledger.orders.all(campaign))
    all.set(Number(number), order);
  return all;
}

/**
 * docs/architecture/sending-orders.md, "Service outages": against the sandbox over HTTP, reached
 * through a TCP proxy that plays the service going away (closed: connections refused) and coming
 * back on the same address with its orders and idempotency records.
 */
describe("a service outage", () => {
  const envs = useCampaignEnv();

  it("longer than every job's attempts: the rows wait, the campaign shows stalled, and all are paid once under their keys when the service is back", async () => {
    const rows = 16;
    const e = await envs.setup("outage", { asyncCompleteMs: 50, latencyMs: 150 });
    const file = join(e.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(e.index, { rows }));
    // Three attempts 100 ms apart: a budget the outage outlasts many times over.
    const jobOptions = { attempts: 3, backoff: { type: "fixed", delay: 100 } };
    await importCampaign({ file, campaign: "o", jobOptions }, depsOf(e));
    const keys = new Map([...(await ordersOf(e, "o"))].map(([n, o]) => [n, o.key]));
    const port = await freePort();
    let proxy = await tcpProxy(port, e.sandbox.url);
    await envs.work(e, {
      config: { ...e.config, apiUrl: `http://127.0.0.1:${port}` },
      concurrency: 2,
      timings: {
        ...FAST_TIMINGS,
        trackerTickMs: 100,
        serviceQuietMs: 1000,
        outageHoldMs: 100,
        outageHoldMaxMs: 500,
        // The orders accepted before the outage, whose polls reached nothing during it, are
        // looked at again after this (30 s by default), as the queue's hold above is.
        maxPollDelayMs: 500,
      },
    });
    const status = () => campaignStatus(e.ledger, "o");
    try {
      await eventually(async () => {
        const s = await status();
        return s.completed + s.submitted >= 3;
      }, "a few rows sent");

      // The service goes away mid-campaign (requests in flight are cut).
      await proxy.close();
      await eventually(
        async () => (await status()).stalled?.reason === "service_unreachable",
        "the campaign shown stalled",
      );
      // Ten times the attempts' budget and more: no row fails meanwhile.
      await holdsFor(
        async () => {
          const s = await status();
          return s.failed_final === 0 && s.failed_uncertain === 0 && s.completed < rows;
        },
        3000,
        "no row failed, not all completed",
      );
      expect((await status()).stalled?.reason).toBe("service_unreachable");

      // Back on the same address: sending resumes by itself, the mark goes.
      proxy = await tcpProxy(port, e.sandbox.url);
      await eventually(async () => (await status()).completed === rows, "every row completed");
      await eventually(async () => (await status()).stalled === null, "the mark removed");
    } finally {
      await envs.stopWorkers();
      await proxy.close();
    }

    expect(await status()).toMatchObject({
      total: rows,
      completed: rows,
      failed_final: 0,
      failed_uncertain: 0,
    });
    // Every order under the key it was imported with; each paid exactly once on the sandbox.
    const after = await ordersOf(e, "o");
    expect(new Map([...after].map(([n, o]) => [n, o.key]))).toEqual(keys);
    for (const order of after.values()) expect(order).toMatchObject({ generation: 0 });
    const made = await sandboxOrders(e.sandbox);
    expect(made).toHaveLength(rows);
    expect(new Set(made.map((o) => o.idempotency_key))).toEqual(new Set(keys.values()));
    const emails = made.flatMap((o) => o.items.map((i) => i.distribution_method.email_address));
    expect(new Set(emails).size).toBe(rows);
  }, 120_000);

  it("timeouts (the service answers too late) keep their key and the mark of an unclear attempt, and use no attempt once the outage is known", async () => {
    const e = await envs.setup("outage-slow");
    const file = join(e.dataDir, "orders.csv");
    await writeFile(file, sampleCsv(e.index, { rows: 1 }));
    // Four attempts (each a request and its in-attempt retry): enough for the worker to know the
    // outage (two failures over 500 ms), far fewer than the timeouts of the wait below.
    const jobOptions = { attempts: 4, backoff: { type: "fixed", delay: 100 } };
    await importCampaign({ file, campaign: "t", jobOptions, executionMode: "sync" }, depsOf(e));
    const [[number, imported]] = [...(await ordersOf(e, "t"))] as [[number, LedgerOrder]];
    // The service makes the order and answers after the client gave up. Only from here: the
    // catalog sync's pages and the import's checks above need no slow answers.
    e.sandbox.setFaults({ latencyMs: 700 });
    await envs.work(e, {
      config: { ...e.config, requestTimeoutMs: 200 },
      concurrency: 1,
      timings: {
        ...FAST_TIMINGS,
        serviceQuietMs: 500,
        outageHoldMs: 100,
        outageHoldMaxMs: 300,
      },
    });
    const status = () => campaignStatus(e.ledger, "t");
    await eventually(async () => (await sandboxOrders(e.sandbox)).length === 1, "the order made");
    await eventually(
      async () => (await e.ledger.orders.getOrder("t", number))?.unclear === "request_timeout",
      "the key marked",
    );
    await eventually(async () => {
      const s = await status();
      expect(s.failed_uncertain).toBe(0);
      return s.stalled?.reason === "service_unreachable";
    }, "the campaign shown stalled");
    // Far more timeouts than its four attempts: the row waits, marked, under its key.
    await holdsFor(
      async () => {
        const s = await status();
        return s.failed_uncertain === 0 && s.failed_final === 0 && s.completed === 0;
      },
      4000,
      "the row waiting, neither failed nor completed",
    );
    const waiting = await e.ledger.orders.getOrder("t", number);
    expect(waiting).toMatchObject({ key: imported.key, unclear: "request_timeout" });
    // Between probes, or being one.
    expect(["queued", "in_flight"]).toContain(waiting?.status);

    // The service answers in time again: the same key, replayed, one order.
    e.sandbox.setFaults({ latencyMs: 0 });
    await eventually(async () => (await status()).completed === 1, "the row completed");
    const made = await sandboxOrders(e.sandbox);
    expect(made).toHaveLength(1);
    expect(made[0]!.idempotency_key).toBe(imported.key);
    expect(await e.ledger.orders.getOrder("t", number)).toMatchObject({
      key: imported.key,
      order_id: made[0]!.id,
    });
    await eventually(async () => (await status()).stalled === null, "the mark removed");
  }, 120_000);
});
