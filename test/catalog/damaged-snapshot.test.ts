import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import { DamagedFileError } from "../../src/catalog/damaged-file-error.js";
import { leftoverTmpDirs, useCatalogFixture } from "../helpers/catalog-fixture.js";
import { control } from "../helpers/sandbox.js";

const fx = useCatalogFixture();

// A snapshot is never modified after publication; these damage one by hand, as a bad disk or
// an editor would, and expect the sync to name the file and line and publish nothing.
describe("a sync whose current snapshot is damaged", () => {
  it("names the index.json line of a changed product, publishes nothing, and goes on once told to", async () => {
    const first = await fx.sync();
    const product = fx.sandbox.state.catalog.products[7]!;
    const line = await cutLine(join(first.dir, "index.json"), JSON.stringify(product.code));
    await updateProduct(product.code);

    expect((await failedSync()).message).toMatch(
      syncFailure(`${first.dir}/index.json line ${line}: not valid JSON (*)`),
    );
    expect((await openCurrentSnapshot(fx.dataDir))!.name).toBe(first.snapshot);
    expect(await leftoverTmpDirs(fx.dataDir)).toEqual([]);

    await rm(join(fx.dataDir, "catalog", "current.json"));
    const next = await fx.sync();
    expect(next.diff).toMatchObject({ from: null, summary: { added: 1200 } });
  });

  it("names the records.ndjson line", async () => {
    const first = await fx.sync();
    const path = join(first.dir, "records.ndjson");
    const code = JSON.parse((await readFile(path, "utf8")).split("\n")[0]!).code as string;
    const line = await cutLine(path, `{"code":${JSON.stringify(code)}`);
    await updateProduct(code);
    expect((await failedSync()).message).toMatch(
      syncFailure(`${path} line ${line}: not valid JSON (*)`),
    );
  });

  it("names the products.json line when the digests must be computed from it", async () => {
    const first = await fx.sync();
    await rm(join(first.dir, "digests.txt"));
    const path = join(first.dir, "products.json");
    // products.json holds a page per line after its opening "[": line 3 is the second page.
    const lines = (await readFile(path, "utf8")).split("\n");
    lines[2] = lines[2]!.slice(0, 100);
    await writeFile(path, lines.join("\n"));
    expect((await failedSync()).message).toMatch(syncFailure(`${path} line 3: not valid JSON (*)`));
  });

  it("names a manifest.json that is missing", async () => {
    const first = await fx.sync();
    await rm(join(first.dir, "manifest.json"));
    expect((await failedSync()).message).toMatch(
      syncFailure(`${first.dir}/manifest.json: missing`),
    );
  });
});

describe("reading a damaged current snapshot", () => {
  it("names the file for catalog show and order validation", async () => {
    const first = await fx.sync();
    await writeFile(join(first.dir, "index.json"), '{"fetched_at":');
    const snapshot = (await openCurrentSnapshot(fx.dataDir))!;
    const error = await snapshot.index().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DamagedFileError);
    expect((error as Error).message).toMatch(
      new RegExp(`^${literal(`${first.dir}/index.json: not valid JSON (`)}.+\\)$`),
    );
  });
});

describe("a current snapshot whose products.json was changed", () => {
  it("fails verification even when the file is still valid JSON", async () => {
    const first = await fx.sync();
    const snapshot = (await openCurrentSnapshot(fx.dataDir))!;
    await snapshot.verifyProducts();
    const path = join(first.dir, "products.json");
    const product = fx.sandbox.state.catalog.products[0]!;
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace(JSON.stringify(product.name), '"Edited by hand"'));
    await expect(snapshot.verifyProducts()).rejects.toThrow(
      `${path}: changed since it was published (sha256 differs from manifest.json)`,
    );
  });
});

/**
 * The one line a sync fails with when `damage` (a file, line and problem; `*` stands for
 * JSON.parse's own words, which vary between Node versions) is in the current snapshot.
 */
function syncFailure(damage: string): RegExp {
  const expected =
    `catalog sync failed: cannot compare with the current snapshot: ${damage}; nothing was ` +
    "published and the current snapshot is unchanged; to sync without comparing, remove " +
    `${fx.dataDir}/catalog/current.json`;
  return new RegExp(`^${expected.split("*").map(literal).join(".+")}$`);
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Cuts the line of `path` that starts with `prefix` to 40 characters; returns its number. */
async function cutLine(path: string, prefix: string): Promise<number> {
  const lines = (await readFile(path, "utf8")).split("\n");
  const at = lines.findIndex((line) => line.startsWith(prefix));
  expect(at).toBeGreaterThan(-1);
  lines[at] = lines[at]!.slice(0, 40);
  await writeFile(path, lines.join("\n"));
  return at + 1;
}

async function updateProduct(code: string): Promise<void> {
  await control(fx.sandbox, "/_sandbox/catalog", {
    mutate: { update: [{ code, state: "TEMPORARILY_DISABLED" }] },
  });
}

async function failedSync(): Promise<Error> {
  const error = await fx.sync().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).name).toBe("RunError");
  return error as Error;
}
