// The order journal and the product overrides in PostgreSQL (migration 0002), each test in a
// schema of its own: the same answers as the file journal and the Redis overrides.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { DamagedFileError } from "../../src/catalog/damaged-file-error.js";
import { importFileJournals } from "../../src/db/journal-import.js";
import { openDatabase } from "../../src/db/open-database.js";
import { PgJournal } from "../../src/db/order-journal.js";
import { PgProductOverrides } from "../../src/db/product-overrides.js";
import type { JournalLine } from "../../src/orders/journal.js";
import { FileJournal } from "../../src/orders/journal-store.js";
import { orderKey } from "../../src/orders/keys.js";
import { useTestDatabase } from "../helpers/database.js";
import { expectNewestKept, expectNewestOfRace } from "../helpers/product-updates.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";

const CAMPAIGN = "spring";

function line(g: number, ids: string[], a?: string): JournalLine {
  const i = [...ids].sort();
  const k = orderKey(CAMPAIGN, g, i);
  return a ? { g, k, i, a } : { g, k, i };
}

/** What an index says of each identity: its order's generation and size. */
function described(index: Awaited<ReturnType<PgJournal["load"]>>, ids: string[]) {
  return ids.map((id) => {
    const at = index.lineOf(id);
    return at === undefined
      ? null
      : { g: index.generation(at), size: index.size(at), a: index.apiKey(at) ?? null };
  });
}

