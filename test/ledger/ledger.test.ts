import { beforeEach, describe, expect, it } from "vitest";
import { pauseIfRunning, resumeCampaign } from "../../src/campaigns/control.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { ledgerOrder, ledgerRow } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

describe("ledger", () => {
  const r = useRedisPrefix("ledger");
  let ledger: Ledger;
  beforeEach(() => {
    ledger = new Ledger(r.redis, r.prefix);
  });

  /** Order 1 holds rows a and b, order 2 row c. */
  async function seed() {
    return ledger.record("c1", [
      {
        order: ledgerOrder("c1", ["a", "b"]),
        rows: [
          ["a", ledgerRow(2)],
          ["b", ledgerRow(3)],
        ],
      },
      { order: ledgerOrder("c1", ["c"]), rows: [["c", ledgerRow(4)]] },
    ]);
  }

  it("records once and counts rows", async () => {
    expect(await seed()).toEqual({ added: 3, leftOut: 0, orders: 2 });
    expect(await seed()).toEqual({ added: 0, leftOut: 3, orders: 0 });
    const [c] = await ledger.getRows("c1", ["c"]);
    expect(c).toEqual({ ...ledgerRow(4), order: 2 });
    expect(await ledger.getOrder("c1", 2)).toEqual(ledgerOrder("c1", ["c"]));
    const counts = await ledger.counts("c1");
    expect(counts).toMatchObject({ total: 3, queued: 3, completed: 0 });
  });

  it("moves rows between statuses only from allowed ones, counts exact under concurrency", async () => {
    await seed();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => ledger.transition("c1", 1, ["queued"], "in_flight")),
    );
    expect(results.filter((r) => r.moved)).toHaveLength(1);
    expect(await ledger.counts("c1")).toMatchObject({ queued: 1, in_flight: 2 });
    const done = await ledger.transition("c1", 1, ["in_flight"], "completed", {
      order_id: "O-1",
      item_ids: ["E-1", "E-2"],
    });
    expect(done).toEqual({ moved: true, previous: "in_flight", status: "completed" });
    expect(await ledger.getOrder("c1", 1)).toMatchObject({
      status: "completed",
      order_id: "O-1",
      item_ids: ["E-1", "E-2"],
    });
    expect(await ledger.transition("c1", 1, ["queued"], "in_flight")).toEqual({
      moved: false,
      current: "completed",
    });
    expect(await ledger.transition("c1", 99, ["queued"], "in_flight")).toEqual({
      moved: false,
      current: null,
    });
    expect(await ledger.counts("c1")).toMatchObject({
      total: 3,
      queued: 1,
      in_flight: 0,
      completed: 2,
    });
  });

  it("rekeys part of an order to the next generation", async () => {
    await seed();
    await ledger.transition("c1", 1, ["queued"], "in_flight");
    const rekeyed = await ledger.rekey("c1", {
      number: 1,
      key: "k1g1",
      identities: ["a"],
      generation: 1,
      from: ["in_flight"],
      restStatus: "failed_final",
      restPatch: { error_type: "validation_error", error_message: "bad" },
    });
    expect(rekeyed).toEqual({ done: true, number: 3 });
    expect(await ledger.counts("c1")).toMatchObject({ queued: 2, in_flight: 0, failed_final: 1 });
    expect(await ledger.getOrder("c1", 1)).toMatchObject({
      identities: ["b"],
      status: "failed_final",
      error_type: "validation_error",
    });
    expect(await ledger.getOrder("c1", 3)).toMatchObject({
      key: "k1g1",
      identities: ["a"],
      status: "queued",
      generation: 1,
      replaces: 1,
    });
    const [a] = await ledger.getRows("c1", ["a"]);
    expect(a).toMatchObject({ order: 3, generation: 1 });
    expect(await r.redis.lrange(ledger.keys("c1").pending, 0, 0)).toEqual(["3"]);
    // Done once: the old order is no longer in flight.
    expect(
      await ledger.rekey("c1", {
        number: 1,
        key: "k1g1",
        identities: ["a"],
        generation: 1,
        from: ["in_flight"],
      }),
    ).toEqual({ done: false, why: "not-allowed" });
  });

  it("releases only rows whose order failed for good", async () => {
    await seed();
    expect(await ledger.releaseRow("c1", "c")).toEqual({ released: false, status: "queued" });
    await ledger.transition("c1", 2, ["queued"], "failed_final");
    expect(await ledger.releaseRow("c1", "c")).toEqual({ released: true, generation: 0 });
    expect(await ledger.counts("c1")).toMatchObject({ total: 2, failed_final: 0, queued: 2 });
    expect(await ledger.getOrder("c1", 2)).toMatchObject({ status: "superseded" });
  });

  it("names a ledger written by giftjobs 0.1 instead of misreading it", async () => {
    const k = ledger.keys("old");
    await r.redis.hset(k.rows, "a", JSON.stringify({ line: 2, key: "gj1_x", generation: 0 }));
    await r.redis.hset(k.orders, "gj1_x", JSON.stringify({ identities: ["a"], status: "queued" }));
    await expect(ledger.getRows("old", ["a"])).rejects.toThrow(/ledger format 1/);
    await expect(ledger.orders("old").next()).rejects.toThrow(/ledger format 1/);
  });

  it("pauses once with a reason and resumes", async () => {
    expect(await pauseIfRunning(ledger, "c1", "insufficient_funds")).toBe(true);
    expect(await pauseIfRunning(ledger, "c1", "other")).toBe(false);
    expect(await ledger.pausedReason("c1")).toBe("insufficient_funds");
    await resumeCampaign(ledger, "c1");
    expect(await ledger.pausedReason("c1")).toBeNull();
  });
});
