import { afterEach, describe, expect, it } from "vitest";
import { paidMemoryCheck } from "../../src/doctor/paid-memory-check.js";
import type { NewPaidEntry } from "../../src/orders/paid-memory.js";
import { fileStores } from "../../src/stores/file-stores.js";
import { pgStores } from "../../src/stores/pg-stores.js";
import { openStores } from "../../src/stores/stores.js";
import { createTestDatabase, dropTestDatabase, type TestDatabase } from "../helpers/database.js";
import { tmpDir } from "../helpers/tmp-dir.js";

const DAY_MS = 86_400_000;

let db: TestDatabase | undefined;
afterEach(async () => {
  if (db) await dropTestDatabase(db);
  db = undefined;
});

function entry(n: number): NewPaidEntry {
  return {
    fingerprint: `fp-${n}`,
    identity: `ref:${n}`,
    line: n + 1,
    currency: "USD",
    face: "1000",
  };
}

describe("doctor's paid-memory check", () => {
  for (const store of ["files", "PostgreSQL"] as const)
    it(`says how much is kept past GIFTJOBS_REPEAT_WINDOW_DAYS, and fails past it by over a day (${store})`, async () => {
      if (store === "PostgreSQL") db = await createTestDatabase("doctor-paid");
      const config = {
        dataDir: await tmpDir("doctor-paid"),
        databaseUrl: db?.config.databaseUrl,
        databaseSchema: db?.config.databaseSchema ?? "giftjobs",
      };
      const stores = db ? pgStores(config.dataDir, db.database) : fileStores(config.dataDir);
      const memory = stores.paidMemory;
      const appender = memory.appender("gifts");
      await appender.append([entry(1), entry(2)]);
      await appender.close();
      await memory.recordFile("gifts", "abc", 2);
      // The clock moved on instead of the entries back.
      const at = (days: number) =>
        paidMemoryCheck(Promise.resolve(stores), 90, Date.now() + days * DAY_MS);

      expect(await at(10)).toEqual({
        name: "paid-memory",
        ok: true,
        detail: "nothing recorded more than 90 days ago is kept (GIFTJOBS_REPEAT_WINDOW_DAYS=90)",
      });
      expect(await at(90.5)).toEqual({
        name: "paid-memory",
        ok: true,
        detail:
          "2 entries and 1 imported file recorded more than 90 days ago are kept, none for over a day: the worker's nightly job prunes them (GIFTJOBS_REPEAT_WINDOW_DAYS=90)",
      });
      expect(await at(92)).toEqual({
        name: "paid-memory",
        ok: false,
        detail:
          "2 entries and 1 imported file recorded more than 90 days ago are kept, 2 entries and 1 imported file for over a day: is the nightly job running? (a worker serving the maintenance queue) (GIFTJOBS_REPEAT_WINDOW_DAYS=90)",
      });
      await memory.prune(Date.now() + 2 * DAY_MS);
      expect((await at(92)).ok).toBe(true);
    });

  it("says it was not checked when PostgreSQL does not answer", async () => {
    const opening = openStores({
      dataDir: await tmpDir("doctor-paid-down"),
      databaseUrl: "postgres://postgres@127.0.0.1:1/postgres",
      databaseSchema: "giftjobs",
    });
    const check = await paidMemoryCheck(opening, 90);
    expect(check.ok).toBe(false);
    expect(check.detail).toMatch(/^not checked: /);
  });
});
