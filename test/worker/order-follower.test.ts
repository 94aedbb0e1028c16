import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import type { LedgerOrder } from "../../src/ledger/ledger.js";
import { OrderFollower, type OrderFollowerOptions } from "../../src/worker/order-follower.js";
import { validOrder } from "../helpers/api-client.js";
import { type CampaignEnv, campaignEnv, quietLog } from "../helpers/campaign-env.js";
import { freePort } from "../helpers/free-port.js";
import { tcpProxy } from "../helpers/tcp-proxy.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

const ROW = {
  line: 2,
  generation: 0,
  payload_hash: "p",
  email: "a@example.com",
  product_code: "P",
  face_value: "10",
  currency: "USD",
};

describe("OrderFollower", () => {
  let env: CampaignEnv | undefined;
  const followers: OrderFollower[] = [];
  const servers: http.Server[] = [];
  afterEach(async () => {
    await Promise.all(followers.splice(0).map((f) => f.kill()));
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      s.close();
    }
    await env?.dispose();
    env = undefined;
  });

  /**
   * An order the sandbox accepted (202), recorded as submitted and followed from now: the first
   * order (number 1) of `campaign`.
   */
  async function submitted(
    e: CampaignEnv,
    key: string,
    orderId?: string,
    campaign = "c",
  ): Promise<string> {
    const request = validOrder(e.sandbox);
    const id = orderId ?? (await e.client.createOrder(request, { idempotencyKey: key })).order.id;
    const order: LedgerOrder = {
      key,
      identities: [`${key}-row`],
      generation: 0,
      status: "in_flight",
    };
    await e.ledger.orders.record(campaign, [{ order, rows: [[`${key}-row`, ROW]] }]);
    const moved = await e.ledger.orders.transition({
      campaign,
      number: 1,
      from: ["in_flight"],
      to: "submitted",
      patch: { order_id: id },
      follow: {
        at: Date.now(),
      },
    });
    expect(moved.moved).toBe(true);
    return id;
  }

  function follower(
    e: CampaignEnv,
    client: ApiClient,
    leaseMs = 30_000,
    options: Partial<OrderFollowerOptions> = {},
  ): OrderFollower {
    const f = new OrderFollower({
      client,
      ledger: e.ledger,
      log: quietLog,
      pollDelayMs: 50,
      tickMs: 20,
      leaseMs,
      ...options,
    });
    followers.push(f);
    f.start();
    return f;
  }

  it("follows an accepted order to COMPLETED, then stops following it", async () => {
    env = await campaignEnv({ asyncCompleteMs: 300 }, "follow-done");
    const e = env;
    const id = await submitted(e, "gj1_a");
    expect(await e.ledger.follows.count()).toBe(1);
    follower(e, e.client);
    await eventually(
      async () => (await e.ledger.orders.getOrder("c", 1))?.status === "completed",
      "completed",
    );
    const order = await e.ledger.orders.getOrder("c", 1);
    expect(order).toMatchObject({ order_id: id, status: "completed" });
    expect(order?.item_ids).toEqual([expect.stringMatching(/^E-/)]);
    // PROCESSING for 300 ms with polls every 50 ms or more: it was looked at more than once.
    expect(order?.polls).toBeGreaterThan(0);
    expect(await e.ledger.follows.count()).toBe(0);
    expect((await e.ledger.campaigns.counts("c")).completed).toBe(1);
  });

  it("an order the service does not know ends failed_uncertain and is no longer followed", async () => {
    env = await campaignEnv({}, "follow-unknown");
    const e = env;
    await submitted(e, "gj1_b", "O-NOSUCHORDER");
    follower(e, e.client);
    await eventually(
      async () => (await e.ledger.orders.getOrder("c", 1))?.status === "failed_uncertain",
      "failed_uncertain",
    );
    expect((await e.ledger.orders.getOrder("c", 1))?.error_message).toContain(
      "status lookup failed",
    );
    expect(await e.ledger.follows.count()).toBe(0);
  });

  it("only FAILED ends failed_final; a status it does not know ends failed_uncertain naming it; an answer it cannot record is looked at again", async () => {
    env = await campaignEnv({}, "follow-statuses");
    const e = env;
    // The service's answers to GET /v2/order/{id}, by order id, over real HTTP.
    const answers: Record<string, unknown> = {
      "O-FAILED": { id: "O-FAILED", status: "FAILED" },
      "O-REFUNDED": { id: "O-REFUNDED", status: "REFUNDED", items: [{ id: "E-1" }] },
      "O-HOLD": { id: "O-HOLD", status: "ON_HOLD", message: "held" },
      "O-LOWER": { id: "O-LOWER", status: "completed", items: [{ id: "E-2" }] },
      "O-BARE": { id: "O-BARE", status: "COMPLETED" },
      "O-ASKED": { id: "O-OTHER", status: "COMPLETED", items: [{ id: "E-3" }] },
    };
    const service = http.createServer((req, res) => {
      const id = decodeURIComponent(req.url?.split("/").pop() ?? "");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(answers[id]));
    });
    servers.push(service);
    service.listen(0, "127.0.0.1");
    await once(service, "listening");
    const client = new ApiClient({
      baseUrl: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
      timeoutMs: 5000,
    });
    const campaigns = Object.keys(answers);
    for (const [i, id] of campaigns.entries()) await submitted(e, `gj1_s${i}`, id, id);
    const ended: string[] = [];
    follower(e, client, 30_000, { maxPolls: 3, onOrderEnded: (o) => ended.push(o) });
    await eventually(async () => (await e.ledger.follows.count()) === 0, "every order ended");
    const order = async (campaign: string) => (await e.ledger.orders.getOrder(campaign, 1))!;
    expect(await order("O-FAILED")).toMatchObject({
      status: "failed_final",
      error_type: "order_failed",
    });
    for (const [campaign, status] of [
      ["O-REFUNDED", "REFUNDED"],
      ["O-HOLD", "ON_HOLD"],
      ["O-LOWER", "completed"],
    ] as const) {
      const o = await order(campaign);
      expect(o).toMatchObject({ status: "failed_uncertain", error_type: "unknown_order_status" });
      expect(o.error_message).toContain(`order status "${status}", which giftjobs does not know`);
      expect(o.polls ?? 0).toBe(0);
    }
    // COMPLETED without its items, or an answer about another order: polled to maxPolls.
    expect(await order("O-BARE")).toMatchObject({
      status: "failed_uncertain",
      error_type: "still_processing",
      polls: 2,
    });
    expect((await order("O-BARE")).error_message).toContain("without the order's items");
    expect((await order("O-ASKED")).error_message).toContain("answered about order O-OTHER");
    expect(ended.sort()).toEqual([
      "failed_final",
      "failed_uncertain",
      "failed_uncertain",
      "failed_uncertain",
      "failed_uncertain",
      "failed_uncertain",
    ]);
  });

  it("an order held by a follower that died is taken by another once the lease ends, not before", async () => {
    env = await campaignEnv({}, "follow-lease");
    const e = env;
    await submitted(e, "gj1_c");
    // The first follower's status request never gets an answer: it holds the order, then dies.
    const silent = http.createServer(() => {});
    servers.push(silent);
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    const stuck = new ApiClient({
      baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      timeoutMs: 60_000,
    });
    const first = follower(e, stuck, 1500);
    await eventually(
      async () => Number(await e.redis.zscore(e.ledger.follows.key(), "c 1")) > Date.now() + 500,
      "the order leased",
      5000,
    );
    await first.kill();
    // While the lease lasts nobody else may take it.
    expect(await e.ledger.follows.claim(Date.now(), 10, 1000)).toEqual([]);
    const leasedUntil = Number(await e.redis.zscore(e.ledger.follows.key(), "c 1"));
    follower(e, e.client);
    const status = async () => (await e.ledger.orders.getOrder("c", 1))?.status;
    // The second follower leaves it alone until the lease ends (less a margin for the clocks of
    // this process and Redis's), then follows it to the end.
    await holdsFor(
      async () => (await status()) !== "completed",
      leasedUntil - Date.now() - 100,
      "the leased order left alone",
    );
    await eventually(async () => (await status()) === "completed", "completed");
    expect(await e.ledger.follows.count()).toBe(0);
  });

  it("drops an order that is no longer submitted without asking the service", async () => {
    env = await campaignEnv({}, "follow-stale");
    const e = env;
    await submitted(e, "gj1_d");
    await e.ledger.orders.transition({
      campaign: "c",
      number: 1,
      from: ["submitted"],
      to: "completed",
      patch: {},
    });
    const before = e.sandbox.state.stats.toJson().total_requests;
    follower(e, e.client);
    await eventually(async () => (await e.ledger.follows.count()) === 0, "unfollowed");
    expect(e.sandbox.state.stats.toJson().total_requests).toBe(before);
  });
  it("a status check that reaches nothing (connection refused) is not counted: an outage does not end the order", async () => {
    env = await campaignEnv({ asyncCompleteMs: 0 }, "follow-outage");
    const e = env;
    await submitted(e, "gj1_e");
    const port = await freePort(); // nothing listens there yet
    const client = new ApiClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: e.config.apiKey,
      timeoutMs: 5000,
    });
    const refused: unknown[] = [];
    follower(e, client, 30_000, {
      maxPolls: 3,
      maxPollDelayMs: 50,
      onRequestEnded: (_campaign, error) => refused.push(error),
    });
    await eventually(async () => refused.length >= 6, "six refused status checks");
    expect(await e.ledger.orders.getOrder("c", 1)).toMatchObject({ status: "submitted" });
    expect((await e.ledger.orders.getOrder("c", 1))?.polls).toBeUndefined();
    // The service back at that address: the order ends as it did there.
    const proxy = await tcpProxy(port, e.sandbox.url);
    try {
      await eventually(
        async () => (await e.ledger.orders.getOrder("c", 1))?.status === "completed",
        "completed",
      );
    } finally {
      await proxy.close();
    }
  });
});
