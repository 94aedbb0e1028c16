import { beforeEach, describe, expect, it } from "vitest";
import { Ledger } from "../../src/orders/ledger.js";
import { ledgerRow, orderRequest } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

const REQUEST = orderRequest("u@example.com", "P1");

const row = (key: string, line: number) => ledgerRow(key, line);

describe("ledger", () => {
  const r = useRedisPrefix("ledger");
  let ledger: Ledger;
  beforeEach(() => {
    ledger = new Ledger(r.redis, r.prefix);
  });

  async function seed() {
    const added = await ledger.record(
      "c1",
      [
        ["a", row("k1", 2)],
        ["b", row("k1", 3)],
        ["c", row("k2", 4)],
      ],
      [
        ["k1", { identities: ["a", "b"], generation: 0, status: "queued" }, REQUEST],
        ["k2", { identities: ["c"], generation: 0, status: "queued" }, REQUEST],
      ],
    );
    return added;
  }

  it("records once and counts rows", async () => {
    expect(await seed()).toBe(3);
    expect(await seed()).toBe(0);
    expect(await ledger.getRequest("c1", "k2")).toEqual(REQUEST);
    const counts = await ledger.counts("c1");
    expect(counts).toMatchObject({ total: 3, queued: 3, completed: 0 });
  });

  it("moves rows between statuses only from allowed ones, counts exact under concurrency", async () => {
    await seed();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => ledger.transition("c1", "k1", ["queued"], "in_flight")),
    );
    expect(results.filter((r) => r.moved)).toHaveLength(1);
    expect(await ledger.counts("c1")).toMatchObject({ queued: 1, in_flight: 2 });
    const done = await ledger.transition("c1", "k1", ["in_flight"], "completed", {
      order_id: "O-1",
      item_ids: { a: "E-1", b: "E-2" },
    });
    expect(done).toEqual({ moved: true, previous: "in_flight" });
    expect(await ledger.getOrder("c1", "k1")).toMatchObject({
      status: "completed",
      order_id: "O-1",
      item_ids: { a: "E-1" },
    });
    expect(await ledger.transition("c1", "k1", ["queued"], "in_flight")).toEqual({
      moved: false,
      current: "completed",
    });
    expect(await ledger.transition("c1", "nope", ["queued"], "in_flight")).toEqual({
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
    await ledger.transition("c1", "k1", ["queued"], "in_flight");
    const r = await ledger.rekey("c1", {
      oldKey: "k1",
      newKey: "k1g1",
      identities: ["a"],
      generation: 1,
      from: ["in_flight"],
      restStatus: "failed_final",
      restPatch: { error_type: "validation_error", error_message: "bad" },
    });
    expect(r).toBe("done");
    expect(await ledger.counts("c1")).toMatchObject({ queued: 2, in_flight: 0, failed_final: 1 });
    expect(await ledger.getOrder("c1", "k1")).toMatchObject({
      identities: ["b"],
      status: "failed_final",
      error_type: "validation_error",
    });
    expect(await ledger.getOrder("c1", "k1g1")).toMatchObject({
      identities: ["a"],
      status: "queued",
      generation: 1,
    });
    const [a] = await ledger.getRows("c1", ["a"]);
    expect(a).toMatchObject({ key: "k1g1", generation: 1 });
    expect(
      await ledger.rekey("c1", {
        oldKey: "k1",
        newKey: "k1g1",
        identities: ["b"],
        generation: 1,
        from: ["failed_final"],
      }),
    ).toBe("already");
  });

  it("releases only rows whose order failed for good", async () => {
    await seed();
    expect(await ledger.releaseRow("c1", "c")).toEqual({ released: false, status: "queued" });
    await ledger.transition("c1", "k2", ["queued"], "failed_final");
    expect(await ledger.releaseRow("c1", "c")).toEqual({ released: true, generation: 0 });
    expect(await ledger.counts("c1")).toMatchObject({ total: 2, failed_final: 0, queued: 2 });
    expect(await ledger.getOrder("c1", "k2")).toMatchObject({ status: "superseded" });
  });

  it("pauses once with a reason and resumes", async () => {
    expect(await ledger.pause("c1", "insufficient_funds")).toBe(true);
    expect(await ledger.pause("c1", "other")).toBe(false);
    expect(await ledger.pausedReason("c1")).toBe("insufficient_funds");
    await ledger.resume("c1");
    expect(await ledger.pausedReason("c1")).toBeNull();
  });
});
