import { describe, expect, it } from "vitest";
import { MalformedResponseError } from "../../src/api/errors/index.js";
import { receivePage } from "../../src/catalog/catalog-page.js";

const ORIGIN = { number: 3, requestedAfter: "c2", apiVersion: null };

function received(body: string | Buffer) {
  return receivePage(Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8"), ORIGIN);
}

/** What the page must come to: JSON.parse of the whole body decides. */
function parsedWhole(body: string) {
  const page = JSON.parse(body) as {
    catalog: unknown[];
    pagination: { cursors: { after: string } };
  };
  return { products: page.catalog, after: page.pagination.cursors.after };
}

describe("receivePage", () => {
  it("reads the cursor first and the products on complete(), storing them as received", () => {
    const body = String.raw`{"catalog":[{"code":"A","n":1.50},{"code":"B","s":"\u00e9 \"q\""}],"pagination":{"cursors":{"after":"c3"}}}`;
    const page = received(body);
    expect(page).toMatchObject({ after: "c3", empty: false });
    const done = page.complete();
    expect(done).toMatchObject({ ...parsedWhole(body), number: 3, requestedAfter: "c2" });
    expect(done.text.toString("utf8")).toBe(
      String.raw`{"code":"A","n":1.50},{"code":"B","s":"\u00e9 \"q\""}`,
    );
  });

  it.each([
    [
      'a nested `],"pagination":` in a product',
      '{"catalog":[{"code":"A","x":[1],"pagination":{"cursors":{"after":"evil"}}}],"pagination":{"cursors":{"after":"c3"}}}',
    ],
    [
      "one at the end of the last product",
      '{"catalog":[{"code":"A","x":{"y":[1],"pagination":{"cursors":{"after":"evil"}}}}],"pagination":{"cursors":{"after":"c3"}}}',
    ],
    [
      "a top-level key between the two",
      '{"catalog":[{"code":"A"}],"other":[1],"pagination":{"cursors":{"after":"c3"}}}',
    ],
    [
      "a second catalog key",
      String.raw`{"catalog":[{"code":"X"}],"c\u0061talog":[{"code":"A"}],"pagination":{"cursors":{"after":"c3"}}}`,
    ],
    ["pagination first", '{"pagination":{"cursors":{"after":"c3"}},"catalog":[{"code":"A"}]}'],
    [
      "pretty-printed",
      `{\n  "catalog": [\n    {"code": "A"}\n  ],\n  "pagination": {"cursors": {"after": "c3"}}\n}\n`,
    ],
    [
      "a byte-order mark",
      `\ufeff{"catalog":[{"code":"A"}],"pagination":{"cursors":{"after":"c3"}}}`,
    ],
  ])("agrees with JSON.parse of the whole body with %s", (_label, body) => {
    const text = body.replace(/^\ufeff/, "");
    const page = received(body);
    expect(page.after).toBe(parsedWhole(text).after);
    const done = page.complete();
    expect(done).toMatchObject(parsedWhole(text));
    // The stored line is the products and nothing else, on one line.
    expect(JSON.parse(`[${done.text.toString("utf8")}]`)).toEqual(parsedWhole(text).products);
    expect(done.text.includes(0x0a)).toBe(false);
  });

  it("keeps the products' text whole, spacing between them included", () => {
    const body =
      '{"catalog":[ {"code":"A"} , {"code":"B"} ],"pagination":{"cursors":{"after":"c3"}}}';
    expect(received(body).complete().text.toString("utf8")).toBe(' {"code":"A"} , {"code":"B"} ');
  });

  it("stores a product spread over lines re-serialised, and one-line ones as received", () => {
    const body = `{"catalog":[{"code":"A", "k": 1.0},\n{"code":"B",\n"k":2}],"pagination":{"cursors":{"after":"c3"}}}`;
    expect(received(body).complete().text.toString("utf8")).toBe(
      `{"code":"A", "k": 1.0},{"code":"B","k":2}`,
    );
  });

  it("re-serialises every product of a body that is not UTF-8", () => {
    const body = Buffer.concat([
      Buffer.from('{"catalog":[{"code":"A","n":"'),
      Buffer.from([0xff]),
      Buffer.from('"}],"pagination":{"cursors":{"after":"c3"}}}'),
    ]);
    const done = received(body).complete();
    expect(done.products).toEqual([{ code: "A", n: "\ufffd" }]);
    expect(done.text.toString("utf8")).toBe('{"code":"A","n":"\ufffd"}');
  });

  it("knows an empty page without parsing products", () => {
    for (const body of [
      '{"catalog":[],"pagination":{"cursors":{}}}',
      '{"catalog":[ ],"pagination":{}}',
    ]) {
      const page = received(body);
      expect(page.empty).toBe(true);
      expect(page.complete().products).toEqual([]);
    }
  });

  it.each([
    [
      "not JSON",
      '{"catalog":[{"code":"A"},],"pagination":{"cursors":{"after":"c3"}}}',
      /page 3 \(after "c2"\): the body is not JSON/,
    ],
    [
      "no catalog array",
      '{"products":[],"pagination":{}}',
      /page 3 \(after "c2"\): the response has no catalog array/,
    ],
    [
      "a product without code",
      '{"catalog":[{"code":"A"},{"name":"x"}],"pagination":{"cursors":{"after":"c3"}}}',
      /catalog\[1\] has no product code/,
    ],
    [
      "products but no cursor",
      '{"catalog":[{"code":"A"}],"pagination":{"cursors":{}}}',
      /products but no pagination\.cursors\.after/,
    ],
  ])("refuses a page with %s", (_label, body, message) => {
    const attempt = () => received(body).complete();
    expect(attempt).toThrow(MalformedResponseError);
    expect(attempt).toThrow(message);
  });
});
