import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  generateCatalog,
  type Product,
  type Sandbox,
  startSandbox,
} from "../../src/sandbox/index.js";
import { call } from "../helpers/sandbox.js";

const PRODUCT_FIELDS = [
  "approval_state",
  "categories",
  "code",
  "countries_redeemable_in",
  "currency",
  "customer_service",
  "discount_multiplier",
  "name",
  "state",
  "is_orderable",
  "payout_type",
  "availability",
];
const BASE_FIELDS = [
  "assets",
  "balance_check_url",
  "content_resources",
  "expiry",
  "redeemable_at",
  "website_url",
  "barcode_format",
  "e_code_usage_type",
];

describe("generateCatalog", () => {
  it("is the same for the same size and seed, and different for another seed", () => {
    expect(generateCatalog({ products: 200, seed: 5 })).toEqual(
      generateCatalog({ products: 200, seed: 5 }),
    );
    expect(generateCatalog({ products: 200, seed: 6 })).not.toEqual(
      generateCatalog({ products: 200, seed: 5 }),
    );
  });

  it("has sorted unique codes and every field of the interface on every product", () => {
    const products = generateCatalog({ products: 1200, seed: 9 });
    const codes = products.map((p) => p.code);
    expect(new Set(codes).size).toBe(1200);
    expect([...codes].sort()).toEqual(codes);
    for (const p of products) {
      for (const field of PRODUCT_FIELDS) expect(p, `${p.code}.${field}`).toHaveProperty(field);
      expect(Object.keys(p.customer_service).sort()).toEqual(["phone_number", "website_url"]);
      expect(p.discount_multiplier).toMatch(/^0\.\d{4}$/);
      const details = p.gift_card ?? p.subscription;
      if (details) for (const field of BASE_FIELDS) expect(details).toHaveProperty(field);
      if (p.gift_card) expect(p.payout_type).toBe("gift_card");
      if (p.subscription) expect(p.subscription.subscription_plans.length).toBeGreaterThan(0);
      if (p.payment) expect(p.payment.denominations.minimum_value).toBeDefined();
      expect([p.gift_card, p.subscription, p.payment].filter(Boolean)).toHaveLength(1);
    }
  });

  it("shows every kind of product, currency and oddity of real data", () => {
    const products = generateCatalog({ products: 1200, seed: 9 });
    const has = (fn: (p: Product) => boolean) => products.some(fn);
    expect(has((p) => p.gift_card?.denominations.type === "open")).toBe(true);
    expect(has((p) => p.gift_card?.denominations.type === "fixed")).toBe(true);
    expect(has((p) => p.payout_type === "subscription")).toBe(true);
    expect(has((p) => p.payout_type === "payment")).toBe(true);
    for (const currency of ["USD", "EUR", "GBP", "CAD", "JPY"]) {
      expect(has((p) => p.currency === currency)).toBe(true);
    }
    expect(has((p) => !p.is_orderable && p.state === "LIVE")).toBe(true);
    expect(has((p) => p.state === "TEMPORARILY_DISABLED")).toBe(true);
    expect(has((p) => p.customer_service.phone_number === null)).toBe(true);
    expect(has((p) => p.gift_card?.website_url === null)).toBe(true);
    const open = products.find((p) => p.gift_card?.denominations.type === "open");
    expect(open?.gift_card?.denominations.available_list).toBeNull();
    const jpy = products.find((p) => p.currency === "JPY" && p.gift_card);
    expect(jpy?.gift_card?.denominations.minimum_value).toMatch(/^\d+$/);
  });

  it("shows every kind even in a tiny catalog", () => {
    const products = generateCatalog({ products: 8, seed: 1 });
    const types = new Set(products.map((p) => p.payout_type));
    expect(types).toEqual(new Set(["gift_card", "subscription", "payment"]));
    expect(products.some((p) => p.currency === "JPY")).toBe(true);
    expect(products.some((p) => !p.is_orderable)).toBe(true);
  });
});