describe("the order journal in PostgreSQL", () => {
  const db = useTestDatabase("journal");

  it("reads back what was appended, in order, as the file journal does", async () => {
    const journal = new PgJournal(db.database);
    const dir = await tmpDir("pg-journal");
    try {
      const files = new FileJournal(dir);
      const lines = [
        line(0, ["r1", "r2", "r3"], "fp1"),
        line(0, ["r4"]),
        // r2 moved to generation 1 (a worker after a 4xx): it leaves the first order.
        line(1, ["r2"], "fp2"),
      ];
      for (const store of [journal, files]) {
        const writer = store.appender(CAMPAIGN);
        await writer.append(lines.slice(0, 2));
        await writer.close();
        await store.append(CAMPAIGN, lines.slice(2));
      }
      const ids = ["r1", "r2", "r3", "r4", "r5"];
      const fromDb = await journal.load(CAMPAIGN);
      const fromFile = await files.load(CAMPAIGN);
      expect(fromDb.lines).toBe(3);
      expect(described(fromDb, ids)).toEqual(described(fromFile, ids));
      expect(described(fromDb, ids)).toEqual([
        { g: 0, size: 2, a: "fp1" },
        { g: 1, size: 1, a: "fp2" },
        { g: 0, size: 2, a: "fp1" },
        { g: 0, size: 1, a: null },
        null,
      ]);
      expect(fromDb.path).toBe(`table ${db.schema}.order_journal of PostgreSQL, campaign spring`);
      // Another campaign's journal is its own.
      expect((await journal.load("autumn")).lines).toBe(0);
    } finally {
      await removeDir(dir);
    }
  });

  it("a voided generation change reads as never written, in the file and the table alike", async () => {
    const journal = new PgJournal(db.database);
    const dir = await tmpDir("pg-journal-void");
    try {
      const files = new FileJournal(dir);
      const moved = line(1, ["r2"], "fp2");
      const twice = line(1, ["r3"], "fp3");
      for (const store of [journal, files]) {
        await store.append(CAMPAIGN, [line(0, ["r1", "r2", "r3"], "fp1")]);
        // `orders retry --new-key` journals r2's move, then REKEY refuses it: voided.
        await store.append(CAMPAIGN, [moved]);
        await store.voidChange(CAMPAIGN, moved);
        // r3's move journaled by two processes at once; one REKEY done, the other refused.
        await store.append(CAMPAIGN, [twice]);
        await store.append(CAMPAIGN, [twice]);
        await store.voidChange(CAMPAIGN, twice);
        // r2's move tried again, and done this time: the same key, in effect.
        await store.append(CAMPAIGN, [moved]);
      }
      const ids = ["r1", "r2", "r3"];
      const fromDb = await journal.load(CAMPAIGN);
      const fromFile = await files.load(CAMPAIGN);
      expect(described(fromDb, ids)).toEqual([
        { g: 0, size: 1, a: "fp1" },
        { g: 1, size: 1, a: "fp2" },
        { g: 1, size: 1, a: "fp3" },
      ]);
      expect(described(fromFile, ids)).toEqual(described(fromDb, ids));
      expect([fromDb.lines, fromFile.lines]).toEqual([3, 3]);
      const text = await readFile(files.where(CAMPAIGN), "utf8");
      expect(text.split("\n").filter((l) => l.includes('"void"'))).toEqual([
        JSON.stringify({ g: 1, k: moved.k, i: moved.i, void: true }),
        JSON.stringify({ g: 1, k: twice.k, i: twice.i, void: true }),
      ]);

      // Only r2's first move voided: the table had its row deleted, and holds the rest.
      const { rows } = await db.pool.query(
        "SELECT order_key FROM order_journal WHERE campaign = $1 ORDER BY seq",
        [CAMPAIGN],
      );
      expect(rows.map((r) => r.order_key)).toEqual([line(0, ids).k, twice.k, moved.k]);
      // The file's journal moved into a database holds what the table does: no void rows.
      await db.pool.query("DELETE FROM order_journal");
      expect(await importFileJournals(dir, db.database)).toEqual([
        { campaign: CAMPAIGN, orders: 3, outcome: "moved" },
      ]);
      expect(described(await journal.load(CAMPAIGN), ids)).toEqual(described(fromFile, ids));
      expect(await importFileJournals(dir, db.database)).toEqual([
        { campaign: CAMPAIGN, orders: 3, outcome: "already" },
      ]);
    } finally {
      await removeDir(dir);
    }
  });

  it("keeps the lines' columns as written: identities as hashes, no e-mail", async () => {
    const journal = new PgJournal(db.database);
    await journal.append(CAMPAIGN, [line(0, ["h2", "h1"], "fp")]);
    const { rows } = await db.pool.query(
      "SELECT campaign, generation, order_key, identities, api_key_fingerprint FROM order_journal",
    );
    expect(rows).toEqual([
      {
        campaign: CAMPAIGN,
        generation: 0,
        order_key: orderKey(CAMPAIGN, 0, ["h1", "h2"]),
        identities: ["h1", "h2"],
        api_key_fingerprint: "fp",
      },
    ]);
  });

  it("reads a journal longer than a page", async () => {
    const journal = new PgJournal(db.database);
    const lines = Array.from({ length: 12_000 }, (_, n) => line(0, [`id${n}`]));
    await journal.append(CAMPAIGN, lines);
    const index = await journal.load(CAMPAIGN);
    expect(index.lines).toBe(12_000);
    expect(index.lineOf("id0")).toBe(0);
    expect(index.lineOf("id11999")).toBe(11_999);
  });

  it("refuses a line whose key is not its rows', naming the table and the row", async () => {
    const journal = new PgJournal(db.database);
    await journal.append(CAMPAIGN, [line(0, ["a"])]);
    // A row copied in by hand from another campaign's journal.
    await db.pool.query(
      "INSERT INTO order_journal (campaign, generation, order_key, identities) VALUES ($1, 0, $2, $3)",
      [CAMPAIGN, orderKey("autumn", 0, ["b"]), ["b"]],
    );
    const error = await journal.load(CAMPAIGN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DamagedFileError);
    expect((error as Error).message).toMatch(
      /order_journal of PostgreSQL, campaign spring line 2: its key is not the key of its rows in campaign spring/,
    );
  });

  it("keeps the tags marker of a campaign", async () => {
    const journal = new PgJournal(db.database);
    expect(await journal.hasTagsMarker(CAMPAIGN)).toBe(false);
    await journal.writeTagsMarker(CAMPAIGN);
    await journal.writeTagsMarker(CAMPAIGN);
    expect(await journal.hasTagsMarker(CAMPAIGN)).toBe(true);
    expect(await journal.hasTagsMarker("autumn")).toBe(false);
  });
});

describe("product overrides in PostgreSQL", () => {
  const db = useTestDatabase("overrides");

  it("keeps the newest state of each product: an older or as old one is stale", async () => {
    await expectNewestKept(new PgProductOverrides(db.database));
    // Applications ask the table which products are not orderable now.
    const { rows } = await db.pool.query(
      "SELECT product_code FROM product_overrides WHERE NOT is_orderable",
    );
    expect(rows).toEqual([{ product_code: "B" }]);
  });

  it("messages recorded at once on two pools, in any order, leave the newest", async () => {
    const other = await openDatabase(db.config);
    try {
      await expectNewestOfRace(new PgProductOverrides(db.database), new PgProductOverrides(other));
    } finally {
      await other.close();
    }
  });
});
