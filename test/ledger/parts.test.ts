import { describe, expect, it } from "vitest";
import { LedgerArchive } from "../../src/ledger/archive.js";
import { LedgerCampaigns } from "../../src/ledger/campaigns.js";
import { LedgerDispatch } from "../../src/ledger/dispatch.js";
import { LedgerFollows } from "../../src/ledger/follow.js";
import { LedgerOrders } from "../../src/ledger/orders.js";
import { LedgerStore } from "../../src/ledger/store.js";
import type { LedgerOrder } from "../../src/ledger/types.js";
import { ledgerOrder, oneRowOrders } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

// Each part of the Ledger is built from a LedgerStore alone (docs/architecture/ledger.md).
describe("the ledger's parts, each on its own", () => {
  const r = useRedisPrefix("ledger-parts");
  const store = () => new LedgerStore(r.redis, r.prefix);

  it("orders: records, starts and moves an order with no other part", async () => {
    const orders = new LedgerOrders(store());
    expect(await orders.record("solo", oneRowOrders("solo", ["a", "b"]))).toEqual({
      added: 2,
      leftOut: 0,
      orders: 2,
    });
    const started = await orders.start({ campaign: "solo", number: 1, patch: {} });
    expect(started).toMatchObject({ kind: "started", order: { status: "in_flight" } });
    const moved = await orders.transition({
      campaign: "solo",
      number: 1,
      from: ["in_flight"],
      to: "submitted",
      patch: { order_id: "O-1" },
      follow: { at: 5 },
    });
    expect(moved).toEqual({ moved: true, previous: "in_flight", status: "submitted" });
    // A move from a status the order is not in leaves it and says where it is.
    expect(
      await orders.transition({ campaign: "solo", number: 1, from: ["queued"], to: "cancelled" }),
    ).toEqual({ moved: false, current: "submitted" });
    expect(await orders.getOrder("solo", 1)).toMatchObject({
      status: "submitted",
      order_id: "O-1",
    });
    // The transition followed it: the store's follow set holds it, scored as asked.
    expect(await r.redis.zscore(store().followKey(), "solo 1")).toBe("5");
  });

  it("campaigns: registers and moves state, the running set in step", async () => {
    const campaigns = new LedgerCampaigns(store());
    await campaigns.register("solo", { state: "held" });
    expect(await campaigns.names()).toEqual(["solo"]);
    expect(await r.redis.sismember(store().runningKey(), "solo")).toBe(0);
    expect(
      await campaigns.setState({ campaign: "solo", state: "running", from: ["held"] }),
    ).toEqual({ changed: true, previous: "held" });
    expect(await r.redis.sismember(store().runningKey(), "solo")).toBe(1);
    expect(await campaigns.setState({ campaign: "solo", state: "paused", from: ["held"] })).toEqual(
      { changed: false, previous: "running" },
    );
  });

  it("follows: claims due orders and reads them through what it is given", async () => {
    const asked: [string, number[]][] = [];
    const reader = {
      getOrders: async (campaign: string, numbers: number[]) => {
        asked.push([campaign, numbers]);
        return numbers.map((n): LedgerOrder => ledgerOrder(campaign, [`row-${n}`]));
      },
    };
    const follows = new LedgerFollows(store(), reader);
    await follows.add("x", 1, 10);
    await follows.add("x", 2, 20);
    await follows.add("y", 3, 1000);
    expect(await follows.count()).toBe(3);
    const taken = await follows.claim(30, 10, 60_000);
    expect(taken.map((t) => [t.campaign, t.number, t.order?.identities])).toEqual([
      ["x", 1, ["row-1"]],
      ["x", 2, ["row-2"]],
    ]);
    // One read per campaign taken from.
    expect(asked).toEqual([["x", [1, 2]]]);
    expect(await follows.dueCount(30)).toBe(0);
    expect(await follows.countOf("x")).toBe(2);
  });

  it("dispatch and archive: a running campaign's orders handed out, its shape read", async () => {
    const shared = store();
    const orders = new LedgerOrders(shared);
    await new LedgerCampaigns(shared).register("solo", { state: "running" });
    await orders.record("solo", oneRowOrders("solo", ["a", "b", "c"]));
    const dispatch = new LedgerDispatch(shared);
    expect(await dispatch.pendingCount("solo")).toBe(3);
    expect(await dispatch.handOut(2, 1)).toEqual([
      { campaign: "solo", number: 1 },
      { campaign: "solo", number: 2 },
    ]);
    expect((await dispatch.windowOrders("solo")).sort()).toEqual([1, 2]);
    const shape = await new LedgerArchive(shared).shape("solo");
    expect(shape).toMatchObject({ rows: 3, orders: 3, counts: { total: "3", queued: "3" } });
  });
});
