import type { RawProduct } from "../api/schemas.js";
import { readLineBatches } from "./line-reader.js";

/**
 * Reads the products of a `products.json` written by ProductsFileWriter one line at a time,
 * never the whole file. `end` stops at a byte offset: the part a checkpoint vouches for.
 */
export async function* readProductsFile(
  path: string,
  options: { end?: number } = {},
): AsyncGenerator<RawProduct> {
  for await (const lines of readLineBatches(path, options)) {
    for (const line of lines) {
      if (line === "[" || line === "]" || line === "") continue;
      const json = line.endsWith(",") ? line.slice(0, -1) : line;
      yield JSON.parse(json) as RawProduct;
    }
  }
}

/** As readProductsFile, with each product's JSON text as it stands in the file. */
export async function* readProductLines(
  path: string,
  options: { end?: number } = {},
): AsyncGenerator<{ product: RawProduct; text: string }> {
  for await (const lines of readLineBatches(path, options)) {
    for (const line of lines) {
      if (line === "[" || line === "]" || line === "") continue;
      const text = line.endsWith(",") ? line.slice(0, -1) : line;
      yield { product: JSON.parse(text) as RawProduct, text };
    }
  }
}
