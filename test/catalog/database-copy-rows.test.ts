import { describe, expect, it } from "vitest";
import { recordSlices } from "../../src/catalog/catalog-slices.js";
import { CopyLines, copyBytes, copyField } from "../../src/db/copy-rows.js";

const bytes = (text: string) => Buffer.from(text, "utf8");
const texts = (slices: Buffer[] | undefined) => slices?.map((slice) => slice.toString("utf8"));

describe("recordSlices: each product's text in a page's text", () => {
  it("cuts the objects out, whatever their strings, nesting and spacing hold", () => {
    const products = [
      '{"code":"A","name":"brace } bracket ] comma , quote \\" end"}',
      '{"code":"B\\\\","nested":{"list":[1,{"x":"}"}],"e":[]},"n":-1.5e3}',
      '{ "code" : "C" , "name" : "é 🎁 \\u0000" }',
    ];
    const text = bytes(` ${products[0]},${products[1]} ,\t${products[2]} `);
    expect(texts(recordSlices(text, 3))).toEqual(products);
    for (const [i, product] of products.entries()) {
      expect(JSON.parse(texts(recordSlices(text, 3))![i]!)).toEqual(JSON.parse(product));
    }
  });

  it("gives up (the caller serialises the products) when the text is not that many objects", () => {
    expect(recordSlices(bytes('{"code":"A"},{"code":"B"}'), 3)).toBeUndefined();
    expect(recordSlices(bytes('{"code":"A"},"B"'), 2)).toBeUndefined();
    expect(recordSlices(bytes('{"code":"A"},7'), 2)).toBeUndefined();
    expect(recordSlices(bytes('[{"code":"A"}]'), 1)).toBeUndefined();
    expect(recordSlices(bytes('{"code":"A"'), 1)).toBeUndefined();
    expect(recordSlices(bytes(""), 0)).toEqual([]);
  });
});

describe("COPY text built from bytes", () => {
  it("copyBytes escapes as copyField does, and returns plain bytes as they are", () => {
    const odd = "tab\there, new\nline, return\r, back\\slash, é 🎁";
    expect(copyBytes(bytes(odd)).toString("utf8")).toBe(copyField(odd));
    const plain = bytes('{"code":"A"}');
    expect(copyBytes(plain)).toBe(plain);
  });

  it("CopyLines joins each line's text, its bytes and a newline, growing as needed", () => {
    const lines = new CopyLines(1);
    lines.add("1\tb\t", bytes('{"a":"é"}'));
    lines.add("2\t".repeat(1000));
    expect(lines.bytes().toString("utf8")).toBe(`1\tb\t{"a":"é"}\n${"2\t".repeat(1000)}\n`);
  });
});
