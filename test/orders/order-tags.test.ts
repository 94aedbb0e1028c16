import { describe, expect, it } from "vitest";
import { campaignTagsOrders, roomForTags, tagsOf } from "../../src/orders/order-tags.js";
import { requestFromLedger } from "../../src/orders/request.js";
import { row } from "../helpers/csv.js";
import { ledgerOrder, ledgerRow } from "../helpers/ledger-fixtures.js";
import { buildOrderRequest } from "../helpers/order-body.js";

const KEY = "gj1_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";

/**
 * The metadata naming campaign and key (docs/architecture/keys-and-exactly-once.md,
 * "Reconciling with the service").
 */
describe("order tags", () => {
  it("without a tag key every body is what it was, byte for byte", () => {
    const one = buildOrderRequest([row({ metadata: { z: "1", a: "2" } })], "USD", { name: "s" });
    expect(JSON.stringify(one.metadata)).toBe('{"a":"2","z":"1"}');
    const two = buildOrderRequest([row(), row()], "USD", { name: "s" });
    expect(JSON.stringify(two.metadata)).toBe('{"campaign":"s"}');
  });

  it("a tagged order names its campaign and key, sorted with its own metadata", () => {
    const two = buildOrderRequest([row(), row()], "USD", { name: "s", tagKey: KEY });
    expect(JSON.stringify(two.metadata)).toBe(
      `{"campaign":"s","giftjobs_campaign":"s","giftjobs_key":"${KEY}"}`,
    );
    const one = buildOrderRequest([row({ metadata: { z: "1" } })], "USD", {
      name: "s",
      tagKey: KEY,
    });
    expect(Object.keys(one.metadata ?? {})).toEqual(["giftjobs_campaign", "giftjobs_key", "z"]);
    expect(tagsOf(one.metadata)).toEqual({ campaign: "s", key: KEY });
  });

  it("a row whose metadata leaves no room, or names a tag, goes untagged", () => {
    const eighteen = Object.fromEntries(Array.from({ length: 18 }, (_, i) => [`k${i}`, "v"]));
    const nineteen = { ...eighteen, k18: "v" };
    expect(roomForTags(eighteen)).toBe(true);
    expect(roomForTags(nineteen)).toBe(false);
    expect(roomForTags({ giftjobs_note: "x" })).toBe(false);
    const full = buildOrderRequest([row({ metadata: nineteen })], "USD", {
      name: "s",
      tagKey: KEY,
    });
    expect(full.metadata).toEqual(nineteen);
    const own = buildOrderRequest([row({ metadata: { giftjobs_key: "mine" } })], "USD", {
      name: "s",
      tagKey: KEY,
    });
    expect(own.metadata).toEqual({ giftjobs_key: "mine" });
  });

  it("the ledger's body of a tagged order sorts its metadata; an untagged one is as stored", () => {
    const rows = [{ ...ledgerRow(2), order: 1 }];
    const tagged = ledgerOrder("s", ["id"], {
      metadata: { giftjobs_key: KEY, campaign: "s", giftjobs_campaign: "s" },
    });
    expect(Object.keys(requestFromLedger(tagged, rows).metadata ?? {})).toEqual([
      "campaign",
      "giftjobs_campaign",
      "giftjobs_key",
    ]);
    const untagged = ledgerOrder("s", ["id"], { metadata: { z: "1", a: "2" } });
    expect(Object.keys(requestFromLedger(untagged, rows).metadata ?? {})).toEqual(["z", "a"]);
  });

  it("decided once per campaign: the marker, else the ledger's meta, else a new campaign", () => {
    const decide = (marker: boolean, meta: { order_tags?: string } | undefined, lines: number) =>
      campaignTagsOrders({ marker, meta, journalOrders: lines });
    expect(decide(false, undefined, 0)).toBe(true); // new to ledger and journal
    expect(decide(false, {}, 0)).toBe(false); // a campaign from before tags
    expect(decide(false, { order_tags: "1" }, 5)).toBe(true);
    // A lost ledger: the journal has orders; the marker beside it says how they were sent.
    expect(decide(true, undefined, 5)).toBe(true);
    expect(decide(false, undefined, 5)).toBe(false);
  });
});
