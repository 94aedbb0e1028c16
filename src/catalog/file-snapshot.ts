import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CatalogSnapshot } from "./catalog-snapshot.js";
import { readCurrentPointer } from "./current-pointer.js";
import { DamagedFileError, parseFileJson } from "./damaged-file-error.js";
import type { CatalogDiff } from "./diff-file.js";
import type { CatalogIndex } from "./index-entry.js";
import { readProductsFile } from "./products-file-reader.js";
import { SNAPSHOT_FILES } from "./snapshot-layout.js";
import type { SnapshotManifest } from "./snapshot-manifest.js";

/** A JSON file of the snapshot; missing or not JSON, it is a DamagedFileError naming it. */
async function readJson<T>(path: string): Promise<T> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    throw new DamagedFileError(path, undefined, "missing");
  }
  return parseFileJson<T>(text, path);
}

/** The snapshot `current.json` points at, or undefined when no sync has published one. */
export async function openFileSnapshot(dataDir: string): Promise<CatalogSnapshot | undefined> {
  const pointer = await readCurrentPointer(dataDir);
  if (!pointer) return undefined;
  const { name, dir } = pointer;
  const manifest = await readJson<SnapshotManifest>(join(dir, SNAPSHOT_FILES.manifest));
  return {
    name,
    dir,
    manifest,
    index: () => readJson<CatalogIndex>(join(dir, SNAPSHOT_FILES.index)),
    products: () => readProductsFile(join(dir, SNAPSHOT_FILES.products)),
    verifyProducts: async () => {
      const path = join(dir, SNAPSHOT_FILES.products);
      if ((await sha256OfFile(path)) !== manifest.sha256) {
        throw new DamagedFileError(
          path,
          undefined,
          "changed since it was published (sha256 differs from manifest.json)",
        );
      }
    },
    diff: async () => {
      try {
        return await readJson<CatalogDiff>(join(dir, SNAPSHOT_FILES.diff));
      } catch (error) {
        if (error instanceof DamagedFileError && error.problem === "missing") return undefined;
        throw error;
      }
    },
  };
}

/** sha256 (hex) of a file's bytes, read in 1 MiB chunks; `signal` stops the reading. */
export async function sha256OfFile(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  const stream = createReadStream(path, { highWaterMark: 1 << 20, signal });
  for await (const chunk of stream) hash.update(chunk);
  return hash.digest("hex");
}
