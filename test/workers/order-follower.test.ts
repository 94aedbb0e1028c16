import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import { OrderFollower } from "../../src/jobs/order-status.js";
import type { LedgerOrder } from "../../src/orders/ledger.js";
import { validOrder } from "../helpers/api-client.js";
import { type CampaignEnv, campaignEnv, quietLog } from "../helpers/campaign-env.js";
import { eventually } from "../helpers/wait-for.js";

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

  /** An order the sandbox accepted (202), recorded as submitted and followed from now. */
  async function submitted(e: CampaignEnv, key: string, orderId?: string): Promise<string> {
    const request = validOrder(e.sandbox);
    const id = orderId ?? (await e.client.createOrder(request, { idempotencyKey: key })).order.id;
    const order: LedgerOrder = {
      key,
      identities: [`${key}-row`],
      generation: 0,
      status: "in_flight",
    };
    await e.ledger.record("c", [{ order, rows: [[`${key}-row`, ROW]] }]);
    // The campaign's first order: number 1.
    const moved = await e.ledger.transition(
      "c",
      1,
      ["in_flight"],
      "submitted",
      { order_id: id },
      {
        at: Date.now(),
      },
    );
    expect(moved.moved).toBe(true);
    return id;
  }

  function follower(e: CampaignEnv, client: ApiClient, leaseMs = 30_000): OrderFollower {
    const f = new OrderFollower({
      client,
      ledger: e.ledger,
      log: quietLog,
      pollDelayMs: 50,
      tickMs: 20,
      leaseMs,
    });
    followers.push(f);
    f.start();
    return f;
  }

  it("follows an accepted order to COMPLETED, then stops following it", async () => {
    env = await campaignEnv({ asyncCompleteMs: 300 }, "follow-done");
    const e = env;
    const id = await submitted(e, "gj1_a");
    expect(await e.ledger.followedCount()).toBe(1);
    follower(e, e.client);
    await eventually(
      async () => (await e.ledger.getOrder("c", 1))?.status === "completed",
      "completed",
    );
    const order = await e.ledger.getOrder("c", 1);
    expect(order).toMatchObject({ order_id: id, status: "completed" });
    expect(order?.item_ids).toEqual([expect.stringMatching(/^E-/)]);
    // PROCESSING for 300 ms with polls every 50 ms or more: it was looked at more than once.
    expect(order?.polls).toBeGreaterThan(0);
    expect(await e.ledger.followedCount()).toBe(0);
    expect((await e.ledger.counts("c")).completed).toBe(1);
  });

  it("an order the service does not know ends failed_uncertain and is no longer followed", async () => {
    env = await campaignEnv({}, "follow-unknown");
    const e = env;
    await submitted(e, "gj1_b", "O-NOSUCHORDER");
    follower(e, e.client);
    await eventually(
      async () => (await e.ledger.getOrder("c", 1))?.status === "failed_uncertain",
      "failed_uncertain",
    );
    expect((await e.ledger.getOrder("c", 1))?.error_message).toContain("status lookup failed");
    expect(await e.ledger.followedCount()).toBe(0);
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
      async () => Number(await e.redis.zscore(e.ledger.followKey(), "c 1")) > Date.now() + 500,
      "the order leased",
      5000,
    );
    await first.kill();
    // While the lease lasts nobody else may take it.
    expect(await e.ledger.claimFollowed(Date.now(), 10, 1000)).toEqual([]);
    const started = Date.now();
    follower(e, e.client);
    await eventually(
      async () => (await e.ledger.getOrder("c", 1))?.status === "completed",
      "completed",
    );
    expect(Date.now() - started).toBeGreaterThan(200);
    expect(await e.ledger.followedCount()).toBe(0);
  });

  it("drops an order that is no longer submitted without asking the service", async () => {
    env = await campaignEnv({}, "follow-stale");
    const e = env;
    await submitted(e, "gj1_d");
    await e.ledger.transition("c", 1, ["submitted"], "completed", {});
    const before = e.sandbox.state.stats.toJson().total_requests;
    follower(e, e.client);
    await eventually(async () => (await e.ledger.followedCount()) === 0, "unfollowed");
    expect(e.sandbox.state.stats.toJson().total_requests).toBe(before);
  });
});
