import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { readProductPages, readProductsFile } from "../../src/catalog/products-file-reader.js";
import { ProductsFileWriter } from "../../src/catalog/products-file-writer.js";
import { tmpDir } from "../helpers/tmp-dir.js";

let dir: string;

beforeEach(async () => {
  dir = await tmpDir("products-file");
});

async function readAll(path: string, end?: number): Promise<unknown[]> {
  const products: unknown[] = [];
  for await (const product of readProductsFile(path, { end })) products.push(product);
  return products;
}

describe("products.json", () => {
  it("is written a page per line, as given or serialised, with its sha256 and length", async () => {
    const path = join(dir, "products.json");
    const writer = await ProductsFileWriter.create(path);
    await writer.appendPage(
      [{ code: "A" }, { code: "B" }],
      Buffer.from('{"code":"A"} ,{ "code":"B"}'),
    );
    const afterFirst = writer.bytes;
    await writer.appendPage([]);
    await writer.appendPage([{ code: "C", n: 1.5 }]);
    const { sha256, bytes } = await writer.finish();

    const text = await readFile(path, "utf8");
    expect(text).toBe('[\n{"code":"A"} ,{ "code":"B"},\n{"code":"C","n":1.5}\n]\n');
    expect(JSON.parse(text)).toEqual([{ code: "A" }, { code: "B" }, { code: "C", n: 1.5 }]);
    expect(bytes).toBe(Buffer.byteLength(text));
    expect(sha256).toBe(createHash("sha256").update(text).digest("hex"));
    expect(writer.products).toBe(3);

    expect(await readAll(path)).toEqual(JSON.parse(text));
    // A checkpoint's length stops the reader after the first page.
    expect(await readAll(path, afterFirst)).toEqual([{ code: "A" }, { code: "B" }]);
    const pages: string[] = [];
    for await (const page of readProductPages(path)) pages.push(page.text);
    expect(pages).toEqual(['{"code":"A"} ,{ "code":"B"}', '{"code":"C","n":1.5}']);
  });

  it("is read in the older layout too, one product per line", async () => {
    const path = join(dir, "products.json");
    await writeFile(path, '[\n{"code":"A"},\n{"code":"B","x":[1,2]}\n]\n');
    expect(await readAll(path)).toEqual([{ code: "A" }, { code: "B", x: [1, 2] }]);
  });
});
