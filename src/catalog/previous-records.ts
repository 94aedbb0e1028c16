import { createReadStream } from "node:fs";
import { access } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { compactRecordOf } from "./compact-record.js";
import type { CatalogSnapshot } from "./current-snapshot.js";
import { SNAPSHOT_FILES } from "./snapshot-layout.js";

/**
 * The compact records of a snapshot by code, each as its JSON line: what the next diff compares
 * against. Read from records.ndjson; rebuilt from products.json when that file is missing.
 */
export async function loadCompactRecords(snapshot: CatalogSnapshot): Promise<Map<string, string>> {
  const records = new Map<string, string>();
  const path = join(snapshot.dir, SNAPSHOT_FILES.records);
  if (await exists(path)) {
    const stream = createReadStream(path, { encoding: "utf8" });
    for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
      if (line === "") continue;
      records.set((JSON.parse(line) as { code: string }).code, line);
    }
    return records;
  }
  for await (const product of snapshot.products()) {
    const record = compactRecordOf(product);
    records.set(record.code, JSON.stringify(record));
  }
  return records;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
