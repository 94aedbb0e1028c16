import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "../../src/api/client.js";
import { MalformedResponseError, RefusedRequestError } from "../../src/api/errors/index.js";
import type { ProductQuery } from "../../src/api/product-query.js";
import type { CatalogPage, RawProduct } from "../../src/api/schemas.js";
import type { Product, Sandbox } from "../../src/sandbox/index.js";
import { clientOf, rejectionOf, start } from "../helpers/api-client.js";
import { stats } from "../helpers/sandbox.js";

/** Every product of a filtered listing, page by page through pages(). */
async function all(client: ApiClient, query: Omit<ProductQuery, "before"> = {}) {
  const products: RawProduct[] = [];
  for await (const page of client.pages(query)) products.push(...page.catalog);
  return products;
}

const codes = (products: { code: string }[]) => products.map((p) => p.code);

describe("listProducts filters, against what the sandbox's catalog holds", () => {
  let sandbox: Sandbox;
  let client: ApiClient;
  let catalog: Product[];

  beforeAll(async () => {
    sandbox = await start({ products: 1200, seed: 7 });
    client = clientOf(sandbox);
    catalog = sandbox.state.catalog.products;
  });
  afterAll(() => sandbox.close());

  /** The two most common values of a list field, so that each filter matches many products. */
  function commonValues(field: "countries_redeemable_in" | "categories"): [string, string] {
    const counts = new Map<string, number>();
    for (const p of catalog) for (const v of p[field]) counts.set(v, (counts.get(v) ?? 0) + 1);
    const sorted = [...counts].sort((a, b) => b[1] - a[1]).map(([v]) => v);
    return [sorted[0]!, sorted[1]!];
  }

  it("is_orderable true: only and every orderable product; false: every product", async () => {
    const orderable = await all(client, { is_orderable: true });
    expect(orderable.every((p) => p.is_orderable === true)).toBe(true);
    expect(codes(orderable)).toEqual(codes(catalog.filter((p) => p.is_orderable)));
    expect(orderable.length).toBeLessThan(catalog.length);
    expect(codes(await all(client, { is_orderable: false }))).toEqual(codes(catalog));
  });

  it("code: the one product with that code, nothing for an unknown code", async () => {
    const wanted = catalog[617]!;
    const page = await client.listProducts({ code: wanted.code });
    expect(page.catalog).toEqual([wanted]);
    expect((await client.listProducts({ code: "NO-SUCH-CODE" })).catalog).toEqual([]);
  });

  it("countries_redeemable_in with several countries: products redeemable in any of them", async () => {
    const countries = commonValues("countries_redeemable_in");
    const expected = catalog.filter((p) =>
      p.countries_redeemable_in.some((c) => countries.includes(c)),
    );
    const got = await all(client, { countries_redeemable_in: countries });
    expect(codes(got)).toEqual(codes(expected));
    // Several really widen the filter: more than either country alone.
    const first = await all(client, { countries_redeemable_in: [countries[0]] });
    expect(got.length).toBeGreaterThan(first.length);
  });

  it("categories with several categories: products in any of them", async () => {
    const categories = commonValues("categories");
    const expected = catalog.filter((p) => p.categories.some((c) => categories.includes(c)));
    const got = await all(client, { categories });
    expect(codes(got)).toEqual(codes(expected));
    const first = await all(client, { categories: [categories[0]] });
    expect(got.length).toBeGreaterThan(first.length);
  });

  it("filters combine: orderable, in one of the countries and one of the categories", async () => {
    const countries = commonValues("countries_redeemable_in");
    const categories = commonValues("categories");
    const expected = catalog.filter(
      (p) =>
        p.is_orderable &&
        p.countries_redeemable_in.some((c) => countries.includes(c)) &&
        p.categories.some((c) => categories.includes(c)),
    );
    expect(expected.length).toBeGreaterThan(0);
    const got = await all(client, {
      is_orderable: true,
      countries_redeemable_in: countries,
      categories,
    });
    expect(codes(got)).toEqual(codes(expected));
  });

  it("limit: that many products from the start, with the limit echoed", async () => {
    const page = await client.listProducts({ limit: 7 });
    expect(codes(page.catalog)).toEqual(codes(catalog.slice(0, 7)));
    expect(page.pagination.page?.limit).toBe(7);
    expect(page.pagination.cursors).toEqual({ before: catalog[0]!.code, after: catalog[6]!.code });
    const edge = await client.listProducts({ limit: 500 });
    expect(edge.catalog).toHaveLength(500);
    const single = await client.listProducts({ limit: 1 });
    expect(codes(single.catalog)).toEqual([catalog[0]!.code]);
  });

  it("returns products exactly as the sandbox holds them, unknown fields included", async () => {
    const page = await client.listProducts({ limit: 50 });
    expect(page.catalog).toEqual(catalog.slice(0, 50));
  });
});

