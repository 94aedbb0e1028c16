import { describe, expect, it } from "vitest";
import { catalogSlices } from "../../src/catalog/catalog-slices.js";
import { mulberry32 } from "../../src/sandbox/index.js";

const texts = (body: string | Buffer) =>
  catalogSlices(typeof body === "string" ? Buffer.from(body, "utf8") : body)?.map((s) =>
    s === undefined ? undefined : s.toString("utf8"),
  );

describe("catalogSlices", () => {
  it("cuts each element out byte for byte: escapes, unicode, brackets and commas in strings", () => {
    const elements = [
      String.raw`{"code":"A-1","name":"Caf\u00e9 \"Deluxe\" \\ 日本 😀","url":"https:\/\/x.example\/a?b=[1,2]&c={d}"}`,
      `{"code":"A-2","big":12345678901234567890,"price":1.50,"exp":1E3,"neg":-0.0,"deep":[[{"x":[]}],{}],"t":true,"n":null}`,
      String.raw`{"code":"A-3","catalog":["nested",{"catalog":[1,2]}],"quote":"\\\"","tab":"\t","sep":"\u2028"}`,
    ];
    const body = `{"catalog":[${elements.join(",")}],"pagination":{"cursors":{"after":"A-3"}}}`;
    expect(texts(body)).toEqual(elements);
  });

  it("finds the catalog wherever it is among the top-level keys, and takes the last of two", () => {
    expect(texts('{"pagination":{"catalog":[{"a":1}]},"catalog":[{"b":2}]}')).toEqual(['{"b":2}']);
    expect(texts('{"catalog":[{"a":1}],"x":"catalog","catalog":[{"c":3},{"d":4}]}')).toEqual([
      '{"c":3}',
      '{"d":4}',
    ]);
    expect(texts('{"catalog":[{"a":1}],"catalog":null}')).toBeUndefined();
    expect(texts(String.raw`{"c\u0061talog":[{"e":5}]}`)).toEqual(['{"e":5}']);
    expect(texts('{"catalog":[]}')).toEqual([]);
    expect(texts('{"catalog": [ ] }')).toEqual([]);
  });

  it("returns undefined without a top-level catalog array", () => {
    expect(texts('{"pagination":{}}')).toBeUndefined();
    expect(texts('{"catalog":{"a":[1]}}')).toBeUndefined();
    expect(texts('{"catalog":"[1]"}')).toBeUndefined();
    expect(texts('[{"catalog":[{"a":1}]}]')).toBeUndefined();
    expect(texts('"catalog"')).toBeUndefined();
  });

  it("trims whitespace around elements and keeps spaces inside a one-line element", () => {
    const body = '\ufeff{ "catalog" : [ {"a": 1, "b" : [ 2 ]} ,\r\n\t{"c":"x y"}\n ] }';
    expect(texts(body)).toEqual(['{"a": 1, "b" : [ 2 ]}', '{"c":"x y"}']);
  });

  it("leaves out an element whose text spans lines (pretty-printed), keeping the others", () => {
    const body = `{"catalog":[{"a":1},${JSON.stringify({ b: [1, 2] }, null, 2)},{"c":3}]}`;
    expect(texts(body)).toEqual(['{"a":1}', undefined, '{"c":3}']);
    const pretty = JSON.stringify({ catalog: [{ a: 1 }, { b: 2 }] }, null, 2);
    expect(texts(pretty)).toEqual([undefined, undefined]);
  });

  it("gives nothing for bytes that are not UTF-8 (the parsed text has U+FFFD there)", () => {
    const body = Buffer.concat([
      Buffer.from('{"catalog":[{"name":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}]}'),
    ]);
    expect(catalogSlices(body)).toBeUndefined();
  });

  it("agrees with JSON.parse on random pages", () => {
    const random = mulberry32(99);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    const strings = ["", "a", '"', "\\", "{[,]}", "é", "日本", "😀", "\n\t", "\u2028", "</script>"];
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.3) return pick([0, -1.5, 1e21, true, false, null, ...strings]);
      if (r < 0.6) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 4) }, () => [
          pick(strings) + pick(strings),
          value(depth + 1),
        ]),
      );
    };
    const space = () => pick(["", "", " ", "  "]);
    for (let i = 0; i < 300; i++) {
      const elements = Array.from({ length: Math.floor(random() * 6) }, () =>
        JSON.stringify({ code: `C-${i}`, v: value(0) }),
      );
      const page = { x: value(1), catalog: "placeholder", y: value(1) };
      const body = JSON.stringify(page).replace(
        '"catalog":"placeholder"',
        `"catalog":[${space()}${elements.join(`${space()},${space()}`)}${space()}]`,
      );
      expect(JSON.parse(body).catalog.map((e: unknown) => JSON.stringify(e))).toEqual(elements);
      expect(texts(body)).toEqual(elements);
    }
  });
});
