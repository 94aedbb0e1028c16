import { describe, expect, it } from "vitest";
import {
  decodeOrder,
  decodeRow,
  encodeOrder,
  encodeRow,
  orderStatus,
  PAYLOAD_HASH_CHARS,
  rowOrder,
  samePayload,
} from "../../src/ledger/codec.js";
import type { LedgerOrder } from "../../src/ledger/types.js";
import { orderKey } from "../../src/orders/keys.js";
import { requestFromLedger } from "../../src/orders/request.js";

// How orders are stored (docs/architecture/ledger.md, "What a row costs"): what an order can be
// told from is not written, and an order written before is read as it always was.

const CAMPAIGN = "mem-1";
const ID = "ref:hL7x-z565x-iDiLJOBrx7WTfzGBZsY4fAnufedOiJao";
const KEY = orderKey(CAMPAIGN, 0, [ID]);
const CONTEXT = { campaign: CAMPAIGN, mode: "async" as const };

/** A one-row tagged order and its row, as giftjobs wrote them before (literals). */
const BEFORE = {
  order: `{"k":"${KEY}","i":["${ID}"],"g":0,"s":"queued","m":"async","c":"EUR","f":"1000","p":"898","md":{"giftjobs_campaign":"mem-1","giftjobs_key":"${KEY}"}}`,
  row: '[2,1,0,"IipmLSUNjtm5z8sJ","recipient-000001@example.com","AMZ-DE-00152","10.00","EUR","mem-1-000001"]',
};

const TAGGED: LedgerOrder = {
  key: KEY,
  identities: [ID],
  generation: 0,
  status: "queued",
  mode: "async",
  currency: "EUR",
  price: "898",
  metadata: { giftjobs_campaign: CAMPAIGN, giftjobs_key: KEY },
};

describe("the stored form of an order", () => {
  it("leaves out its tags, generation 0, the campaign's mode and its face value", () => {
    const text = encodeOrder({ ...TAGGED, face: "1000" }, CONTEXT);
    expect(text).toBe(`{"k":"${KEY}","i":["${ID}"],"s":"queued","c":"EUR","p":"898","t":1}`);
    expect(decodeOrder(text, CONTEXT)).toEqual(TAGGED);
  });

  it("reads an order written before as it was read then, and stores it the new way", () => {
    const before = decodeOrder(BEFORE.order, CONTEXT);
    expect(before).toEqual({ ...TAGGED, face: "1000" });
    // Without the campaign's mode (a read that does not know it): the order's own.
    expect(decodeOrder(BEFORE.order, { campaign: CAMPAIGN }).mode).toBe("async");
    const rows = [decodeRow(BEFORE.row)];
    const again = decodeOrder(encodeOrder(before, CONTEXT), CONTEXT);
    expect(JSON.stringify(requestFromLedger(again, rows))).toBe(
      JSON.stringify(requestFromLedger(before, rows)),
    );
    expect(requestFromLedger(again, rows).metadata).toEqual({
      giftjobs_campaign: CAMPAIGN,
      giftjobs_key: KEY,
    });
  });

  it("keeps the row's own metadata beside the tags, and all of an untagged order's", () => {
    const own = { ...TAGGED, metadata: { team: "ops", ...TAGGED.metadata } };
    const text = encodeOrder(own, CONTEXT);
    expect(JSON.parse(text)).toMatchObject({ md: { team: "ops" }, t: 1 });
    expect(decodeOrder(text, CONTEXT).metadata).toEqual(own.metadata);
    // A row's own giftjobs_key (it then goes untagged), tags of another campaign or key: as is.
    const cases: Record<string, string>[] = [
      { giftjobs_key: "mine" },
      { giftjobs_campaign: "other", giftjobs_key: KEY },
      { giftjobs_campaign: CAMPAIGN, giftjobs_key: "gj1_another" },
    ];
    for (const metadata of cases) {
      const stored = JSON.parse(encodeOrder({ ...TAGGED, metadata }, CONTEXT));
      expect(stored.md).toEqual(metadata);
      expect(stored.t).toBeUndefined();
      expect(decodeOrder(JSON.stringify(stored), CONTEXT).metadata).toEqual(metadata);
    }
  });

  it("writes a mode other than the campaign's, and a later generation", () => {
    const sync = { ...TAGGED, mode: "sync" as const, generation: 2 };
    const stored = JSON.parse(encodeOrder(sync, CONTEXT));
    expect(stored).toMatchObject({ m: "sync", g: 2 });
    expect(decodeOrder(JSON.stringify(stored), CONTEXT)).toEqual(sync);
    // The campaign's mode unknown when recorded: written.
    expect(JSON.parse(encodeOrder(TAGGED, { campaign: CAMPAIGN })).m).toBe("async");
  });
});

