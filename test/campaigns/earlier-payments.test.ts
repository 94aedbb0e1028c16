import { describe, expect, it } from "vitest";
import { RepeatFinder } from "../../src/campaigns/earlier-payments.js";
import { Ledger } from "../../src/ledger/ledger.js";
import type { PaidEntry } from "../../src/orders/paid-memory.js";
import { ledgerOrder, ledgerRow } from "../helpers/ledger-fixtures.js";
import { useRedisPrefix } from "../helpers/redis-prefix.js";

describe("RepeatFinder", () => {
  const r = useRedisPrefix("earlier");
  const entry = (identity: string, line: number): PaidEntry => ({
    campaign: "before",
    fingerprint: "f",
    identity,
    line,
    currency: "USD",
    face: "1000",
    at: 1,
  });

  it("finds earlier rows with their ledger's statuses, and closes its lookup once released", async () => {
    const ledger = new Ledger(r.redis, r.prefix);
    await ledger.orders.record("before", [
      { order: ledgerOrder("before", ["a"]), rows: [["a", ledgerRow(2)]] },
    ]);
    const held = { entries: [entry("a", 2), entry("gone", 3)] };
    let closed = 0;
    const finder = new RepeatFinder(
      {
        find: async (fingerprints) => fingerprints.map((f) => (f ? held.entries : [])),
        close: async () => {
          closed += 1;
        },
      },
      ledger,
      undefined,
    );
    const [found, none] = await finder.find(["f", undefined]);
    expect(found!.map((e) => [e.identity, e.status])).toEqual([
      ["a", "queued"],
      ["gone", "unknown"],
    ]);
    expect(none).toEqual([]);
    // Pass 2 of an import has no row to look up: the lookup (its file) is closed, once.
    await finder.release();
    await finder.release();
    expect(closed).toBe(1);
    await expect(finder.find(["f"])).rejects.toThrow(/released/);
  });
});
