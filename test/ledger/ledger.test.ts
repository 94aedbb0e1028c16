import { beforeEach, describe, expect, it } from "vitest";
import { pauseIfRunning, resumeCampaign } from "../../src/campaigns/control.js";
import { Ledger } from "../../src/ledger/ledger.js";
import { encodeRecord } from "../../src/ledger/record-argument.js";
import { RecordFencedError } from "../../src/ledger/record-errors.js";
import { LedgerStore } from "../../src/ledger/store.js";
import { requestFromLedger } from "../../src/orders/request.js";
import { OrderIndex } from "../../src/webhooks/order-index.js";
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
    return ledger.orders.record("c1", [
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
    const [c] = await ledger.orders.getRows("c1", ["c"]);
    expect(c).toEqual({ ...ledgerRow(4), order: 2 });
    // The face value is what RECORD adds to planned_face:CUR; the order does not keep it.
    const { face: _face, ...stored } = ledgerOrder("c1", ["c"]);
    expect(await ledger.orders.getOrder("c1", 2)).toEqual(stored);
    const counts = await ledger.campaigns.counts("c1");
    expect(counts).toMatchObject({ total: 3, queued: 3, completed: 0 });
  });

  it("records 70,000 rows in one call: RECORD's texts are passed on, not spread", async () => {
    // An import of packed orders records its last batch whole, however big: 3 texts a one-row
    // order here, some 210,000 in all, which a spread into the call overflowed the stack with.
    const rows = 70_000;
    const orders = Array.from({ length: rows }, (_, i) => {
      const identity = `big-${i}`;
      return {
        order: ledgerOrder("big", [identity]),
        rows: [[identity, ledgerRow(i + 2)]] as [string, ReturnType<typeof ledgerRow>][],
      };
    });
    expect(await ledger.orders.record("big", orders)).toEqual({
      added: rows,
      leftOut: 0,
      orders: rows,
    });
    const [last] = await ledger.orders.getRows("big", [`big-${rows - 1}`]);
    expect(last).toEqual({ ...ledgerRow(rows + 1), order: rows });
  });

  it("tells each row's order status, a row it does not have undefined (the repeats check's question)", async () => {
    await seed();
    await ledger.orders.transition({
      campaign: "c1",
      number: 2,
      from: ["queued"],
      to: "in_flight",
    });
    const statuses = await ledger.orders.rowStatuses("c1", ["a", "x", "c", "b"]);
    expect(statuses).toEqual(["queued", undefined, "in_flight", "queued"]);
    // A row whose order the ledger no longer has.
    await r.redis.hdel(ledger.keys("c1").orders, "1");
    expect(await ledger.orders.rowStatuses("c1", ["b", "c"])).toEqual(["unknown", "in_flight"]);
    expect(await ledger.orders.rowStatuses("c1", [])).toEqual([]);
    // An order of several rows, asked for many times over, in the rows' order.
    const many = Array.from({ length: 2500 }, (_, i) => ["a", "x", "c"][i % 3]!);
    const told = await ledger.orders.rowStatuses("c1", many);
    expect(told).toHaveLength(2500);
    expect(told.slice(1998, 2001)).toEqual(["unknown", undefined, "in_flight"]);
    // A batch whose rows repeat a campaign's rows many times over: asked as lists, not spread
    // into the call, which overflows the stack this far.
    const lots = Array.from({ length: 200_000 }, (_, i) => ["a", "c"][i % 2]!);
    expect((await ledger.orders.rowStatuses("c1", lots)).slice(0, 2)).toEqual([
      "unknown",
      "in_flight",
    ]);
  });

  it("records an import's batch only after the one before it (the fence), a batch sent again too", async () => {
    const batch = (identity: string, line: number) => [
      {
        order: ledgerOrder("c3", [identity]),
        rows: [[identity, ledgerRow(line)]] as [string, ReturnType<typeof ledgerRow>][],
      },
    ];
    const fence = (n: number) => ({ id: "import-1", batch: n });
    const first = encodeRecord("c3", batch("a", 2), null, fence(1));
    const second = encodeRecord("c3", batch("b", 3), null, fence(2));
    // Batch 2 before batch 1 was recorded: refused, nothing written.
    await expect(ledger.orders.recordEncoded(second)).rejects.toThrow(RecordFencedError);
    expect(await ledger.orders.getRows("c3", ["b"])).toEqual([undefined]);
    expect(await ledger.orders.recordEncoded(first)).toMatchObject({ added: 1 });
    expect(await ledger.orders.recordEncoded(second)).toMatchObject({ added: 1 });
    // Sent again (a reconnection resends what was not answered): passes, adds nothing.
    expect(await ledger.orders.recordEncoded(second)).toMatchObject({ added: 0, leftOut: 1 });
    const key = new LedgerStore(r.redis, r.prefix).fenceKey("c3", "import-1");
    expect(await r.redis.get(key)).toBe("2");
    // It outlives a crashed import by an hour at most.
    expect(await r.redis.pttl(key)).toBeGreaterThan(3_500_000);
    expect(await r.redis.pttl(key)).toBeLessThanOrEqual(3_600_000);
    // Batch 4 after batch 2: batch 3 was not recorded.
    await expect(
      ledger.orders.recordEncoded(encodeRecord("c3", batch("d", 5), null, fence(4))),
    ).rejects.toThrow(/Redis no longer holds the rows this import recorded/);
    await ledger.orders.removeFence("c3", "import-1");
    expect(await r.redis.exists(key)).toBe(0);
  });

  it("adds a batch's planned totals exactly, past 12 digits too, and pends its orders in order", async () => {
    const big = { face: "10000000000000", price: "9999999999999" };
    await ledger.orders.record("c2", [
      { order: ledgerOrder("c2", ["a"], big), rows: [["a", ledgerRow(2)]] },
      {
        order: ledgerOrder("c2", ["b", "c"], { face: "5", price: "4" }),
        rows: [
          ["b", ledgerRow(3)],
          ["c", ledgerRow(4)],
        ],
      },
      {
        order: ledgerOrder("c2", ["d"], { currency: "EUR", face: "7", price: "6" }),
        rows: [["d", ledgerRow(5)]],
      },
    ]);
    expect(await ledger.campaigns.meta("c2")).toMatchObject({
      next_order: "3",
      "planned_rows:USD": "3",
      "planned_face:USD": "10000000000005",
      "planned_price:USD": "10000000000003",
      "planned_rows:EUR": "1",
      "planned_face:EUR": "7",
      "planned_price:EUR": "6",
    });
    expect(await r.redis.lrange(`${r.prefix}:campaign:c2:pending`, 0, -1)).toEqual(["1", "2", "3"]);
    expect(await ledger.campaigns.counts("c2")).toMatchObject({ total: 4, queued: 4 });
    expect((await ledger.orders.getRows("c2", ["c", "d"])).map((row) => row?.order)).toEqual([
      2, 3,
    ]);
  });

  it("moves rows between statuses only from allowed ones, counts exact under concurrency", async () => {
    await seed();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        ledger.orders.transition({ campaign: "c1", number: 1, from: ["queued"], to: "in_flight" }),
      ),
    );
    expect(results.filter((r) => r.moved)).toHaveLength(1);
    expect(await ledger.campaigns.counts("c1")).toMatchObject({ queued: 1, in_flight: 2 });
    const done = await ledger.orders.transition({
      campaign: "c1",
      number: 1,
      from: ["in_flight"],
      to: "completed",
      patch: {
        order_id: "O-1",
        item_ids: ["E-1", "E-2"],
      },
    });
    expect(done).toEqual({ moved: true, previous: "in_flight", status: "completed" });
    expect(await ledger.orders.getOrder("c1", 1)).toMatchObject({
      status: "completed",
      order_id: "O-1",
      item_ids: ["E-1", "E-2"],
    });
    expect(
      await ledger.orders.transition({
        campaign: "c1",
        number: 1,
        from: ["queued"],
        to: "in_flight",
      }),
    ).toEqual({
      moved: false,
      current: "completed",
    });
    expect(
      await ledger.orders.transition({
        campaign: "c1",
        number: 99,
        from: ["queued"],
        to: "in_flight",
      }),
    ).toEqual({
      moved: false,
      current: null,
    });
    expect(await ledger.campaigns.counts("c1")).toMatchObject({
      total: 3,
      queued: 1,
      in_flight: 0,
      completed: 2,
    });
  });

  it("indexes an accepted order's id in the step that makes it submitted, moved or not", async () => {
    await seed();
    const index = new OrderIndex(r.redis, r.prefix);
    await ledger.orders.transition({
      campaign: "c1",
      number: 1,
      from: ["queued"],
      to: "in_flight",
    });
    const submit = (number: number, orderId: string) =>
      ledger.orders.transition({
        campaign: "c1",
        number,
        from: ["in_flight"],
        to: "submitted",
        patch: { order_id: orderId },
        follow: { at: Date.now() + 60_000 },
        index: index.key,
      });
    expect(await submit(1, "O-1")).toMatchObject({ moved: true, status: "submitted" });
    expect(await index.find("O-1")).toEqual({ campaign: "c1", number: 1 });
    // Order 2 is still queued: not moved, and its id indexed all the same (a webhook about an
    // order the service made must find whose it is).
    expect(await submit(2, "O-2")).toEqual({ moved: false, current: "queued" });
    expect(await index.find("O-2")).toEqual({ campaign: "c1", number: 2 });
    // Without the index key, nothing is indexed.
    await ledger.orders.transition({
      campaign: "c1",
      number: 2,
      from: ["queued"],
      to: "in_flight",
    });
    await ledger.orders.transition({
      campaign: "c1",
      number: 2,
      from: ["in_flight"],
      to: "submitted",
      patch: { order_id: "O-3" },
      follow: { at: Date.now() + 60_000 },
    });
    expect(await index.find("O-3")).toBeUndefined();
    expect(await index.size()).toBe(2);
  });

  it("rekeys part of an order to the next generation", async () => {
    await seed();
    await ledger.orders.transition({
      campaign: "c1",
      number: 1,
      from: ["queued"],
      to: "in_flight",
    });
    const rekeyed = await ledger.orders.rekey({
      campaign: "c1",
      number: 1,
      key: "k1g1",
      identities: ["a"],
      generation: 1,
      from: ["in_flight"],
      restStatus: "failed_final",
      restPatch: { error_type: "validation_error", error_message: "bad" },
    });
    expect(rekeyed).toEqual({ done: true, number: 3 });
    expect(await ledger.campaigns.counts("c1")).toMatchObject({
      queued: 2,
      in_flight: 0,
      failed_final: 1,
    });
    expect(await ledger.orders.getOrder("c1", 1)).toMatchObject({
      identities: ["b"],
      status: "failed_final",
      error_type: "validation_error",
    });
    expect(await ledger.orders.getOrder("c1", 3)).toMatchObject({
      key: "k1g1",
      identities: ["a"],
      status: "queued",
      generation: 1,
      replaces: 1,
    });
    const [a] = await ledger.orders.getRows("c1", ["a"]);
    expect(a).toMatchObject({ order: 3, generation: 1 });
    expect(await r.redis.lrange(ledger.keys("c1").pending, 0, 0)).toEqual(["3"]);
    // Done once: the old order is no longer in flight.
    expect(
      await ledger.orders.rekey({
        campaign: "c1",
        number: 1,
        key: "k1g1",
        identities: ["a"],
        generation: 1,
        from: ["in_flight"],
      }),
    ).toEqual({ done: false, why: "not-allowed" });
  });

  it("a repeat row keeps the earlier rows it pays again when REKEY moves it (cjson)", async () => {
    const repeat_of = { rows: [{ campaign: "gifts", line: 12 }], more: 2 };
    await ledger.orders.record("c1", [
      { order: ledgerOrder("c1", ["a"]), rows: [["a", ledgerRow(2, { repeat_of })]] },
    ]);
    await ledger.orders.transition({
      campaign: "c1",
      number: 1,
      from: ["queued"],
      to: "in_flight",
    });
    const rekeyed = await ledger.orders.rekey({
      campaign: "c1",
      number: 1,
      key: "k1g1",
      identities: ["a"],
      generation: 1,
      from: ["in_flight"],
    });
    expect(rekeyed).toEqual({ done: true, number: 2 });
    const [a] = await ledger.orders.getRows("c1", ["a"]);
    expect(a).toEqual({ ...ledgerRow(2, { repeat_of }), order: 2, generation: 1 });
  });

  it("releases only rows whose order failed for good", async () => {
    await seed();
    expect(await ledger.orders.releaseRow("c1", "c")).toEqual({
      released: false,
      status: "queued",
    });
    await ledger.orders.transition({
      campaign: "c1",
      number: 2,
      from: ["queued"],
      to: "failed_final",
    });
    expect(await ledger.orders.releaseRow("c1", "c")).toEqual({ released: true, generation: 0 });
    expect(await ledger.campaigns.counts("c1")).toMatchObject({
      total: 2,
      failed_final: 0,
      queued: 2,
    });
    expect(await ledger.orders.getOrder("c1", 2)).toMatchObject({ status: "superseded" });
  });

  it("stores a tagged order without its tags, mode or generation 0, and makes them again", async () => {
    await ledger.campaigns.register("t", { execution_mode: "sync" });
    const order = ledgerOrder("t", ["a"], { mode: "sync" });
    const metadata = { team: "ops", giftjobs_campaign: "t", giftjobs_key: order.key };
    await ledger.orders.record("t", [
      { order: { ...order, metadata }, rows: [["a", ledgerRow(2)]] },
    ]);
    const raw = (await r.redis.hget(ledger.keys("t").orders, "1"))!;
    expect(raw).not.toMatch(/giftjobs_|"m":|"g":|"f":/);
    expect(JSON.parse(raw)).toMatchObject({ md: { team: "ops" }, t: 1 });
    const started = await ledger.orders.start({ campaign: "t", number: 1, patch: {} });
    if (started.kind !== "started") throw new Error(started.kind);
    expect(started.order).toMatchObject({ mode: "sync", generation: 0, metadata });
    // The next generation names its own key.
    const next = await ledger.orders.rekey({
      campaign: "t",
      number: 1,
      key: "k-next",
      identities: ["a"],
      generation: 1,
      from: ["in_flight"],
      clearance: "answered",
    });
    expect(next).toEqual({ done: true, number: 2 });
    expect(await ledger.orders.getOrder("t", 2)).toMatchObject({
      key: "k-next",
      generation: 1,
      metadata: { team: "ops", giftjobs_campaign: "t", giftjobs_key: "k-next" },
    });
    const restarted = await ledger.orders.start({ campaign: "t", number: 2, patch: {} });
    expect(restarted).toMatchObject({ kind: "started", order: { mode: "sync" } });
  });

  it("reads orders and rows written before, and moves them as before", async () => {
    // A campaign's data as giftjobs wrote it before (docs/architecture/ledger.md, "What a row
    // costs"): tags, mode, generation and face value in each order, 16-character payload hashes.
    await ledger.campaigns.register("old", { execution_mode: "async", order_tags: "1" });
    const k = ledger.keys("old");
    const rows = [
      ["a", '[2,1,0,"IipmLSUNjtm5z8sJ","a@example.com","P1","10.00","EUR","ref-a"]'],
      ["b", '[3,2,0,"U72Y0rfxokZF7Kbo","b@example.com","P1","25.00","EUR","ref-b",null]'],
    ];
    const key = (id: string) => ledgerOrder("old", [id]).key;
    const written = (id: string, n: number) =>
      `{"k":"${key(id)}","i":["${id}"],"g":0,"s":"queued","m":"async","c":"EUR","f":"${n}",` +
      `"p":"${n}","md":{"giftjobs_campaign":"old","giftjobs_key":"${key(id)}"}}`;
    await r.redis.hset(k.rows, Object.fromEntries(rows));
    await r.redis.hset(k.orders, { "1": written("a", 1000), "2": written("b", 2500) });
    await r.redis.hset(k.meta, "next_order", "2");
    await r.redis.hset(k.counts, { queued: 2, total: 2 });
    const tags = (id: string) => ({ giftjobs_campaign: "old", giftjobs_key: key(id) });
    expect(await ledger.orders.getOrder("old", 1)).toEqual({
      ...ledgerOrder("old", ["a"], { currency: "EUR", face: "1000", price: "1000" }),
      metadata: tags("a"),
    });
    const [a] = await ledger.orders.getRows("old", ["a"]);
    expect(a).toMatchObject({ order: 1, generation: 0, payload_hash: "IipmLSUNjtm5z8sJ" });
    const started = await ledger.orders.start({ campaign: "old", number: 1, patch: {} });
    if (started.kind !== "started") throw new Error(started.kind);
    expect(started.order).toMatchObject({ mode: "async", generation: 0, metadata: tags("a") });
    expect(requestFromLedger(started.order, started.rows).metadata).toEqual(tags("a"));
    // REKEY of an order written before names the new key in its metadata, as it did.
    const next = await ledger.orders.rekey({
      campaign: "old",
      number: 2,
      key: "k-next",
      identities: ["b"],
      generation: 1,
      from: ["queued"],
    });
    expect(next).toEqual({ done: true, number: 3 });
    expect(await ledger.orders.getOrder("old", 3)).toMatchObject({
      generation: 1,
      mode: "async",
      metadata: { giftjobs_campaign: "old", giftjobs_key: "k-next" },
    });
    expect(await ledger.orders.getRows("old", ["b"])).toMatchObject([{ order: 3, generation: 1 }]);
  });

  it("names a ledger written by giftjobs 0.1 instead of misreading it", async () => {
    const k = ledger.keys("old");
    await r.redis.hset(k.rows, "a", JSON.stringify({ line: 2, key: "gj1_x", generation: 0 }));
    await r.redis.hset(k.orders, "gj1_x", JSON.stringify({ identities: ["a"], status: "queued" }));
    await expect(ledger.orders.getRows("old", ["a"])).rejects.toThrow(/ledger format 1/);
    await expect(ledger.orders.all("old").next()).rejects.toThrow(/ledger format 1/);
    await expect(ledger.orders.rowStatuses("old", ["a"])).rejects.toThrow(/ledger format 1/);
    // A row of today's format in an order of format 1.
    await r.redis.hset(k.rows, "b", '[3,7,0,"h","e@x","P","10","USD",""]');
    await r.redis.hset(k.orders, "7", JSON.stringify({ identities: ["b"], status: "queued" }));
    await expect(ledger.orders.rowStatuses("old", ["b"])).rejects.toThrow(
      /an order recorded by an earlier giftjobs/,
    );
  });

  it("pauses once with a reason and resumes", async () => {
    expect(await pauseIfRunning(ledger, "c1", "insufficient_funds")).toBe(true);
    expect(await pauseIfRunning(ledger, "c1", "other")).toBe(false);
    expect(await ledger.campaigns.pausedReason("c1")).toBe("insufficient_funds");
    await resumeCampaign(ledger, "c1");
    expect(await ledger.campaigns.pausedReason("c1")).toBeNull();
  });
});
