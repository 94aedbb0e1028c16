import { constants } from "node:fs";
import { appendFile, readdir, readFile, readlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DamagedFileError } from "../../src/catalog/damaged-file-error.js";
import { journalPath, OrderJournalWriter, voidLine } from "../../src/orders/journal.js";
import { JournalIndex } from "../../src/orders/journal-index.js";
import { orderKey } from "../../src/orders/keys.js";
import { packOrders } from "../helpers/packing.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const CAMPAIGN = "spring";

/** Identities as an import makes them: hashes, here of a number. */
function identities(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `ref:${String(i).padStart(6, "0")}x`);
}

/** A fixed shuffle, so runs are repeatable. */
function shuffled<T>(items: readonly T[]): T[] {
  return items
    .map((item, i) => ({ item, rank: (i * 7919) % items.length }))
    .sort((a, b) => a.rank - b.rank)
    .map((x) => x.item);
}

/** Packs as an import does and journals each order; returns the orders' keys. */
async function importOrders(writer: OrderJournalWriter, ids: string[], per: number) {
  const orders = packOrders(
    ids.map((identity) => ({ identity, currency: "EUR" })),
    per,
  );
  const lines = orders.map((o) => ({
    g: 0,
    k: orderKey(CAMPAIGN, 0, o.identities),
    i: o.identities,
  }));
  await writer.append(lines);
  return lines.map((l) => l.k);
}

/** The orders an import after a lost ledger rebuilds from the journal, by key. */
function rebuilt(index: JournalIndex, rows: string[]): string[] {
  for (const id of rows) index.note(id, true);
  const groups = new Map<number, string[]>();
  for (const id of rows) {
    const line = index.lineOf(id)!;
    expect(index.reproduces(line)).toBe(true);
    groups.set(line, [...(groups.get(line) ?? []), id]);
  }
  return [...groups].map(([line, ids]) => orderKey(CAMPAIGN, index.generation(line), ids)).sort();
}

