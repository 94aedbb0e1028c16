import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { databaseAddress } from "../../src/db/database-error.js";
import { databaseCheck } from "../../src/doctor/database-check.js";
import { runDoctor } from "../../src/doctor/run-doctor.js";
import { TEST_DATABASE_URL, useTestDatabase } from "../helpers/database.js";
import { freePort } from "../helpers/free-port.js";
import { REDIS_URL, uniquePrefix } from "../helpers/redis.js";
import { removeDir, tmpDir } from "../helpers/tmp-dir.js";

const where = `PostgreSQL at ${databaseAddress(TEST_DATABASE_URL)}`;

describe("giftjobs doctor: PostgreSQL, when GIFTJOBS_DATABASE_URL is set", () => {
  describe("a migrated schema", () => {
    const db = useTestDatabase("doctor_db");

    it("answers and is migrated: one line saying so", async () => {
      const check = await databaseCheck(db.config);
      expect(check?.ok).toBe(true);
      expect(check?.detail).toMatch(
        new RegExp(`^${where} answers; schema ${db.schema} is migrated \\(version \\d+\\)$`),
      );
    });

    it("is a line of doctor's only with the setting, between the service and the catalog", async () => {
      const dataDir = await tmpDir("doctor-db");
      try {
        const env = {
          GIFTJOBS_REDIS_URL: REDIS_URL,
          GIFTJOBS_PREFIX: uniquePrefix("doctor-db"),
          GIFTJOBS_DATA_DIR: dataDir,
          GIFTJOBS_API_URL: `http://127.0.0.1:${await freePort()}`,
        };
        const names = async (extra: Record<string, string>) =>
          (
            await runDoctor({
              config: loadConfig({ env: { ...env, ...extra } }),
              serviceTimeoutMs: 500,
            })
          ).checks
            .map((c) => c.name)
            .filter((name) => ["service", "database", "catalog", "paid-memory"].includes(name));
        expect(await names({})).toEqual(["service", "catalog", "paid-memory"]);
        expect(await names(db.env)).toEqual(["service", "database", "catalog", "paid-memory"]);
      } finally {
        await removeDir(dataDir);
      }
    });
  });

  describe("a schema not migrated", () => {
    const db = useTestDatabase("doctor_db_new", { migrated: false });

    it("fails, naming giftjobs db migrate", async () => {
      const check = await databaseCheck(db.config);
      expect(check?.ok).toBe(false);
      expect(check?.detail).toMatch(
        new RegExp(
          `^${where} answers but its schema ${db.schema} is at version 0, this giftjobs needs \\d+: run giftjobs db migrate$`,
        ),
      );
    });
  });

  it("fails in one line when PostgreSQL does not answer", async () => {
    const url = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
    const check = await databaseCheck({ databaseUrl: url, databaseSchema: "giftjobs" }, 1000);
    expect(check?.ok).toBe(false);
    expect(check?.detail).toMatch(/does not answer/);
    expect(check?.detail).not.toContain("\n");
  });

  it("is no check at all without the setting", async () => {
    expect(await databaseCheck({ databaseUrl: undefined, databaseSchema: "giftjobs" })).toBe(
      undefined,
    );
  });
});
