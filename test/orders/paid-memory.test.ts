import { appendFileSync, existsSync } from "node:fs";
import { appendFile, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { DamagedFileError } from "../../src/catalog/damaged-file-error.js";
import { withFileLock } from "../../src/catalog/file-lock.js";
import { loadConfig } from "../../src/config.js";
import { PgPaidMemory } from "../../src/db/paid-memory.js";
import { pruneFile } from "../../src/orders/paid-files.js";
import { paidFingerprint } from "../../src/orders/paid-fingerprint.js";
import {
  FilePaidMemory,
  type NewPaidEntry,
  type PaidMemory,
} from "../../src/orders/paid-memory.js";
import { row } from "../helpers/csv.js";
import { createTestDatabase, dropTestDatabase, type TestDatabase } from "../helpers/database.js";
import { tmpDir } from "../helpers/tmp-dir.js";
import { eventually, holdsFor } from "../helpers/wait-for.js";

const DAY_MS = 86_400_000;

let db: TestDatabase | undefined;
afterEach(async () => {
  vi.useRealTimers();
  if (db) await dropTestDatabase(db);
  db = undefined;
});

function entry(n: number, fingerprint = `fp-${n}`): NewPaidEntry {
  return { fingerprint, identity: `ref:${n}`, line: n + 1, currency: "USD", face: "1000" };
}

describe("the paid fingerprint", () => {
  it("is who is paid what: the file's spelling, line, description and metadata do not count", () => {
    const base = row({ email: "Jane@Example.com", product_code: "P1", face_value: "25.00" });
    const same = paidFingerprint(base, "USD");
    expect(same).toBeDefined();
    const respelt = row({
      email: "  jane@example.com ",
      product_code: "P1",
      face_value: "25",
      line: 90,
      description: "other",
      metadata: { team: "x" },
      reference: "another",
    });
    expect(paidFingerprint(respelt, "USD")).toBe(same);
    for (const other of [
      row({ ...base, email: "john@example.com" }),
      row({ ...base, product_code: "P2" }),
      row({ ...base, face_value: "50.00" }),
    ])
      expect(paidFingerprint(other, "USD")).not.toBe(same);
    expect(paidFingerprint(base, "EUR")).not.toBe(same);
    // A choice in any order is one choice; a link row is its reference's, or nobody's.
    const choice = (codes: string[]) =>
      paidFingerprint(row({ ...base, product_code: "", product_codes: codes }), "USD");
    expect(choice(["A", "B"])).toBe(choice(["B", "A"]));
    const link = { ...base, email: "", distribution: "link" as const };
    expect(paidFingerprint(row({ ...link, reference: "L-1" }), "USD")).toBeDefined();
    expect(paidFingerprint(row(link), "USD")).toBeUndefined();
  });
});

describe("the paid memory in files", () => {
  it("finds other campaigns' rows in the window, not the campaign's own, nor older ones", async () => {
    const memory = new FilePaidMemory(await tmpDir("paid-memory"));
    const a = memory.appender("a");
    await a.append([entry(1), entry(2)]);
    await a.close();
    const b = memory.appender("b");
    await b.append([entry(2)]);
    await b.close();
    const lookup = await memory.lookup("b", 0);
    const found = await lookup.find(["fp-1", "fp-2", "fp-3", undefined]);
    expect(found.map((list) => list.map((e) => [e.campaign, e.line]))).toEqual([
      [["a", 2]],
      [["a", 3]],
      [],
      [],
    ]);
    // A window that starts after they were recorded sees none of them.
    const later = await memory.lookup("b", Date.now() + 1000);
    expect((await later.find(["fp-1"]))[0]).toEqual([]);
    expect((await memory.campaigns()).sort()).toEqual(["a", "b"]);
  });

  it("skips a last line torn by a crash; a damaged line names its file and line", async () => {
    const dir = await tmpDir("paid-torn");
    const memory = new FilePaidMemory(dir);
    const a = memory.appender("a");
    await a.append([entry(1)]);
    await a.close();
    const path = join(dir, "campaigns", "a", "paid.ndjson");
    await appendFile(path, '{"t":1,"r":[["fp-9"');
    expect(
      (await (await memory.lookup("b", 0)).find(["fp-1", "fp-9"])).map((l) => l.length),
    ).toEqual([1, 0]);
    // The next append cuts the torn line first (as the journal's writer does).
    const again = memory.appender("a");
    await again.append([entry(3)]);
    await again.close();
    expect((await readFile(path, "utf8")).trimEnd().split("\n")).toHaveLength(2);
    await appendFile(path, "not json\n");
    await expect(memory.lookup("b", 0)).rejects.toThrow(DamagedFileError);
    await expect(memory.lookup("b", 0)).rejects.toThrow(/paid\.ndjson.*line 3/);
  });

  it("names the imports of the same file's bytes into other campaigns", async () => {
    const memory = new FilePaidMemory(await tmpDir("paid-files"));
    await memory.recordFile("a", "abc", 5);
    await memory.recordFile("b", "abc", 5);
    await memory.recordFile("c", "other", 1);
    const like = await memory.filesLike("abc", "b", 0);
    expect(like.map((f) => [f.campaign, f.rows])).toEqual([["a", 5]]);
  });
});

/** Runs `fn` with the clock `daysAgo` days back: what it records is that old. */
async function daysAgo<T>(days: number, fn: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Date.now() - days * DAY_MS);
  try {
    return await fn();
  } finally {
    vi.useRealTimers();
  }
}