describe("GET /v2/product", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ products: 1200, seed: 11 });
  });
  afterAll(() => sandbox.close());

  const page = (query = "") => call(sandbox, `/v2/product${query}`);

  it("serves 500, 500 and 200 products, then an empty page", async () => {
    const sizes: number[] = [];
    const codes: string[] = [];
    let after: string | undefined;
    for (;;) {
      const res = await page(after ? `?after=${encodeURIComponent(after)}` : "");
      expect(res.status).toBe(200);
      expect(res.headers.get("x-api-version")).toBe("2024-02-05");
      const { catalog, pagination } = res.json;
      sizes.push(catalog.length);
      expect(pagination.page.limit).toBe(500);
      if (catalog.length === 0) break;
      expect(pagination.cursors.before).toBe(catalog[0].code);
      expect(pagination.cursors.after).toBe(catalog[catalog.length - 1].code);
      codes.push(...catalog.map((p: Product) => p.code));
      after = pagination.cursors.after;
    }
    expect(sizes).toEqual([500, 500, 200, 0]);
    expect(codes).toEqual(sandbox.state.catalog.products.map((p) => p.code));
  });

  it("pages backward with before", async () => {
    const first = await page("?limit=100");
    const second = await page(`?limit=100&after=${first.json.pagination.cursors.after}`);
    const back = await page(`?limit=100&before=${second.json.pagination.cursors.before}`);
    expect(back.json.catalog).toEqual(first.json.catalog);
    expect(back.json.pagination.cursors).toEqual(first.json.pagination.cursors);
    const partial = await page(`?limit=100&before=${first.json.catalog[10].code}`);
    expect(partial.json.catalog).toEqual(first.json.catalog.slice(0, 10));
    const none = await page(`?before=${first.json.catalog[0].code}`);
    expect(none.json.catalog).toEqual([]);
  });

  it("takes a cursor that is no longer a product code", async () => {
    const all = sandbox.state.catalog.products;
    const gone = `${(all[99] as Product).code}~`;
    const res = await page(`?limit=5&after=${encodeURIComponent(gone)}`);
    expect(res.json.catalog.map((p: Product) => p.code)).toEqual(
      all.slice(100, 105).map((p) => p.code),
    );
  });

  it("filters by is_orderable, code, countries and categories", async () => {
    const all = sandbox.state.catalog.products;
    const orderable = await page("?is_orderable=true&limit=500");
    const expected = all.filter((p) => p.is_orderable).slice(0, 500);
    expect(orderable.json.catalog.map((p: Product) => p.code)).toEqual(expected.map((p) => p.code));
    const everything = await page("?is_orderable=false&limit=500");
    expect(everything.json.catalog).toHaveLength(500);
    expect(everything.json.catalog.some((p: Product) => !p.is_orderable)).toBe(true);

    const one = all[321] as Product;
    const byCode = await page(`?code=${one.code}`);
    expect(byCode.json.catalog).toEqual([one]);

    const countries = await page("?countries_redeemable_in=JP&countries_redeemable_in=GB");
    const inCountries = all.filter((p) =>
      p.countries_redeemable_in.some((c) => c === "JP" || c === "GB"),
    );
    expect(countries.json.catalog.map((p: Product) => p.code)).toEqual(
      inCountries.slice(0, 500).map((p) => p.code),
    );
    expect(inCountries.some((p) => p.countries_redeemable_in.includes("JP"))).toBe(true);

    const categories = await page("?categories=travel&categories=jewellers");
    const inCategories = all.filter((p) =>
      p.categories.some((c) => c === "travel" || c === "jewellers"),
    );
    expect(categories.json.catalog.map((p: Product) => p.code)).toEqual(
      inCategories.slice(0, 500).map((p) => p.code),
    );
  });

  it("pages through a filter, backward too", async () => {
    const expected = sandbox.state.catalog.products.filter(
      (p) => p.is_orderable && p.countries_redeemable_in.includes("US"),
    );
    const first = await page("?is_orderable=true&countries_redeemable_in=US&limit=7");
    const next = await page(
      `?is_orderable=true&countries_redeemable_in=US&limit=7&after=${first.json.pagination.cursors.after}`,
    );
    expect(next.json.catalog.map((p: Product) => p.code)).toEqual(
      expected.slice(7, 14).map((p) => p.code),
    );
    const back = await page(
      `?is_orderable=true&countries_redeemable_in=US&limit=7&before=${next.json.pagination.cursors.before}`,
    );
    expect(back.json.catalog).toEqual(first.json.catalog);
  });

  it("refuses bad paging with pagination_error and bad filters with bad_request", async () => {
    const first = (await page("?limit=1")).json.catalog[0].code;
    for (const query of [
      `?after=${first}&before=${first}`,
      "?limit=0",
      "?limit=501",
      "?limit=abc",
      "?limit=1.5",
      "?limit=-3",
    ]) {
      const res = await page(query);
      expect(res.status, query).toBe(400);
      expect(res.json.type, query).toBe("pagination_error");
      expect(res.json.message).toEqual(expect.any(String));
      expect(res.json.help).toEqual(expect.any(String));
    }
    expect((await page("?is_orderable=maybe")).json.type).toBe("bad_request");
    expect((await page("?countries_redeemable_in=usa")).json.type).toBe("bad_request");
  });

  it("serves one product by code, 404 when unknown", async () => {
    const one = sandbox.state.catalog.products[5] as Product;
    const res = await call(sandbox, `/v2/product/${one.code}`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual(one);
    const missing = await call(sandbox, "/v2/product/NOPE-00000");
    expect(missing.status).toBe(404);
    expect(missing.json.type).toBe("not_found");
  });

  it("lists countries and categories", async () => {
    const countries = await call(sandbox, "/v2/product/countries");
    expect(countries.json.countries).toContain("US");
    const categories = await call(sandbox, "/v2/product/categories");
    expect(categories.json.categories).toContainEqual({ code: "travel" });
  });
});

