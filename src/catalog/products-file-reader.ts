import type { RawProduct } from "../api/schemas.js";
import { parseFileJson } from "./damaged-file-error.js";
import { readNumberedLineBatches } from "./line-reader.js";

/**
 * Reads the products of a `products.json` written by ProductsFileWriter a line (a page) at a
 * time, never the whole file. `end` stops at a byte offset: the part a checkpoint vouches for.
 */
export async function* readProductsFile(
  path: string,
  options: { end?: number } = {},
): AsyncGenerator<RawProduct> {
  for await (const { products } of readProductPages(path, options)) yield* products;
}

/**
 * As readProductsFile, a line at a time: its products, and its text as it stands in the file.
 * A line that is not JSON is a DamagedFileError naming it.
 */
export async function* readProductPages(
  path: string,
  options: { end?: number } = {},
): AsyncGenerator<{ products: RawProduct[]; text: string }> {
  for await (const { lines, first } of readNumberedLineBatches(path, options)) {
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line === "[" || line === "]" || line === "") continue;
      const text = line.endsWith(",") ? line.slice(0, -1) : line;
      yield { products: parseFileJson<RawProduct[]>(`[${text}]`, path, first + i), text };
    }
  }
}