async function append(memory: PaidMemory, campaign: string, entries: NewPaidEntry[]) {
  const appender = memory.appender(campaign);
  try {
    await appender.append(entries);
  } finally {
    await appender.close();
  }
}

/** The campaigns each fingerprint is found in, looked up from campaign `x`, all time. */
async function foundIn(memory: PaidMemory, fingerprints: string[]): Promise<string[][]> {
  const found = await (await memory.lookup("x", 0)).find(fingerprints);
  return found.map((list) => list.map((e) => e.campaign).sort());
}

describe("pruning the paid memory in files", () => {
  it("removes what was recorded before the time, keeps the newer; a file left empty goes; a torn last line goes with the rewrite", async () => {
    const dir = await tmpDir("paid-prune");
    const memory = new FilePaidMemory(dir);
    await daysAgo(100, async () => {
      await append(memory, "old", [entry(1), entry(2)]);
      await memory.recordFile("old", "sha-old", 2);
      await append(memory, "mixed", [entry(3)]);
      await memory.recordFile("mixed", "sha-mixed-1", 1);
    });
    await append(memory, "mixed", [entry(4), entry(5, "fp-1")]);
    await memory.recordFile("mixed", "sha-mixed-2", 2);
    await append(memory, "new", [entry(6)]);
    const mixed = join(dir, "campaigns", "mixed");
    await appendFile(join(mixed, "paid.ndjson"), '{"t":1,"r":[["fp-9"');
    const before = Date.now() - 90 * DAY_MS;
    const newFiles = await readFile(join(dir, "campaigns", "new", "paid.ndjson"), "utf8");

    expect(await memory.countBefore(before)).toEqual({ entries: 3, imports: 2 });
    expect(await memory.prune(before)).toEqual({ entries: 3, imports: 2 });
    // Nothing left of "old" but its folder; "mixed" keeps its newer lines, whole, as they were.
    expect(await readdir(join(dir, "campaigns", "old"))).toEqual([]);
    expect(await readdir(mixed)).toEqual(["imports.ndjson", "paid.ndjson"]);
    const paid = await readFile(join(mixed, "paid.ndjson"), "utf8");
    expect(paid.endsWith("\n")).toBe(true);
    expect(
      paid
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l).r.length),
    ).toEqual([2]);
    expect((await stat(join(mixed, "paid.ndjson"))).mode & 0o777).toBe(0o600);
    const imports = await readFile(join(mixed, "imports.ndjson"), "utf8");
    expect(
      imports
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l).sha256),
    ).toEqual(["sha-mixed-2"]);
    // A file with nothing old is not rewritten.
    expect(await readFile(join(dir, "campaigns", "new", "paid.ndjson"), "utf8")).toBe(newFiles);

    expect(await foundIn(memory, ["fp-1", "fp-2", "fp-3", "fp-4", "fp-6", "fp-9"])).toEqual([
      ["mixed"],
      [],
      [],
      ["mixed"],
      ["new"],
      [],
    ]);
    expect(await memory.filesLike("sha-old", "x", 0)).toEqual([]);
    expect((await memory.filesLike("sha-mixed-2", "x", 0)).map((f) => f.rows)).toEqual([2]);
    expect(await memory.prune(before)).toEqual({ entries: 0, imports: 0 });
    expect((await memory.campaigns()).sort()).toEqual(["mixed", "new", "old"]);
  });

  it("an import's appender open across a prune appends to the file the prune left, or a new one", async () => {
    const dir = await tmpDir("paid-prune-open");
    const memory = new FilePaidMemory(dir);
    const whole = memory.appender("whole");
    const part = memory.appender("part");
    try {
      await daysAgo(100, async () => {
        await whole.append([entry(1)]);
        await part.append([entry(2)]);
      });
      await part.append([entry(3)]);
      expect(await memory.prune(Date.now() - 90 * DAY_MS)).toEqual({ entries: 2, imports: 0 });
      // "whole"'s file was removed, "part"'s replaced: the next batches land in the files there.
      await whole.append([entry(4)]);
      await part.append([entry(5)]);
    } finally {
      await whole.close();
      await part.close();
    }
    expect(await foundIn(memory, ["fp-1", "fp-2", "fp-3", "fp-4", "fp-5"])).toEqual([
      [],
      [],
      ["part"],
      ["whole"],
      ["part"],
    ]);
  });

  it("an import's appends hold the lock as a lease: given back when they stop, and to a waiter while they go on", async () => {
    const dir = await tmpDir("paid-lease");
    const memory = new FilePaidMemory(dir);
    const appender = memory.appender("a");
    const lock = join(dir, "campaigns", "a", "paid-memory.lock");
    let n = 1;
    try {
      await appender.append([entry(n)]);
      // Still held after the append: the next batch's append takes no lock of its own.
      expect(existsSync(lock)).toBe(true);
      await eventually(async () => !existsSync(lock), "the lock given back once no append comes");
      n += 1;
      await appender.append([entry(n)]);
      const heldFrom = n;
      let waited = false;
      const waiter = withFileLock(lock, "the test's lock", async () => {
        waited = true;
      });
      // The waiter gets its turn while the appends go on (the lease yields after two seconds).
      while (!waited) {
        n += 1;
        if (n > 20_000) throw new Error("the waiter never got the lock");
        await appender.append([entry(n)]);
      }
      await waiter;
      // Not one waiter's turn a batch: the lease went on across many appends first.
      expect(n - heldFrom).toBeGreaterThan(10);
      n += 1;
      await appender.append([entry(n)]);
    } finally {
      await appender.close();
    }
    expect(existsSync(lock)).toBe(false);
    const fingerprints = Array.from({ length: n }, (_, i) => `fp-${i + 1}`);
    expect(await foundIn(memory, fingerprints)).toEqual(fingerprints.map(() => ["a"]));
  });

  it("waits for the campaign's lock, which each append holds", async () => {
    const dir = await tmpDir("paid-prune-lock");
    const memory = new FilePaidMemory(dir);
    await daysAgo(100, () => append(memory, "a", [entry(1)]));
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const lock = join(dir, "campaigns", "a", "paid-memory.lock");
    const holding = withFileLock(lock, "the test's lock", () => held);
    await eventually(async () => existsSync(lock), "the test's lock taken");
    let pruned = false;
    const pruning = memory.prune(Date.now() - DAY_MS).then(() => {
      pruned = true;
    });
    await holdsFor(async () => !pruned, 200, "the prune waiting for the lock");
    expect(await foundIn(memory, ["fp-1"])).toEqual([["a"]]);
    release();
    await holding;
    await pruning;
    expect(await foundIn(memory, ["fp-1"])).toEqual([[]]);
  });

  it("leaves a file that changed while it was pruned (its lock taken over) as it was, and fails", async () => {
    const path = join(await tmpDir("paid-prune-changed"), "paid.ndjson");
    const line = (t: number, n: number) =>
      `${JSON.stringify({ t, r: [[`fp-${n}`, "i", n, "USD", "1"]] })}\n`;
    const text = line(1, 1) + line(Date.now(), 2);
    await writeFile(path, text);
    let appended = "";
    // Called while the prune reads the file: another host's import appending meanwhile.
    const weigh = () => {
      if (appended === "") {
        appended = line(Date.now(), 3);
        appendFileSync(path, appended);
      }
      return 1;
    };
    await expect(pruneFile(path, Date.now() - DAY_MS, weigh)).rejects.toThrow(
      /paid\.ndjson changed while it was pruned \(its lock taken over\?\): left as it was/,
    );
    expect(await readFile(path, "utf8")).toBe(text + appended);
    expect(await readdir(join(path, ".."))).toEqual(["paid.ndjson"]);
  });
});

