// The order files' items one by one, for the tests of the readers: the import reads them in
// batches (readOrderFileBatches, readOrderRowBatches).
import type { Readable } from "node:stream";
import {
  type CsvItem,
  type ReadOrderRowsOptions,
  readOrderRowBatches,
} from "../../src/import/readers/csv-rows.js";
import {
  type ReadOrderFileOptions,
  readOrderFileBatches,
} from "../../src/import/readers/order-file.js";

export async function* readOrderRows(
  input: Readable | string,
  options: ReadOrderRowsOptions = {},
): AsyncGenerator<CsvItem> {
  for await (const items of readOrderRowBatches(input, options)) yield* items;
}

export async function* readOrderFile(
  path: string,
  options: ReadOrderFileOptions = {},
): AsyncGenerator<CsvItem> {
  for await (const items of readOrderFileBatches(path, options)) yield* items;
}