describe("the order journal", () => {
  it("rebuilds the orders of two imports from a shuffled whole file, where packing anew would not", async () => {
    const dir = await tmpDir("journal");
    const path = journalPath(dir, CAMPAIGN);
    const all = identities(1000);
    // The file's first half (in file order, not sorted), then the other half appended.
    const firstHalf = shuffled(all).slice(0, 500);
    const secondHalf = all.filter((id) => !firstHalf.includes(id));
    const writer = new OrderJournalWriter(path);
    const keys = [
      ...(await importOrders(writer, firstHalf, 50)),
      ...(await importOrders(writer, secondHalf, 50)),
    ].sort();
    await writer.close();

    const index = await JournalIndex.load(path, CAMPAIGN);
    expect(index.lines).toBe(20);
    expect(rebuilt(index, shuffled(all).reverse())).toEqual(keys);
    expect(index.verdict()).toMatchObject({ reproduced: 1000, orders: 20, largest: 50 });
    // Without the journal, the whole file packed in one go gives other orders, other keys.
    const anew = packOrders(
      all.map((identity) => ({ identity, currency: "EUR" })),
      50,
    ).map((o) => orderKey(CAMPAIGN, 0, o.identities));
    expect(anew.filter((k) => keys.includes(k)).length).toBeLessThan(20);
  });

  it("counts a journal order with rows missing from the import, or known to the ledger", async () => {
    const dir = await tmpDir("journal-parts");
    const path = journalPath(dir, CAMPAIGN);
    const writer = new OrderJournalWriter(path);
    const ids = identities(30);
    await importOrders(writer, ids, 10);
    await writer.close();
    const index = await JournalIndex.load(path, CAMPAIGN);
    // Order 1 whole; order 2 one row short; order 3 with a row the ledger knows.
    for (const id of ids.slice(0, 19)) index.note(id, true);
    index.note(ids[20]!, false);
    for (const id of ids.slice(21)) index.note(id, true);
    expect(index.verdict()).toEqual({
      reproduced: 10,
      orders: 1,
      largest: 10,
      repacked: 9,
      incomplete: { rows: 9, orders: 1, missing: 1 },
    });
  });

  it("drops a torn last line when read, and cuts it before the next append", async () => {
    const dir = await tmpDir("journal-torn");
    const path = journalPath(dir, CAMPAIGN);
    const first = new OrderJournalWriter(path);
    const ids = identities(4);
    await importOrders(first, ids.slice(0, 2), 2);
    await first.close();
    // A crash during the write of the next batch: its flush never returned, RECORD never ran.
    await appendFile(path, '{"g":0,"k":"gj1_abc","i":["ref:0000');
    const index = await JournalIndex.load(path, CAMPAIGN);
    expect(index.lines).toBe(1);

    const next = new OrderJournalWriter(path);
    await importOrders(next, ids.slice(2), 2);
    await next.close();
    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines).toHaveLength(3);
    expect(lines.at(-1)).toBe("");
    expect((await JournalIndex.load(path, CAMPAIGN)).lines).toBe(2);
  });

  // Linux tells an open file's flags in /proc; elsewhere the writer may fall back to a datasync.
  it.runIf(process.platform === "linux")(
    "appends through a file opened O_APPEND | O_DSYNC: each write is on disk when it returns",
    async () => {
      const dir = await tmpDir("journal-dsync");
      const path = journalPath(dir, CAMPAIGN);
      const writer = new OrderJournalWriter(path);
      await importOrders(writer, identities(2), 1);
      try {
        const flags = await openFlags(path);
        expect(flags & constants.O_DSYNC).toBe(constants.O_DSYNC);
        expect(flags & constants.O_APPEND).toBe(constants.O_APPEND);
      } finally {
        await writer.close();
      }
      expect(await readFile(path, "utf8")).toMatch(/^(\{[^\n]+\}\n){2}$/);
    },
  );

  it("refuses a damaged line, and a journal of another campaign, naming file and line", async () => {
    const dir = await tmpDir("journal-bad");
    const path = join(dir, "orders.ndjson");
    const good = JSON.stringify({ g: 0, k: orderKey(CAMPAIGN, 0, ["a"]), i: ["a"] });
    await writeFile(path, `${good}\nnot json\n${good}\n`);
    const damaged = await JournalIndex.load(path, CAMPAIGN).catch((e: unknown) => e);
    expect(damaged).toBeInstanceOf(DamagedFileError);
    expect((damaged as Error).message).toMatch(/orders\.ndjson line 2: not valid JSON/);

    await writeFile(path, `${good}\n`);
    const other = await JournalIndex.load(path, "autumn").catch((e: unknown) => e);
    expect((other as Error).message).toMatch(
      /line 1: its key is not the key of its rows in campaign autumn/,
    );
  });

  it("reads a voided generation change as never written; a void line takes only a line before it", async () => {
    const dir = await tmpDir("journal-void");
    const path = journalPath(dir, CAMPAIGN);
    const ids = identities(3);
    const writer = new OrderJournalWriter(path);
    await importOrders(writer, ids, 3);
    // The rows' move to generation 1, journaled, then its REKEY refused: voided.
    const moved = { g: 1, k: orderKey(CAMPAIGN, 1, ids), i: ids };
    await writer.append([moved]);
    await writer.append([voidLine(moved)]);
    // A void line of generation 2 with no line before it (written by hand): it takes nothing,
    // not the line written after it.
    const later = { g: 2, k: orderKey(CAMPAIGN, 2, ids.slice(0, 1)), i: ids.slice(0, 1) };
    await writer.append([voidLine(later), later]);
    await writer.close();
    const index = await JournalIndex.load(path, CAMPAIGN);
    expect(index.lines).toBe(2);
    // Rows 2 and 3 stay in the imported order (row 1 moved to generation 2), at generation 0.
    expect(rebuilt(index, ids.slice(1))).toEqual([orderKey(CAMPAIGN, 0, ids.slice(1))]);
    expect(index.generation(index.lineOf(ids[0]!)!)).toBe(2);
    expect([1, 2, 3, 4, 5].map((n) => index.leftOut(n))).toEqual([false, true, true, true, false]);
    expect(index.lastLine).toBe(5);

    // Without the void line the rows would be rebuilt under the key never sent.
    const lines = (await readFile(path, "utf8")).split("\n");
    await writeFile(path, `${lines[0]}\n${lines[1]}\n`);
    const unvoided = await JournalIndex.load(path, CAMPAIGN);
    expect(rebuilt(unvoided, ids)).toEqual([moved.k]);

    // A void mark that is not `true` is a damaged line.
    await writeFile(path, `${lines[0]}\n${JSON.stringify({ ...moved, void: "yes" })}\n`);
    const damaged = await JournalIndex.load(path, CAMPAIGN).catch((e: unknown) => e);
    expect((damaged as Error).message).toMatch(/line 2: not an order as written/);
  });

  it("is empty when there is no journal yet", async () => {
    const dir = await tmpDir("journal-none");
    const index = await JournalIndex.load(journalPath(dir, CAMPAIGN), CAMPAIGN);
    expect(index.lines).toBe(0);
    expect(index.lineOf("ref:x")).toBeUndefined();
  });
});

/** The flags (open(2)) of this process's descriptor open on `path`, as Linux's /proc tells them. */
async function openFlags(path: string): Promise<number> {
  for (const fd of await readdir("/proc/self/fd")) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
    if (target !== path) continue;
    const info = await readFile(`/proc/self/fdinfo/${fd}`, "utf8");
    const octal = /^flags:\s+([0-7]+)$/m.exec(info)?.[1];
    if (octal !== undefined) return Number.parseInt(octal, 8);
  }
  throw new Error(`${path} is not open`);
}