describe("paging", () => {
  let sandbox: Sandbox;
  let client: ApiClient;
  let catalog: Product[];

  beforeAll(async () => {
    sandbox = await start({ products: 1200, seed: 7 });
    client = clientOf(sandbox);
    catalog = sandbox.state.catalog.products;
  });
  afterAll(() => sandbox.close());

  it("pages() over 1,200 products: 500, 500, 200, then stops on the empty page", async () => {
    const before = await stats(sandbox);
    const pages: CatalogPage[] = [];
    for await (const page of client.pages()) pages.push(page);
    expect(pages.map((p) => p.catalog.length)).toEqual([500, 500, 200]);
    expect(codes(pages.flatMap((p) => p.catalog))).toEqual(codes(catalog));
    expect(pages.map((p) => p.pagination.cursors.after)).toEqual([
      catalog[499]!.code,
      catalog[999]!.code,
      catalog[1199]!.code,
    ]);
    const after = await stats(sandbox);
    const listed = (s: typeof before) => s.requests["GET /v2/product"]?.["200"] ?? 0;
    // Three full pages plus the empty one that ends the list; nothing more.
    expect(listed(after) - listed(before)).toBe(4);
  });

  it("pages() starts from query.after and keeps the filters and limit on every page", async () => {
    const start = catalog[99]!.code;
    const pages: CatalogPage[] = [];
    for await (const page of client.pages({ after: start, limit: 300, is_orderable: true })) {
      pages.push(page);
    }
    const expected = catalog.slice(100).filter((p) => p.is_orderable);
    expect(pages.every((p) => p.catalog.length <= 300)).toBe(true);
    expect(pages.slice(0, -1).every((p) => p.catalog.length === 300)).toBe(true);
    expect(codes(pages.flatMap((p) => p.catalog))).toEqual(codes(expected));
  });

  it("pages backward with `before`, down to the empty page before the first product", async () => {
    const last = await client.listProducts({ after: catalog[999]!.code });
    expect(codes(last.catalog)).toEqual(codes(catalog.slice(1000)));
    const back1 = await client.listProducts({ before: last.pagination.cursors.before! });
    expect(codes(back1.catalog)).toEqual(codes(catalog.slice(500, 1000)));
    const back2 = await client.listProducts({ before: back1.pagination.cursors.before! });
    expect(codes(back2.catalog)).toEqual(codes(catalog.slice(0, 500)));
    expect(back2.pagination.cursors.before).toBe(catalog[0]!.code);
    const end = await client.listProducts({ before: back2.pagination.cursors.before! });
    expect(end.catalog).toEqual([]);
  });

  it("pages backward with `before` and a limit: the `limit` products just before the cursor", async () => {
    const page = await client.listProducts({ before: catalog[40]!.code, limit: 15 });
    expect(codes(page.catalog)).toEqual(codes(catalog.slice(25, 40)));
  });
});