describe("the payload hash of a row", () => {
  it(`keeps ${PAYLOAD_HASH_CHARS} characters, and still compares a row written with 16`, () => {
    const full = "mZFXzv3Jkpz_UAo-fZRqVLUkNKGh6m2_jyTf1L0fFkI";
    expect(samePayload(full.slice(0, PAYLOAD_HASH_CHARS), full)).toBe(true);
    expect(samePayload(full.slice(0, 16), full)).toBe(true);
    expect(samePayload(`${full.slice(0, 15)}x`, full)).toBe(false);
    expect(samePayload("", full)).toBe(false);
    expect(samePayload(full.slice(0, 8), full)).toBe(false);
  });
});

describe("the earlier rows a repeat row pays again", () => {
  /** A row as it is stored now: a 12-character payload hash. */
  const ROW = BEFORE.row.replace("IipmLSUNjtm5z8sJ", "IipmLSUNjtm5");

  it("are kept in the row's extras cell; a row that repeats none is stored as before", () => {
    const plain = decodeRow(ROW);
    expect(encodeRow(plain)).toBe(ROW);
    const repeat = { ...plain, repeat_of: { rows: [{ campaign: "gifts", line: 12 }] } };
    const text = encodeRow(repeat);
    expect(text).toBe(`${ROW.slice(0, -1)},null,{"p":[["gifts",12]]}]`);
    expect(decodeRow(text)).toEqual(repeat);
  });

  it("beside a row's other extras, with how many more there were", () => {
    const row = {
      ...decodeRow(ROW),
      template_id: "tpl-1",
      distribution: "link" as const,
      repeat_of: {
        rows: [
          { campaign: "q3", line: 4 },
          { campaign: "gifts", line: 12 },
        ],
        more: 3,
      },
    };
    const text = encodeRow(row);
    expect(JSON.parse(text).at(-1)).toEqual({
      d: "link",
      p: [
        ["q3", 4],
        ["gifts", 12],
      ],
      pm: 3,
    });
    expect(decodeRow(text)).toEqual(row);
  });
});

describe("a row's order number read alone", () => {
  it("is the number decodeRow reads, whatever the row's cells hold", () => {
    const row = decodeRow(BEFORE.row);
    for (const [line, order, reference] of [
      [2, 1, "plain"],
      [123456, 98765432, 'a,"b",[c]'],
      [7, 0, ","],
    ] as const) {
      const text = encodeRow({ ...row, line, order, reference });
      expect(rowOrder(text)).toBe(order);
      expect(rowOrder(text)).toBe(decodeRow(text).order);
    }
  });

  it("refuses a row of ledger format 1 as decodeRow does", () => {
    expect(() => rowOrder('{"line":2,"order":1}')).toThrow(/ledger format 1/);
  });
});

describe("an order's status read alone", () => {
  it("is the status decodeOrder reads, whatever the order's other fields hold and in any order", () => {
    const orders = [
      BEFORE.order,
      encodeOrder(TAGGED, CONTEXT),
      encodeOrder(
        { ...TAGGED, status: "failed_final", description: 'said "s":"completed"' },
        CONTEXT,
      ),
      encodeOrder({ ...TAGGED, metadata: { s: "completed", team: "x" } }, CONTEXT),
      // As Lua's cjson writes an order a script changed: its keys in any order.
      `{"em":"\\"s\\":\\"completed\\"","s":"cancelled","k":"${KEY}","i":["${ID}"],"g":1}`,
      `{"i":["s"],"k":"${KEY}","s":"submitted","d":"x\\\\","g":0}`,
    ];
    for (const text of orders) expect(orderStatus(text)).toBe(decodeOrder(text, CONTEXT).status);
    expect(orders.map(orderStatus)).toEqual([
      "queued",
      "queued",
      "failed_final",
      "queued",
      "cancelled",
      "submitted",
    ]);
  });

  it("refuses an order of ledger format 1 as decodeOrder does", () => {
    expect(() => orderStatus('{"key":"x","status":"queued"}')).toThrow(/ledger format 1/);
  });
});