describe("catalog and page faults at run time", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ products: 50, seed: 3 });
  });
  afterAll(() => sandbox.close());

  const control = (path: string, body: unknown) =>
    call(sandbox, path, { method: "POST", body, key: null });

  it("regenerates, mutates and replaces the catalog", async () => {
    expect((await control("/_sandbox/catalog", { products: 20, seed: 4 })).json.products).toBe(20);
    expect(sandbox.state.catalog.products).toEqual(generateCatalog({ products: 20, seed: 4 }));
    const [a, b] = sandbox.state.catalog.products as [Product, Product];
    const added = { ...a, code: "ZZZ-NEW-1" };
    const res = await control("/_sandbox/catalog", {
      mutate: { remove: [a.code], update: [{ code: b.code, is_orderable: false }], add: [added] },
    });
    expect(res.json.products).toBe(20);
    expect(sandbox.state.catalog.get(a.code)).toBeUndefined();
    expect(sandbox.state.catalog.get(b.code)?.is_orderable).toBe(false);
    const last = await call(sandbox, "/v2/product?limit=1&before=ZZZZ");
    expect(last.json.catalog[0].code).toBe("ZZZ-NEW-1");

    const bad = await control("/_sandbox/catalog", { mutate: { update: [{ code: "NOPE" }] } });
    expect(bad.status).toBe(400);

    sandbox.setCatalog(generateCatalog({ products: 50, seed: 3 }));
    expect((await call(sandbox, "/v2/product")).json.catalog).toHaveLength(50);
  });

  it("breaks the page after a cursor: 500, stuck cursor, malformed", async () => {
    const first = await call(sandbox, "/v2/product?limit=10");
    const after = first.json.pagination.cursors.after;
    const next = `/v2/product?limit=10&after=${after}`;

    await control("/_sandbox/faults", { product_page_fault: { after, kind: "500", times: 1 } });
    const failed = await call(sandbox, next);
    expect(failed.status).toBe(500);
    expect(failed.json.type).toBe("internal_server_error");
    expect((await call(sandbox, next)).status).toBe(200);

    await control("/_sandbox/faults", { product_page_fault: { after, kind: "stuck_cursor" } });
    const stuck = await call(sandbox, next);
    expect(stuck.json.pagination.cursors.after).toBe(after);
    expect((await call(sandbox, next)).json.pagination.cursors.after).toBe(after);

    await control("/_sandbox/faults", { product_page_fault: { after, kind: "malformed" } });
    const malformed = await call(sandbox, next);
    expect(malformed.status).toBe(200);
    expect(() => JSON.parse(malformed.text)).toThrow();
    expect((await call(sandbox, "/v2/product?limit=10")).status).toBe(200);

    const cleared = await control("/_sandbox/faults", { product_page_fault: null });
    expect(cleared.json.product_page_fault).toBeNull();
    expect((await call(sandbox, next)).json.pagination.cursors.after).not.toBe(after);

    const wrong = await control("/_sandbox/faults", { product_page_fault: { kind: "boom" } });
    expect(wrong.status).toBe(400);
  });

  it("can give an empty page null cursors instead of none", async () => {
    const end = "/v2/product?after=ZZZZ";
    expect((await call(sandbox, end)).json.pagination.cursors).toEqual({});
    await control("/_sandbox/faults", { empty_page_cursors: "null" });
    expect((await call(sandbox, end)).json.pagination.cursors).toEqual({
      after: null,
      before: null,
    });
    await control("/_sandbox/faults", { empty_page_cursors: "omit" });
  });
});
