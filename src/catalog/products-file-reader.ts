import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { RawProduct } from "../api/schemas.js";

/**
 * Reads the products of a `products.json` written by ProductsFileWriter one line at a time,
 * never the whole file. `end` stops at a byte offset: the part a checkpoint vouches for.
 */
export async function* readProductsFile(
  path: string,
  options: { end?: number } = {},
): AsyncGenerator<RawProduct> {
  if (options.end !== undefined && options.end <= 0) return;
  const stream = createReadStream(path, {
    encoding: "utf8",
    end: options.end === undefined ? undefined : options.end - 1,
  });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of lines) {
      if (line === "[" || line === "]" || line === "") continue;
      const json = line.endsWith(",") ? line.slice(0, -1) : line;
      yield JSON.parse(json) as RawProduct;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}
