import { mkdir, readdir, readFile, readlink } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { RawProduct } from "../../src/api/schemas.js";
import type { CatalogSnapshot } from "../../src/catalog/catalog-snapshot.js";
import type { CatalogIndex } from "../../src/catalog/index-entry.js";
import { IndexFileWriter } from "../../src/catalog/index-file-writer.js";
import { loadPreviousRecords } from "../../src/catalog/previous-records.js";
import { ProductsFileWriter } from "../../src/catalog/products-file-writer.js";
import { DIGESTS_HEADER } from "../../src/catalog/record-digest.js";
import { SnapshotWriter } from "../../src/catalog/snapshot-writer.js";
import { generateCatalog } from "../../src/sandbox/index.js";
import { tmpDir } from "../helpers/tmp-dir.js";

let dir: string;
beforeEach(async () => {
  dir = await tmpDir("writer");
});

const META = {
  snapshot: "s",
  api_version: null,
  filters: { orderable_only: false, countries: [], categories: [] },
  pages: 1,
  duration_ms: 0,
};

describe("SnapshotWriter with a code that appears twice", () => {
  const [a, b] = generateCatalog({ products: 2, seed: 3 }) as unknown as RawProduct[];
  const again = { ...a!, name: "Second of the same code" } as RawProduct;

  it("keeps both products, indexes the last with a warning, and diffs the code once", async () => {
    const writer = await SnapshotWriter.create(dir, "2026-01-01T00:00:00Z", undefined);
    await writer.add([a!, b!, again]);
    const { manifest, diff } = await writer.finish(META);

    expect(manifest.product_count).toBe(3);
    expect(manifest.warnings).toEqual([
      { code: a!.code, problems: ["code: appears more than once; the last one is indexed"] },
    ]);
    expect(diff.added).toEqual([
      { code: a!.code, name: a!.name },
      { code: b!.code, name: b!.name },
    ]);
    const index = JSON.parse(await readFile(join(dir, "index.json"), "utf8")) as CatalogIndex;
    expect(index.entries[a!.code]).toMatchObject({ name: again.name, denominations: null });
    const digests = (await readFile(join(dir, "digests.txt"), "utf8")).trimEnd().split("\n");
    expect(digests[0]).toBe(DIGESTS_HEADER);
    expect(digests.slice(1).map((line) => JSON.parse(line.slice(29)))).toEqual([a!.code, b!.code]);
  });
});

describe("SnapshotWriter's diff", () => {
  const [a, b, c, d] = generateCatalog({ products: 4, seed: 5 }) as unknown as RawProduct[];

  it("matches codes that come back in another order", async () => {
    const first = await SnapshotWriter.create(dir, "2026-01-01T00:00:00Z", undefined);
    await first.add([a!, b!, c!]);
    await first.finish(META);
    const snapshot = { name: "first", dir } as CatalogSnapshot;
    const next = join(dir, "next");
    await mkdir(next);
    const renamed = { ...a!, name: "Renamed" } as RawProduct;
    const writer = await SnapshotWriter.create(
      next,
      "2026-01-02T00:00:00Z",
      await loadPreviousRecords(snapshot),
    );
    await writer.add([c!, renamed, d!, c!]);
    const { diff } = await writer.finish(META);

    expect(diff.summary).toEqual({ added: 1, removed: 1, changed: 1, unchanged: 1 });
    expect(diff.added).toEqual([{ code: d!.code, name: d!.name }]);
    expect(diff.removed).toEqual([{ code: b!.code, name: b!.name }]);
    expect(diff.changed).toEqual([
      { code: a!.code, name: "Renamed", fields: { name: { old: a!.name, new: "Renamed" } } },
    ]);
  });
});

describe("SnapshotWriter.create", () => {
  it("closes the files it opened when a later one cannot be opened", async () => {
    // records.ndjson is opened after products.json and index.json: a directory in its place fails it.
    await mkdir(join(dir, "records.ndjson"));
    await expect(SnapshotWriter.create(dir, "2026-01-01T00:00:00Z", undefined)).rejects.toThrow(
      /EISDIR/,
    );
    expect(await openFilesUnder(dir)).toEqual([]);
  });
});

// /dev/full opens for writing and fails every write (ENOSPC), as a full disk would.
describe("the file writers' create", () => {
  it.each([
    ["ProductsFileWriter", () => ProductsFileWriter.create("/dev/full")],
    ["IndexFileWriter", () => IndexFileWriter.create("/dev/full", "2026-01-01T00:00:00Z")],
  ])("%s closes its file when the first write fails", async (_name, create) => {
    await expect(create()).rejects.toThrow(/ENOSPC/);
    expect(await openFilesUnder("/dev/full")).toEqual([]);
  });
});

/** Paths under `dir` this process holds open (Linux: /proc/self/fd). */
async function openFilesUnder(dir: string): Promise<string[]> {
  const targets = await Promise.all(
    (await readdir("/proc/self/fd")).map((fd) =>
      readlink(join("/proc/self/fd", fd)).catch(() => ""),
    ),
  );
  return targets.filter((target) => target.startsWith(dir));
}