describe("refusals: nothing reaches the server", () => {
  let sandbox: Sandbox;
  let client: ApiClient;

  beforeAll(async () => {
    sandbox = await start();
    client = clientOf(sandbox);
  });
  afterAll(() => sandbox.close());

  it.each([
    ["limit 0", { limit: 0 }],
    ["limit 501", { limit: 501 }],
    ["limit 1.5", { limit: 1.5 }],
    ["limit NaN", { limit: Number.NaN }],
    ["after and before together", { after: "A", before: "B" }],
  ] satisfies [string, ProductQuery][])("listProducts with %s", async (_, query) => {
    const before = (await stats(sandbox)).total_requests;
    const error = await rejectionOf(client.listProducts(query));
    expect(error).toBeInstanceOf(RefusedRequestError);
    expect(error.message).toMatch(/limit|after and before/);
    expect((await stats(sandbox)).total_requests).toBe(before);
  });

  it("pages() with a bad limit refuses before the first request", async () => {
    const before = (await stats(sandbox)).total_requests;
    const error = await rejectionOf(client.pages({ limit: 0 }).next());
    expect(error).toBeInstanceOf(RefusedRequestError);
    expect((await stats(sandbox)).total_requests).toBe(before);
  });
});

describe("pages() stops with a clear error on a broken page", () => {
  let sandbox: Sandbox;
  let client: ApiClient;
  let catalog: Product[];

  beforeAll(async () => {
    sandbox = await start({ products: 30, seed: 3 });
    client = clientOf(sandbox);
    catalog = sandbox.state.catalog.products;
  });
  afterAll(() => sandbox.close());

  async function setPageFault(fault: unknown): Promise<void> {
    const res = await fetch(`${sandbox.url}/_sandbox/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ product_page_fault: fault }),
    });
    expect(res.status).toBe(200);
  }

  /** Runs pages() to its end; the pages seen and the error it ended with, if any. */
  async function drain(query: Omit<ProductQuery, "before">) {
    const seen: CatalogPage[] = [];
    try {
      for await (const page of client.pages(query)) {
        seen.push(page);
        // A guard against the loop the client is meant to prevent.
        if (seen.length > 50) throw new Error("pages() kept going");
      }
    } catch (error) {
      return { seen, error: error as Error };
    }
    return { seen, error: undefined };
  }

  it("a cursor that does not advance", async () => {
    // The second page answers with its own request cursor as `after`.
    const cursor = catalog[9]!.code;
    await setPageFault({ after: cursor, kind: "stuck_cursor", times: 1 });
    const { seen, error } = await drain({ limit: 10 });
    expect(seen.map((p) => p.catalog.length)).toEqual([10, 10]);
    expect(error).toBeInstanceOf(MalformedResponseError);
    const malformed = error as MalformedResponseError;
    expect(malformed.type).toBe("cursor_not_advancing");
    expect(malformed.outcome).toBe("retry-same-key");
    expect(malformed.message).toContain("did not advance");
    expect(malformed.message).toContain(cursor);
  });

  it("a page whose body is not JSON", async () => {
    await setPageFault({ after: catalog[9]!.code, kind: "malformed", times: 1 });
    const { seen, error } = await drain({ limit: 10 });
    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect((error as MalformedResponseError).type).toBe("malformed_response");
    expect(error?.message).toMatch(/GET \/v2\/product response: body is not JSON/);
  });

  it("a first page whose body is not JSON", async () => {
    await setPageFault({ after: null, kind: "malformed", times: 1 });
    const { seen, error } = await drain({});
    expect(seen).toHaveLength(0);
    expect(error).toBeInstanceOf(MalformedResponseError);
  });

  it("a page whose products come without an after cursor", async () => {
    // A product list served by a stand-in fetch: products, but the cursors are missing.
    const stub = clientOf(sandbox, {
      fetch: async () =>
        new Response(JSON.stringify({ catalog: [{ code: "X-1" }], pagination: { cursors: {} } }), {
          status: 200,
          headers: { "content-type": "application/json" },
        }),
    });
    const error = await rejectionOf(
      (async () => {
        for await (const _ of stub.pages()) {
          // drain
        }
      })(),
    );
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect((error as MalformedResponseError).type).toBe("malformed_page");
    expect(error.message).toContain("no after cursor");
  });

  it("a page without a catalog array", async () => {
    const stub = clientOf(sandbox, {
      fetch: async () => new Response(JSON.stringify({ products: [] }), { status: 200 }),
    });
    const error = await rejectionOf(stub.listProducts());
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.message).toContain("catalog page");
  });
});
