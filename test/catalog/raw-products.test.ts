import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { ApiClient } from "../../src/api/client.js";
import { loadCurrentIndex, openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import { syncCatalog } from "../../src/catalog/sync-catalog.js";
import { FAST_RETRY } from "../helpers/catalog-fixture.js";
import { tmpDir } from "../helpers/tmp-dir.js";

/** Products as a service might spell them: escapes, unicode, number spellings, odd spacing. */
const FANCY = String.raw`{"code":"RAW-1","name":"Caf\u00e9 \"Deluxe\" \\ 日本 😀","currency":"EUR","is_orderable":true,"state":"LIVE","payout_type":"gift_card","countries_redeemable_in":["FR","DE"],"discount_multiplier":"0.0100","gift_card":{"denominations":{"type":"open","minimum_value":"5.00","maximum_value":"50.00"}},"extra":{"big":12345678901234567890,"price":1.50,"exp":1E3,"url":"https:\/\/x.example\/a"}}`;
const MALFORMED = `{"code":"RAW-2","name":"Bad currency","currency":"dollars","is_orderable":true,"state":"LIVE","payout_type":"gift_card","countries_redeemable_in":["US"],"gift_card":{"denominations":{"type":"fixed","available_list":["10.00"]}}}`;
const SPACED = `{ "code" : "RAW-3", "name": "Spaced", "currency": "GBP", "is_orderable": false, "state": "LIVE", "payout_type": "payment", "countries_redeemable_in": [ "GB" ], "payment": { "denominations": { "minimum_value": "1.00", "maximum_value": "9.00" } } }`;
const PRETTY = JSON.stringify(
  {
    code: "RAW-4",
    name: "Pretty → printed",
    currency: "JPY",
    is_orderable: true,
    state: "LIVE",
    payout_type: "gift_card",
    countries_redeemable_in: ["JP"],
    gift_card: { denominations: { type: "fixed", available_list: ["1000", "5000"] } },
  },
  null,
  2,
);

/** Pages by the cursor that asks for them. */
const PAGES: Record<string, string> = {
  "": `{"catalog":[${FANCY},${MALFORMED}],"pagination":{"cursors":{"after":"RAW-2"}}}`,
  "RAW-2": `\ufeff{ "pagination": { "cursors": { "after": "RAW-4" } },\n  "catalog": [\n ${SPACED},\n${PRETTY}\n ] }`,
  "RAW-4": `{"catalog":[],"pagination":{"cursors":{}}}`,
};

let dataDir: string;
let failPage: string | undefined;

function stubClient(): ApiClient {
  const stub: typeof fetch = async (input) => {
    const after = new URL(String(input)).searchParams.get("after") ?? "";
    if (after === failPage) return new Response('{"error":"boom"}', { status: 500 });
    const body = PAGES[after];
    if (body === undefined) return new Response("{}", { status: 404 });
    return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
  };
  return new ApiClient({ baseUrl: "http://catalog.invalid", apiKey: "k", fetch: stub });
}

/**
 * products.json as the sync should write it: a page per line, each product's text as received
 * where it is on one line, else re-serialised.
 */
const EXPECTED = `[\n${FANCY},${MALFORMED},\n${SPACED},${JSON.stringify(JSON.parse(PRETTY))}\n]\n`;

beforeEach(async () => {
  dataDir = await tmpDir("catalog-raw");
  failPage = undefined;
});

describe("products.json keeps each product's text as received", () => {
  it("writes one-line products byte for byte and re-serialises a pretty-printed one", async () => {
    const result = await syncCatalog({ client: stubClient(), dataDir, retry: FAST_RETRY });
    const bytes = await readFile(join(result.dir, "products.json"));
    expect(bytes.toString("utf8")).toBe(EXPECTED);
    expect(result.manifest.products_bytes).toBe(bytes.length);
    expect(result.manifest.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(JSON.parse(bytes.toString("utf8"))).toEqual(
      [FANCY, MALFORMED, SPACED, PRETTY].map((text) => JSON.parse(text)),
    );

    // The malformed product is kept and warned about; the others are indexed as usual.
    expect(result.manifest.warnings).toEqual([
      { code: "RAW-2", problems: [expect.stringMatching(/^currency: /)] },
    ]);
    const index = await loadCurrentIndex(dataDir);
    expect(index!.entries["RAW-1"]).toMatchObject({
      name: 'Café "Deluxe" \\ 日本 😀',
      denominations: { type: "open", min: "5.00", max: "50.00" },
    });
    expect(index!.entries["RAW-2"]).toMatchObject({ denominations: null });
    expect(index!.entries["RAW-3"]).toMatchObject({ payout_type: "payment", countries: ["GB"] });

    // Readers read it a line at a time.
    const snapshot = await openCurrentSnapshot(dataDir);
    const codes: string[] = [];
    for await (const product of snapshot!.products()) codes.push(product.code);
    expect(codes).toEqual(["RAW-1", "RAW-2", "RAW-3", "RAW-4"]);

    // The same catalog again: nothing changed.
    const again = await syncCatalog({ client: stubClient(), dataDir, retry: FAST_RETRY });
    expect(again.diff.summary).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 4 });
    expect(again.manifest.sha256).toBe(result.manifest.sha256);
  });

  it("keeps the received bytes across a resume from a checkpoint", async () => {
    failPage = "RAW-2";
    const checkpoint = { owner: "job-raw", keepOnFailure: true };
    await expect(
      syncCatalog({ client: stubClient(), dataDir, retry: FAST_RETRY, checkpoint }),
    ).rejects.toThrow(/page 2/);
    failPage = undefined;
    const result = await syncCatalog({
      client: stubClient(),
      dataDir,
      retry: FAST_RETRY,
      checkpoint,
    });
    expect(result.resumedAfterPage).toBe(1);
    expect(await readFile(join(result.dir, "products.json"), "utf8")).toBe(EXPECTED);
    expect(result.manifest.warnings.map((w) => w.code)).toEqual(["RAW-2"]);
  });
});
