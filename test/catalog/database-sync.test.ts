import { describe, expect, it } from "vitest";
import type { RawProduct } from "../../src/api/schemas.js";
import { loadCurrentIndex, openCurrentSnapshot } from "../../src/catalog/current-snapshot.js";
import { ShrinkRefusedError } from "../../src/catalog/shrink-refused-error.js";
import { DatabaseSnapshotWriter } from "../../src/db/catalog-snapshot-writer.js";
import { databaseCatalogStore } from "../../src/db/catalog-store.js";
import { publishSnapshotRow, writeChanges } from "../../src/db/catalog-sync.js";
import { inTransaction } from "../../src/db/open-database.js";
import { snapshotCheck } from "../../src/doctor/snapshot-check.js";
import { RunError } from "../../src/errors/run-error.js";
import { generateCatalog } from "../../src/sandbox/index.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { cursorOfPage, useCatalogFixture } from "../helpers/catalog-fixture.js";
import { useTestDatabase } from "../helpers/database.js";
import { control } from "../helpers/sandbox.js";

const fx = useCatalogFixture();
const db = useTestDatabase("catalog_sync");

const META = {
  snapshot: "s",
  api_version: null,
  filters: { orderable_only: false, countries: [], categories: [] },
  pages: 1,
  duration_ms: 0,
};

const store = () => databaseCatalogStore(fx.dataDir, db.database);
const sync = (extra: Parameters<typeof fx.sync>[0] = {}) => fx.sync({ store: store(), ...extra });

/** The current snapshot's name in catalog_current, read as an application would. */
async function currentName(): Promise<string | undefined> {
  const { rows } = await db.pool.query("SELECT DISTINCT snapshot FROM current_products");
  return rows[0]?.snapshot;
}