describe("the paid memory in PostgreSQL", () => {
  it("has paid_rows analyzed when an import appended many rows, so the next lookup takes the fingerprint index", async () => {
    db = await createTestDatabase("paid-analyze");
    const memory = new PgPaidMemory(db.database);
    const tuples = async () =>
      Number(
        (await db!.pool.query("SELECT reltuples FROM pg_class WHERE oid = 'paid_rows'::regclass"))
          .rows[0].reltuples,
      );
    // A few rows: no analyze (a table never analyzed says -1).
    await append(memory, "small", [entry(1), entry(2)]);
    expect(await tuples()).toBe(-1);
    const appender = memory.appender("big");
    for (let batch = 0; batch < 20; batch++)
      await appender.append(Array.from({ length: 500 }, (_, i) => entry(batch * 500 + i)));
    await appender.close();
    expect(await tuples()).toBe(10_002);
    const plan = await db.pool.query(
      "EXPLAIN SELECT * FROM paid_rows WHERE fingerprint = ANY($1) AND campaign <> 'x' AND recorded_at >= to_timestamp(0)",
      [["fp-1", "fp-2"]],
    );
    expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("paid_rows_fingerprint");
  });
});

describe("pruning the paid memory in PostgreSQL", () => {
  it("removes what was recorded before the time in one transaction, keeps the newer", async () => {
    db = await createTestDatabase("paid-prune");
    const memory = new PgPaidMemory(db.database);
    await append(memory, "old", [entry(1), entry(2)]);
    await memory.recordFile("old", "sha-old", 2);
    await append(memory, "mixed", [entry(3)]);
    await memory.recordFile("mixed", "sha-mixed-1", 1);
    // PostgreSQL stamps rows itself (now()): the old ones are made old by hand.
    await db.pool.query(
      "UPDATE paid_rows SET recorded_at = now() - interval '100 days' WHERE campaign IN ('old', 'mixed')",
    );
    await db.pool.query(
      "UPDATE imported_files SET imported_at = now() - interval '100 days' WHERE campaign IN ('old', 'mixed')",
    );
    await append(memory, "mixed", [entry(4), entry(5, "fp-1")]);
    await memory.recordFile("mixed", "sha-mixed-2", 2);
    const before = Date.now() - 90 * DAY_MS;

    expect(await memory.countBefore(before)).toEqual({ entries: 3, imports: 2 });
    expect(await memory.prune(before)).toEqual({ entries: 3, imports: 2 });
    expect(await foundIn(memory, ["fp-1", "fp-2", "fp-3", "fp-4"])).toEqual([
      ["mixed"],
      [],
      [],
      ["mixed"],
    ]);
    expect(await memory.filesLike("sha-old", "x", 0)).toEqual([]);
    expect((await memory.filesLike("sha-mixed-2", "x", 0)).map((f) => f.rows)).toEqual([2]);
    expect(await memory.countBefore(before)).toEqual({ entries: 0, imports: 0 });
    expect(await memory.prune(before)).toEqual({ entries: 0, imports: 0 });
  });
});

describe("GIFTJOBS_REPEAT_WINDOW_DAYS", () => {
  it("is 90 days unless set, a whole number of at least 1", () => {
    expect(loadConfig({ env: {} }).repeatWindowDays).toBe(90);
    expect(loadConfig({ env: { GIFTJOBS_REPEAT_WINDOW_DAYS: "30" } }).repeatWindowDays).toBe(30);
    expect(() => loadConfig({ env: { GIFTJOBS_REPEAT_WINDOW_DAYS: "0" } })).toThrow(
      /GIFTJOBS_REPEAT_WINDOW_DAYS: must be at least 1/,
    );
  });
});