describe("catalog sync into PostgreSQL", () => {
  it("publishes the snapshot, its products and its changes in the database, none in files", async () => {
    const first = await sync();
    expect(first.manifest.product_count).toBe(1200);
    expect(first.dir).toBe(`postgresql:${db.schema}/${first.snapshot}`);
    const snapshot = (await openCurrentSnapshot(store()))!;
    expect(snapshot.name).toBe(first.snapshot);
    await snapshot.verifyProducts();
    let count = 0;
    for await (const product of snapshot.products()) {
      expect(product.code).toBe(fx.sandbox.state.catalog.products[count]!.code);
      count += 1;
    }
    expect(count).toBe(1200);
    const index = (await loadCurrentIndex(store()))!;
    expect(Object.keys(index.entries).length).toBe(first.manifest.index_entries);
    expect(await openCurrentSnapshot(fx.dataDir)).toBeUndefined();
    expect(await currentName()).toBe(first.snapshot);

    const changed = fx.sandbox.state.catalog.products[5]!;
    await control(fx.sandbox, `/_sandbox/products/${changed.code}`, { is_orderable: false });
    const second = await sync();
    expect(second.diff.from).toBe(first.snapshot);
    expect(second.diff.summary).toMatchObject({ added: 0, removed: 0, changed: 1 });
    const { rows } = await db.pool.query(
      "SELECT code, change, field, old_value, new_value FROM recent_changes WHERE snapshot = $1",
      [second.snapshot],
    );
    expect(rows).toEqual([
      {
        code: changed.code,
        change: "changed",
        field: "is_orderable",
        old_value: true,
        new_value: false,
      },
    ]);
    const diff = await (await openCurrentSnapshot(store()))!.diff();
    expect(diff?.changed[0]?.fields).toEqual({ is_orderable: { old: true, new: false } });
    const { rows: current } = await db.pool.query(
      "SELECT is_orderable FROM current_products WHERE code = $1",
      [changed.code],
    );
    expect(current).toEqual([{ is_orderable: false }]);
  });

  it("keeps the newest snapshots only (retention), never the current one", async () => {
    for (let i = 0; i < 3; i++) await sync({ keep: 2 });
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM catalog_snapshots");
    expect(rows[0].n).toBe(2);
    // Each snapshot's products are a partition of their own; a pruned one's is dropped.
    const { rows: partitions } = await db.pool.query(
      "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'catalog_products_%'",
      [db.schema],
    );
    expect(partitions[0].n).toBe(2);
    // A pruned snapshot's changes go with it (the first snapshot's 1,200 'added' rows).
    const { rows: orphans } = await db.pool.query(
      "SELECT count(*)::int AS n FROM catalog_changes WHERE snapshot_id NOT IN (SELECT id FROM catalog_snapshots)",
    );
    expect(orphans[0].n).toBe(0);
  });

  it("a first snapshot records every code as added; a code sent twice is one product, the last", async () => {
    // The sandbox refuses a repeated code: the writer is fed as the sync feeds it.
    const [a, b, c] = generateCatalog({ products: 3, seed: 3 }) as unknown as RawProduct[];
    const again = { ...a!, name: "The same code again" } as RawProduct;
    const name = "2026-01-01T00-00-00.000Z";
    const { manifest } = await inTransaction(db.database, async (client) => {
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO catalog_snapshots (name, fetched_at, filters, product_count, pages, checksum,
           manifest, diff) VALUES ($1, now(), '{}', 0, 0, '', '{}', '{}') RETURNING id`,
        [name],
      );
      const id = rows[0]!.id;
      const writer = await DatabaseSnapshotWriter.start(
        client,
        id,
        "2026-01-01T00:00:00Z",
        undefined,
      );
      await writer.add([a!, b!, again, c!]);
      const written = await writer.finish({ ...META, snapshot: name });
      await writeChanges(client, id, written.diff, { addedFromPartition: true });
      await publishSnapshotRow(client, id, written.manifest, written.diff, true);
      return written;
    });
    expect(manifest.product_count).toBe(4);
    const { rows: added } = await db.pool.query(
      "SELECT code, name, change FROM recent_changes WHERE snapshot = $1 ORDER BY code",
      [name],
    );
    const codes = [a!, b!, c!].map((p) => ({ code: p.code, name: p.name, change: "added" }));
    expect(added).toEqual(codes.sort((x, y) => (x.code < y.code ? -1 : 1)));
    // Both rows are kept, as products.json keeps both; the view shows the last one received.
    const { rows } = await db.pool.query("SELECT name FROM current_products WHERE code = $1", [
      a!.code,
    ]);
    expect(rows).toEqual([{ name: "The same code again" }]);
    const { rows: count } = await db.pool.query("SELECT count(*)::int AS n FROM current_products");
    expect(count[0].n).toBe(3);
    const index = (await loadCurrentIndex(store()))!;
    expect(index.entries[a!.code]?.name).toBe("The same code again");
  });

  it("a failing page publishes nothing: the previous snapshot stays current", async () => {
    const first = await sync();
    await control(fx.sandbox, "/_sandbox/faults", {
      product_page_fault: { after: cursorOfPage(fx.sandbox, 2), kind: "500" },
    });
    const error = await sync().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunError);
    expect((error as Error).message).toMatch(/page 2: .*; the current snapshot is unchanged$/);
    expect((await openCurrentSnapshot(store()))?.name).toBe(first.snapshot);
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM catalog_snapshots");
    expect(rows[0].n).toBe(1);
  });

  it("the shrink guard refuses as for files", async () => {
    const first = await sync();
    const keep = fx.sandbox.state.catalog.products.slice(0, 900);
    await control(fx.sandbox, "/_sandbox/catalog", { catalog: keep });
    const error = await sync().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ShrinkRefusedError);
    expect((await openCurrentSnapshot(store()))?.name).toBe(first.snapshot);
    expect((await sync({ allowShrink: true })).manifest.product_count).toBe(900);
  });

  it("PostgreSQL lost mid-sync: exit 1 in one line, nothing published, the previous current", async () => {
    const first = await sync();
    let killed: Promise<unknown> | undefined;
    const error = await sync({
      onProgress: ({ pages }) => {
        // Another connection ends the sync's own, as a server restart would.
        if (pages === 1) killed = terminateSyncBackend();
      },
    }).catch((e: unknown) => e);
    await killed;
    expect(error).toBeInstanceOf(RunError);
    expect((error as RunError).exitCode).toBe(1);
    expect((error as Error).message).toMatch(
      /^catalog sync failed: PostgreSQL at .* does not answer or went away: is it running\? \(GIFTJOBS_DATABASE_URL\); nothing was published and the current snapshot is unchanged$/,
    );
    expect((await openCurrentSnapshot(store()))?.name).toBe(first.snapshot);
    expect((await sync()).diff.from).toBe(first.snapshot);
  });

  it("two syncs at once: the second stops with one line, the first publishes", async () => {
    await control(fx.sandbox, "/_sandbox/faults", { latency_ms: 150 });
    let second: Promise<unknown> | undefined;
    const first = await sync({
      onProgress: ({ pages }) => {
        if (pages === 1) second = sync().catch((e: unknown) => e);
      },
    });
    const error = await second;
    expect(error).toBeInstanceOf(RunError);
    expect((error as Error).message).toBe(
      `another catalog sync is writing to PostgreSQL schema ${db.schema} (GIFTJOBS_DATABASE_URL); this one stopped and published nothing`,
    );
    expect((await openCurrentSnapshot(store()))?.name).toBe(first.snapshot);
  });
});

describe("the catalog in PostgreSQL reads as the files do", () => {
  it("the same catalog gives the same index, products and diff in both stores", async () => {
    await fx.sync();
    await sync();
    const code = fx.sandbox.state.catalog.products[7]!.code;
    await control(fx.sandbox, `/_sandbox/products/${code}`, {
      is_orderable: false,
      price_multiplier: "0.5",
    });
    await fx.sync();
    await sync();
    const files = (await openCurrentSnapshot(fx.dataDir))!;
    const rows = (await openCurrentSnapshot(store()))!;
    expect((await rows.index()).entries).toEqual((await files.index()).entries);
    const all = async (snapshot: typeof files) => {
      const out: unknown[] = [];
      for await (const product of snapshot.products()) out.push(product);
      return out;
    };
    expect(await all(rows)).toEqual(await all(files));
    const { from: _a, to: _b, ...fileDiff } = (await files.diff())!;
    const { from: _c, to: _d, ...dbDiff } = (await rows.diff())!;
    expect(dbDiff).toEqual(fileDiff);
    expect(rows.manifest).toMatchObject({
      // The checksum and size of the products as products.json holds them, in both stores.
      sha256: files.manifest.sha256,
      products_bytes: files.manifest.products_bytes,
      product_count: files.manifest.product_count,
      index_entries: files.manifest.index_entries,
      counts: files.manifest.counts,
      warnings: files.manifest.warnings,
    });
  });

  it("keeps every character of a record: tabs, newlines, backslashes, quotes", async () => {
    const products = fx.sandbox.state.catalog.products.slice(0, 3).map((p) => ({ ...p }));
    const odd = 'Tab\there\nnew line \\ back "quoted" \\N é 🎁';
    products[1] = { ...products[1]!, name: odd, description: "a\r\nb\\" } as (typeof products)[1];
    await control(fx.sandbox, "/_sandbox/catalog", { catalog: products });
    await sync();
    const read: { name: unknown }[] = [];
    for await (const product of (await openCurrentSnapshot(store()))!.products()) {
      read.push(product as unknown as { name: unknown });
    }
    expect(read).toEqual(JSON.parse(JSON.stringify(products)));
    const { rows } = await db.pool.query("SELECT name FROM current_products WHERE code = $1", [
      products[1]!.code,
    ]);
    expect(rows).toEqual([{ name: odd }]);
  });

  it("doctor's catalog check reads the database", async () => {
    const stores = Promise.resolve(pgStores(fx.dataDir, db.database));
    const before = await snapshotCheck(stores, 26);
    expect(before).toMatchObject({ ok: false });
    expect(before.detail).toBe(
      `no catalog snapshot in PostgreSQL schema ${db.schema} (GIFTJOBS_DATABASE_URL): run giftjobs catalog sync`,
    );
    const synced = await sync();
    const after = await snapshotCheck(stores, 26);
    expect(after).toMatchObject({ ok: true });
    expect(after.detail).toContain(`snapshot ${synced.snapshot} (1200 products)`);
  });
});

/** Terminates the backend holding this schema's catalog-sync advisory lock. */
async function terminateSyncBackend(): Promise<void> {
  await db.pool.query(
    `SELECT pg_terminate_backend(l.pid) FROM pg_locks l,
       (SELECT hashtextextended($1, 0) AS k) key
     WHERE l.locktype = 'advisory'
       AND l.classid = ((key.k >> 32) & 4294967295)::oid
       AND l.objid = (key.k & 4294967295)::oid`,
    [`giftjobs:${db.schema}:catalog-sync`],
  );
}
